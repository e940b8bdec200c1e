from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dedup_site.cli import ProgressBar
from screening.ingest import detection, uploads


class Command(BaseCommand):
    help = "Import a file (.zip of .txt, .txt, .jsonl, .csv) into a corpus, created if new. All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--language", default="", help="language of records that do not give one")

    def handle(self, *args, **options):
        path: Path = options["path"]
        if not path.exists():
            raise CommandError(f"{path}: no such file")
        if not path.is_file():
            raise CommandError(f"{path}: not a regular file (a directory, device or pipe cannot be imported)")
        try:
            upload = uploads.upload_create_from_path(
                corpus_name=options["corpus"], path=path, language=options["language"]
            )
        except uploads.UploadRefused as error:
            raise CommandError(str(error)) from error
        bar = ProgressBar(getattr(self.stderr, "_out", self.stderr), path.name)
        upload = uploads.upload_process(upload=upload, on_progress=lambda fraction: bar.draw(fraction, "read"),
                                        check_follows=True)
        bar.close()
        for notice in upload.notices:
            self.stdout.write(f"note: {notice}")
        if upload.status == upload.Status.FAILED:
            raise CommandError(f"{upload.error}; no document was added")
        if upload.status != upload.Status.COMPLETE:
            # One line per rule broken, with its count and the first places (not 3,000 copies of one line).
            for group in upload.problem_groups:
                field = f"field {group['field']}: " if group["field"] else ""
                self.stderr.write(f"{field}{group['rule']} — {group['count']} time(s), e.g.:")
                for example in group["examples"]:
                    self.stderr.write(f"  {example}")
            raise CommandError(f"{path.name} rejected: {upload.problem_count} problem(s); no document was added")
        self.stdout.write(f"{path.name}: {upload.document_count} documents added to corpus {upload.corpus.name} "
                          f"(source SHA-256 {upload.source.sha256})")
        upload = detection.upload_language_check(upload=upload)
        for m in upload.language_mismatches:
            self.stdout.write(f"language: {m['place']} ({m['doc_id']}) is tagged {m['tag']} but reads as "
                              f"{m['detected']} ({m['confidence']:.2f})")
