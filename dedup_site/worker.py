"""The RQ worker class the project runs: RQ's own, plus one duty RQ leaves out."""

from __future__ import annotations

from rq import Worker


class WorkHorseKilled(Exception):
    """The process doing a job died (SIGKILL, out of memory) before the job could report anything."""


class DedupWorker(Worker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Loaded once here, before any work-horse is forked, instead of once per job in every horse.
        import screening.jobs  # noqa: F401
        import screening.near  # noqa: F401
        import screening.runs  # noqa: F401
        from screening.engine import fast

        fast.warm()

    def handle_work_horse_killed(self, job, retpid, ret_val, rusage):
        # RQ runs a job's failure callback only when the job raises. When its work-horse is killed the job
        # says nothing, so run the callback here: the upload, run or export is marked failed instead of
        # staying "running" for ever.
        super().handle_work_horse_killed(job, retpid, ret_val, rusage)
        if job.failure_callback and not job.should_retry:
            error = WorkHorseKilled(f"the worker process doing this job died (wait status {ret_val})")
            job.execute_failure_callback(self.death_penalty_class, WorkHorseKilled, error, None)
