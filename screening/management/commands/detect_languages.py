from django.core.management.base import BaseCommand

from screening.ingest import detection
from screening.models import Upload


class Command(BaseCommand):
    help = ("Detect the language of every document not checked yet (those imported before the language check) "
            "and list, per upload, the documents whose tag disagrees with a confident detection.")

    def add_arguments(self, parser):
        parser.add_argument("--corpus", default="", help="only this corpus")

    def handle(self, *args, **options):
        pending = list(Upload.objects.filter(status=Upload.Status.COMPLETE, language_checked_at__isnull=True)
                       .values_list("pk", flat=True))
        count = detection.language_check_pending(corpus_name=options["corpus"])
        for upload in Upload.objects.filter(pk__in=pending, language_checked_at__isnull=False).order_by("pk"):
            self.stdout.write(f"{upload.original_name} → {upload.corpus.name}: "
                              f"{upload.language_mismatch_count} tag(s) disagree with the text")
        self.stdout.write(f"{count} document(s) checked")
