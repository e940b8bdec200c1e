from django.core.management.base import BaseCommand, CommandError

from dedup_site import buckets
from screening.ingest import uploads
from screening.models import SourceFile


class Command(BaseCommand):
    help = ("Re-hash every stored source (file or bucket object); exit non-zero if any changed, vanished or "
            "became writable.")

    def handle(self, *args, **options):
        try:
            bad = uploads.sources_verify()
        except buckets.BucketError as error:
            raise CommandError(f"the stored sources could not be checked: {error}") from error
        for source, problem in bad:
            names = ", ".join(sorted({u.original_name for u in source.uploads.all()}))
            self.stderr.write(f"{source.sha256} ({names}): {problem}")
        total = SourceFile.objects.count()
        if bad:
            raise CommandError(f"{len(bad)} of {total} stored source files failed verification")
        self.stdout.write(f"all {total} stored source files verified")
