"""The RQ worker class the project runs: RQ's own, plus one duty RQ leaves out."""

from __future__ import annotations

import os
import socket
from importlib import import_module

from django.conf import settings
from django.utils.module_loading import import_string
from rq import Worker

from dedup_site import queues, redis_direct


class WorkHorseKilled(Exception):
    """The process doing a job died (SIGKILL, out of memory) before the job could report anything."""


def load() -> None:
    """What a worker loads before it forks work-horses, instead of once per job in every horse: the job modules
    and the warmed kernels, named by setting (this layer does not import the apps above it)."""
    for module in settings.DEDUP_WORKER_PRELOAD:
        import_module(module)
    for warm in settings.DEDUP_WORKER_WARM:
        import_string(warm)()


class DedupWorker(Worker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # RQ quits on a Redis error met outside its dequeue loop (a heartbeat, the end of a job), leaving the job
        # "started" and its run "running". Retrying through a short outage (a restart) avoids that.
        redis_direct.wait_out_outages(settings.DEDUP_WORKER_REDIS_PATIENCE)
        redis_direct.patient(self.connection)
        starting = f"{socket.gethostname()}:{os.getpid()}"
        queues.worker_starting(starting, True)
        try:
            load()
        finally:
            queues.worker_starting(starting, False)

    def handle_work_horse_killed(self, job, retpid, ret_val, rusage):
        # RQ runs a job's failure callback only when the job raises. When its work-horse is killed the job
        # says nothing, so run the callback here: the upload, run or export is marked failed instead of
        # staying "running" for ever.
        super().handle_work_horse_killed(job, retpid, ret_val, rusage)
        if job.failure_callback and not job.should_retry:
            error = WorkHorseKilled(f"the worker process doing this job died (wait status {ret_val})")
            job.execute_failure_callback(self.death_penalty_class, WorkHorseKilled, error, None)
