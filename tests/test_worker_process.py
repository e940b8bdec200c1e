"""The worker process (`manage.py worker`): what its work-horses inherit."""

from __future__ import annotations

import time

import pytest


@pytest.mark.django_db(transaction=True)
def test_a_work_horse_inherits_the_loaded_code_out_of_the_collectors_reach(worker_process, queue):
    job = queue.enqueue("tests.probe_jobs.frozen_objects")
    worker_process()
    deadline = time.monotonic() + 60
    while job.get_status(refresh=True) not in ("finished", "failed") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.get_status() == "finished"
    # Django, the job modules and numba's kernels: far more than a bare interpreter holds.
    assert job.return_value() > 50_000
