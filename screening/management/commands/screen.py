import django_rq
from django.core.management.base import BaseCommand, CommandError
from rq import Worker

from dedup_site import progress
from dedup_site.cli import Poller, ProgressBar, wait_until
from dedup_site.queues import ensure_redis
from dedup_site.trail import command_line
from screening import runs
from screening.engine.minhash import NearConfig
from screening.engine.normalize import POLICIES
from screening.models import Corpus, ScreeningRun
from screening.runs import pipeline


class Command(BaseCommand):
    help = "Start a screening run on a corpus; prints `run N` and, with --wait or --sync, a summary."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--exact", action="store_true", help="the exact pass (doc-content-v1)")
        parser.add_argument("--near", action="store_true", help="the near pass (MinHash + LSH)")
        d, run = NearConfig(), runs.RunOptions()  # the defaults: one source for the command, the form and the service
        # --normalization: the option's name before the policy had one name everywhere.
        parser.add_argument("--policy", "--normalization", dest="policy", default=d.policy, choices=sorted(POLICIES),
                            help=f"normalisation policy (default {d.policy})")
        parser.add_argument("--shingle", default=d.shingle, help=f"char:K or word:K (default {d.shingle})")
        parser.add_argument("--num-perm", type=int, default=d.num_perm)
        parser.add_argument("--threshold", type=float, default=d.threshold, help=f"review threshold ({d.threshold})")
        parser.add_argument("--bands", type=int, help="LSH bands b (with --rows; default: chosen for the threshold)")
        parser.add_argument("--rows", type=int, help="LSH rows per band r")
        parser.add_argument("--seed", type=int, default=d.seed, help=f"MinHash seed (default {d.seed})")
        parser.add_argument("--storage-floor", type=float, default=d.storage_floor)
        parser.add_argument("--incremental", action="store_true",
                            help="keep the corpus's LSH index: sign and look up only documents not yet indexed")
        parser.add_argument("--reviews-required", type=int, default=run.reviews_required,
                            help="independent judgements per pair")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--wait", action="store_true", help="block until workers finish the run")
        mode.add_argument("--sync", action="store_true", help="do the work in this process (a burst worker)")

    def handle(self, *args, **options):
        try:
            corpus = Corpus.objects.get(name=options["corpus"])
        except Corpus.DoesNotExist as error:
            raise CommandError(f"no corpus named {options['corpus']!r}") from error
        exact, near = options["exact"], options["near"]
        if not (exact or near):
            exact = near = True  # neither named: both passes
        config = NearConfig(
            policy=options["policy"], shingle=options["shingle"], num_perm=options["num_perm"],
            threshold=options["threshold"], bands=options["bands"], rows=options["rows"], seed=options["seed"],
            storage_floor=options["storage_floor"],
        )
        ensure_redis(stop_at_exit=True)
        options_ = runs.RunOptions(exact=exact, near=near, incremental=options["incremental"],
                                   reviews_required=options["reviews_required"], near_config=config)
        try:
            # --sync runs here, never queued: a worker already running would take the job instead.
            with command_line("screen"):
                run = (runs.run_create(corpus=corpus, options=options_) if options["sync"]
                       else runs.run_start(corpus=corpus, options=options_))
        except runs.RunRefused as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"run {run.pk}")
        if near:
            c = run.config["near"]
            self.stdout.write(f"near: {c['policy']}, {c['shingle']}, {c['num_perm']} permutations, "
                              f"b×r = {c['bands']}×{c['rows']}, threshold {c['threshold']}")
        if not (options["sync"] or options["wait"]):
            self.stdout.write("queued; a worker will take it (see its page, or use --wait)")
            return
        bar = ProgressBar(getattr(self.stderr, "_out", self.stderr), f"run {run.pk}")
        if options["sync"]:
            self._execute(run, bar, verbose=options["verbosity"] >= 2)
        else:
            queue = django_rq.get_queue("default")
            if not Worker.count(connection=queue.connection):
                self.stderr.write("no worker is running yet: start one (make run, or manage.py worker); waiting")
            with Poller(bar, lambda: _state(run.pk)):
                wait_until(lambda: not ScreeningRun.objects.get(pk=run.pk).is_active)
        run.refresh_from_db()
        summary = runs.run_summary(run)
        if run.status != ScreeningRun.Status.COMPLETE:
            raise CommandError(summary)
        self.stdout.write(summary)


    def _execute(self, run, bar: ProgressBar, verbose: bool) -> None:
        """The whole run driven from this process, drawn on the bar; a failure is recorded on the run, as a job's."""
        log = _stage_logger(verbose)
        begun = set()

        def draw(overall: float, stage: str) -> None:
            if verbose and stage not in begun:
                begun.add(stage)
                log.info("run %s: %s", run.pk, stage)
            bar.draw(overall, stage)

        try:
            runs.run_execute(run=run, on_progress=pipeline.stage_reporter(run, draw))
            bar.draw(1.0, "done")
        except Exception as error:  # noqa: BLE001 - recorded on the run and reported as the command's failure
            runs.run_fail(run_id=run.pk, error=f"{type(error).__name__}: {error}")
        finally:
            bar.close()


def _state(run_id: int) -> tuple[float, str] | None:
    state = progress.read("run", run_id)
    return (state.get("fraction", 0.0), state.get("stage", "")) if state else None


def _stage_logger(verbose: bool):
    """With -v 2, each stage's start is logged (the progress bar alone otherwise)."""
    import logging

    log = logging.getLogger("screening.runs")
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return log
