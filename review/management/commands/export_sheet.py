from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dedup_site import buckets
from dedup_site.trail import command_line
from review.services import ReviewRefused
from review.sheets import sheet_exports
from screening.models import ScreeningRun


class Command(BaseCommand):
    help = "Export a run's signed review sheet: FILE.csv and FILE.manifest.json beside it."

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)
        parser.add_argument("--out", type=Path, required=True)
        parser.add_argument("--since", type=date.fromisoformat, help="reviewed on or after (YYYY-MM-DD, UTC)")
        parser.add_argument("--until", type=date.fromisoformat, help="reviewed on or before")
        parser.add_argument("--reviewer", default="", help="only this reviewer's judgements")
        parser.add_argument("--settled-only", action="store_true")

    def handle(self, *args, **options):
        try:
            run = ScreeningRun.objects.get(pk=options["run"])
        except ScreeningRun.DoesNotExist as error:
            raise CommandError(f"no run {options['run']}") from error
        selection = sheet_exports.Selection(since=options["since"], until=options["until"],
                                            reviewer=options["reviewer"], settled_only=options["settled_only"])
        try:
            with command_line("export_sheet"):
                export = sheet_exports.sheet_export_create(run=run, selection=selection)
        except ReviewRefused as error:
            raise CommandError(str(error)) from error
        try:
            export = sheet_exports.sheet_export_build(export=export)
        except buckets.BucketError as error:
            sheet_exports.sheet_export_fail(export_id=export.pk, error=str(error))
            raise CommandError(f"export {export.pk} failed (it can be run again): {error}") from error
        out: Path = options["out"]
        manifest_out = out.with_name(out.stem + ".manifest.json")
        for part, target in (("csv", out), ("manifest", manifest_out)):
            with open(target, "wb") as stream:
                for chunk in sheet_exports.export_chunks(export, part):
                    stream.write(chunk)
        self.stdout.write(f"export {export.pk}: {export.row_count} rows to {out} (SHA-256 {export.csv_sha256}), "
                          f"signed manifest {manifest_out}")
