import time

import django_rq
from django.core.management.base import BaseCommand, CommandError
from rq import SimpleWorker, Worker

from dedup_site.queues import ensure_redis
from screening import runs
from screening.models import Corpus, ScreeningRun


class Command(BaseCommand):
    help = "Start a screening run on a corpus; prints `run N` and, with --wait or --sync, a summary."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--exact", action="store_true", help="the exact pass (doc-content-v1)")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--wait", action="store_true", help="block until workers finish the run")
        mode.add_argument("--sync", action="store_true", help="do the work in this process (a burst worker)")

    def handle(self, *args, **options):
        try:
            corpus = Corpus.objects.get(name=options["corpus"])
        except Corpus.DoesNotExist as error:
            raise CommandError(f"no corpus named {options['corpus']!r}") from error
        exact = True  # the exact pass is the only pass so far; --exact says so explicitly
        ensure_redis(stop_at_exit=True)
        try:
            run = runs.run_start(corpus=corpus, exact=exact)
        except runs.RunRefused as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"run {run.pk}")
        if options["sync"]:
            queue = django_rq.get_queue("default")
            SimpleWorker([queue], connection=queue.connection, serializer=queue.serializer).work(burst=True)
        elif options["wait"]:
            queue = django_rq.get_queue("default")
            if not Worker.count(connection=queue.connection):
                self.stderr.write("no worker is running yet: start one (make run, or manage.py worker); waiting")
            run.refresh_from_db()
            while run.is_active:
                time.sleep(0.5)
                run.refresh_from_db()
        else:
            self.stdout.write("queued; a worker will take it (see its page, or use --wait)")
            return
        run.refresh_from_db()
        summary = runs.run_summary(run)
        if run.status != ScreeningRun.Status.COMPLETE:
            raise CommandError(summary)
        self.stdout.write(summary)
