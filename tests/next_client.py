"""One reviewer pressing "Review next", in a process of its own (tests/test_leases.py starts ten at once).

Prints `ready` once Django is loaded, waits for a line on stdin (the start signal, sent to every process
together), then asks for the next pair of the run and prints its id, or `none`."""

from __future__ import annotations

import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from review import selectors, services  # noqa: E402


def main(username: str, run_id: int) -> None:
    user = get_user_model().objects.get(username=username)
    print("ready", flush=True)
    sys.stdin.readline()
    pair = services.next_pair(selectors.QueueFilter(run=run_id), user)
    print(pair.pk if pair else "none", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
