import json

from django.core.management.base import BaseCommand, CommandError

from screening import evaluation
from screening.models import LabelSet, ScreeningRun


def fmt(value) -> str:
    return "" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Evaluate a run against a label set: tp, fp, fn, precision, recall, candidate recall per threshold."

    def add_arguments(self, parser):
        parser.add_argument("run", type=int)
        parser.add_argument("--labels", default="", help="label set name (default: the corpus's newest)")
        parser.add_argument("--thresholds", default="0.5,0.7,0.9")
        parser.add_argument("--split", default="", choices=["", "tuning", "acceptance"])
        parser.add_argument("--audit", action="store_true", help="exact Jaccard over every pair (sampled if large)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        try:
            run = ScreeningRun.objects.complete().get(pk=options["run"])
        except ScreeningRun.DoesNotExist as error:
            raise CommandError(f"no complete run {options['run']}") from error
        sets = LabelSet.objects.filter(corpus=run.corpus)
        label_set = sets.filter(name=options["labels"]).first() if options["labels"] else sets.first()
        if label_set is None:
            raise CommandError(f"no label set {options['labels']!r} in corpus {run.corpus.name}".replace(" ''", ""))
        try:
            thresholds = [float(t) for t in options["thresholds"].split(",") if t.strip()]
            report = evaluation.run_evaluate(run=run, label_set=label_set, thresholds=thresholds,
                                             split=options["split"])
            audit = evaluation.run_audit(run=run) if options["audit"] else None
        except ValueError as error:
            raise CommandError(f"--thresholds: {error}") from error
        except evaluation.EvaluationRefused as error:
            raise CommandError(str(error)) from error
        if options["json"]:
            data = report.as_dict()
            if audit:
                data["audit"] = {"documents": audit.documents, "audited": audit.audited, "sampled": audit.sampled,
                                 "threshold": audit.threshold, "pairs_at_threshold": audit.pairs_at_threshold,
                                 "missed": [list(m) for m in audit.missed]}
            self.stdout.write(json.dumps(data, ensure_ascii=False, indent=2))
            return
        self.stdout.write(f"run {run.pk} against {label_set.name!r} ({len(report.pairs)} labelled pairs"
                          f"{', split ' + options['split'] if options['split'] else ''})")
        self.stdout.write(f"{'threshold':>9} {'tp':>5} {'fp':>5} {'fn':>5} {'precision':>9} {'recall':>7} "
                          f"{'cand.recall':>11}")
        for m in report.metrics:
            self.stdout.write(f"{m.threshold:>9} {m.tp:>5} {m.fp:>5} {m.fn:>5} {fmt(m.precision):>9} "
                              f"{fmt(m.recall):>7} {fmt(m.candidate_recall):>11}")
        t = report.thresholds[len(report.thresholds) // 2]
        errors = [p for p in report.pairs if p.error(t)]
        if errors:
            self.stdout.write(f"errors at {t}:")
            for p in errors:
                self.stdout.write(f"  {p.left} {p.right} label {p.label} jaccard {fmt(p.jaccard)}: {p.error(t)}")
        if audit:
            scope = f"a sample of {audit.audited} of {audit.documents}" if audit.sampled else f"all {audit.audited}"
            self.stdout.write(f"audit over {scope} documents: {audit.pairs_at_threshold} pairs at or above "
                              f"{audit.threshold}; {len(audit.missed)} not returned by LSH")
            for a, b, score in audit.missed:
                self.stdout.write(f"  missed {a} {b} jaccard {score:.3f}")
