"""A run's steps on Ray: a Ray the product starts on this machine, a cluster of two nodes on two loopback
addresses, a node lost mid-run, a cluster out of reach. Each gives the pairs of a run in one process."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dedup_site.ray_cluster import RayUnavailable
from screening import runs
from screening.models import Corpus, ScreeningRun
from tests.factories import completed_run
from tests.families import evidence, family_records, pairs
from tests.ray_nodes import Node, auth_env, free_port, wait_for_nodes, wait_gone


@dataclass
class Cluster:
    address: str
    env: dict[str, str]
    nodes: list[Node]


@pytest.fixture(scope="session")
def ray_cluster(django_db_setup, django_db_blocker):
    """Two nodes, 127.0.0.2 (the head) and 127.0.0.3, one CPU each, on this session's test database: started
    once a session, stopped by their process ids."""
    from tests.conftest import process_env

    with django_db_blocker.unblock():
        env = process_env()
    port = free_port("127.0.0.2")
    address = f"127.0.0.2:{port}"
    head = Node("127.0.0.2", env, head_port=port)
    second = Node("127.0.0.3", env, join=address)
    saved = {name: os.environ.get(name) for name in auth_env()}
    os.environ.update(auth_env())  # the driver (this process) is let in with the cluster's token
    try:
        wait_for_nodes(address, 2)
        yield Cluster(address, env, [head, second])
    finally:
        for node in (second, head):
            node.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run(corpus: str) -> ScreeningRun:
    return runs.run_create(corpus=Corpus.objects.get(name=corpus), options=runs.RunOptions(exact=True, near=True))


def _twins(import_records, families: int = 40) -> ScreeningRun:
    """Two corpora of the same documents; the first run in this process (the reference)."""
    records = family_records(families, 5)
    import_records("here", records)
    import_records("ray", records)
    return completed_run("here", near=True)


@pytest.mark.django_db(transaction=True)
def test_a_run_on_a_two_node_cluster_has_tasks_on_both_nodes_and_the_pairs_of_one_process(
        import_records, settings, ray_cluster, admin_client):
    reference = _twins(import_records)
    settings.DEDUP_RAY_ADDRESS = ray_cluster.address
    # Small tasks: signing and key reading in slices of 20, band keys shuffled to 4 partitions or more.
    settings.DEDUP_SIGN_CHUNK, settings.DEDUP_VERIFY_CHUNK, settings.DEDUP_BAND_KEYS = 20, 20, 1600
    run = runs.run_execute(run=_run("ray"))
    assert run.status == "complete", run.error
    assert run.stats["nodes"] == ["127.0.0.2", "127.0.0.3"]
    assert run.stats["near"]["band_parts"] >= 4
    assert pairs(run) == pairs(reference) and evidence(run) == evidence(reference)
    page = admin_client.get(run.get_absolute_url()).content.decode()
    assert "127.0.0.2, 127.0.0.3" in page


@pytest.mark.django_db(transaction=True)
def test_a_node_lost_mid_run_has_its_tasks_done_again_and_the_run_gives_the_same_pairs(
        import_records, settings, ray_cluster):
    reference = _twins(import_records, families=60)
    third = Node("127.0.0.4", ray_cluster.env, join=ray_cluster.address)
    try:
        wait_for_nodes(ray_cluster.address, 3)
        settings.DEDUP_RAY_ADDRESS = ray_cluster.address
        settings.DEDUP_SIGN_CHUNK, settings.DEDUP_VERIFY_CHUNK = 10, 10
        lost = []

        def progress(fraction: float, stage: str) -> None:
            if stage == "verify" and fraction > 0 and not lost:
                third.kill()  # mid-verification, its tasks in flight
                lost.append(stage)

        run = runs.run_execute(run=_run("ray"), on_progress=progress)
        assert lost and not third.pids()
        assert run.status == "complete", run.error
        assert "127.0.0.4" in run.stats["nodes"]  # it had done tasks before it was lost
        assert pairs(run) == pairs(reference) and evidence(run) == evidence(reference)
    finally:
        third.stop()
        wait_gone(third)


@pytest.mark.django_db(transaction=True)
def test_a_cluster_out_of_reach_refuses_the_run_with_the_reason(import_records, settings, queue):
    import_records("ray", family_records(3, 2))
    settings.DEDUP_RAY_ADDRESS = "127.0.0.9:1"
    with pytest.raises(RayUnavailable, match=r"127\.0\.0\.9:1 is not reachable"):
        runs.run_execute(run=_run("ray"))
    with pytest.raises(CommandError, match=r"the Ray cluster at 127\.0\.0\.9:1 is not reachable"):
        call_command("screen", "--corpus", "ray", "--sync")
    failed = ScreeningRun.objects.order_by("-pk").first()
    assert failed.status == "failed" and "127.0.0.9:1 is not reachable" in failed.error
    assert not failed.pairs.exists()


@pytest.mark.django_db(transaction=True)
def test_a_large_run_starts_a_ray_of_its_own_on_a_loopback_address_with_the_pairs_of_one_process(
        import_records, settings):
    # Last of the module: Ray keeps the first token a process reads, and the cluster's tests connect with theirs.
    reference = _twins(import_records)
    settings.DEDUP_RAY_LOCAL_DOCUMENTS, settings.DEDUP_VERIFY_CHUNK = 100, 50
    run = runs.run_execute(run=_run("ray"))
    assert run.status == "complete", run.error
    assert run.stats["nodes"] == ["127.0.0.2"]  # a loopback address of its own, not the machine's outward one
    assert pairs(run) == pairs(reference) and evidence(run) == evidence(reference)
    assert run.stats["near"]["histogram"] == reference.stats["near"]["histogram"]
    token = settings.DATA_DIR / "ray-auth-token"
    if "RAY_AUTH_TOKEN" not in os.environ:  # the token of a Ray it starts is its own, readable by no one else
        assert stat.S_IMODE(token.stat().st_mode) == 0o600 and len(token.read_text()) == 64
    import ray

    assert not ray.is_initialized()  # the Ray it started is stopped with the run
