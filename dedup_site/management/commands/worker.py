"""An RQ worker on the default queue, with the JSON serializer, using the embedded Redis if needed."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

from dedup_site.queues import ensure_redis


class Command(BaseCommand):
    help = "Run an RQ worker (starts the embedded Redis server if REDIS_URL is not set and none runs)."

    def add_arguments(self, parser):
        parser.add_argument("--burst", action="store_true", help="Stop when the queue is empty.")
        parser.add_argument("--name", default=None)

    def handle(self, *args, **options):
        ensure_redis(stop_at_exit=True)
        call_command("rqworker", "default", burst=options["burst"], name=options["name"],
                     serializer="rq.serializers.JSONSerializer", verbosity=options["verbosity"])
