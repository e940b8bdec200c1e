"""An RQ worker on the default queue, with the JSON serializer, using the embedded Redis if needed."""

import gc

from django.core.management import call_command
from django.core.management.base import BaseCommand

from dedup_site.queues import ensure_redis
from dedup_site.rq_worker import load


class Command(BaseCommand):
    help = "Run an RQ worker (starts the embedded Redis server if REDIS_URL is not set and none runs)."

    def add_arguments(self, parser):
        parser.add_argument("--burst", action="store_true", help="Stop when the queue is empty.")
        parser.add_argument("--name", default=None)

    def handle(self, *args, **options):
        ensure_redis(stop_at_exit=True)
        load()
        # What is loaded now lives as long as the worker: out of the collector's reach, so a work-horse's first
        # full collection does not walk (writing each object's header: copying its page) every object it
        # inherits (bench/HISTORY.md). Here and not in the worker class, which
        # tests also build in their own process.
        gc.freeze()
        call_command("rqworker", "default", burst=options["burst"], name=options["name"],
                     serializer="rq.serializers.JSONSerializer", verbosity=options["verbosity"])
