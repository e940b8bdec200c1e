"""`make run`: Redis (embedded unless REDIS_URL), N RQ workers and the web server; Ctrl-C stops all."""

import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from dedup_site import redis_server
from dedup_site.queues import ensure_redis


class Command(BaseCommand):
    help = "Start Redis (embedded unless REDIS_URL is set), the workers and the web server."

    def add_arguments(self, parser):
        parser.add_argument("--workers", type=int, default=1)
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--host", default="127.0.0.1")

    def handle(self, *args, **options):
        embedded = not settings.REDIS_URL
        ensure_redis()
        python, manage = sys.executable, str(settings.BASE_DIR / "manage.py")
        children = [
            subprocess.Popen([python, manage, "worker", "--name", f"{options['host']}-{options['port']}-w{i}"])  # noqa: S603
            for i in range(options["workers"])
        ]
        children.append(subprocess.Popen([  # noqa: S603
            python, "-m", "gunicorn", "dedup_site.wsgi:application",
            "--bind", f"{options['host']}:{options['port']}", "--workers", "2", "--threads", "4",
            "--access-logfile", "-", "--graceful-timeout", "5", "--no-control-socket",
        ], cwd=settings.BASE_DIR))
        self.stdout.write(self.style.SUCCESS(
            f"\nDedup review is running on http://{options['host']}:{options['port']}/ "
            f"with {options['workers']} worker(s). Press Ctrl-C to stop.\n"
        ))

        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(c.poll() is None for c in children):
                time.sleep(0.3)
        finally:
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
            if embedded:
                redis_server.stop(settings.EMBEDDED_REDIS_DIR)
            self.stdout.write("Stopped the web server, the workers and Redis.")
