import csv
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dedup_site.csvcells import neutralise
from screening import runs
from screening.models import ScreeningRun


class Command(BaseCommand):
    help = "Write a complete run's candidate pairs as CSV (left_id,right_id,pass,jaccard,minhash_estimate,...)."

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)
        parser.add_argument("--out", type=Path, required=True)

    def handle(self, *args, **options):
        try:
            run = ScreeningRun.objects.get(pk=options["run"])
        except ScreeningRun.DoesNotExist as error:
            raise CommandError(f"no run {options['run']}") from error
        if run.status != ScreeningRun.Status.COMPLETE:
            raise CommandError(f"run {run.pk} is {run.status}; only a complete run has pairs to export")
        runs.run_evidence_complete(run=run)  # pairs below the threshold get their token diff first
        count = 0
        with open(options["out"], "w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out, lineterminator="\r\n")
            writer.writerow(runs.PAIR_COLUMNS)
            for row in runs.pair_rows(run):
                writer.writerow([neutralise(cell) for cell in row])
                count += 1
        self.stdout.write(f"{count} pairs of run {run.pk} written to {options['out']}")
