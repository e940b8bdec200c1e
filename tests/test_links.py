"""Kept links: what reverse() gives, for any ids and under any script prefix."""

from __future__ import annotations

import pytest
from django.urls import NoReverseMatch, clear_script_prefix, reverse, set_script_prefix

from dedup_site.links import link


@pytest.mark.parametrize(("name", "ids"), [
    ("review:queue", ()), ("review:judge", (1,)), ("review:lease", (987_654_301,)), ("review:pair", (0,)),
    ("screening:document_detail", (42,)), ("review:cluster", (7, 3)), ("review:cluster", (3, 7)),
])
def test_a_link_is_what_reverse_gives(name, ids):
    assert link(name, *ids) == reverse(name, args=ids)


def test_links_follow_the_script_prefix():
    try:
        set_script_prefix("/dedup/")
        assert link("review:judge", 5) == reverse("review:judge", args=[5]) == "/dedup/review/pairs/5/judge/"
    finally:
        clear_script_prefix()
    assert link("review:judge", 5) == "/review/pairs/5/judge/"


def test_an_id_that_is_not_a_whole_number_is_refused_as_reverse_refuses_it():
    with pytest.raises(NoReverseMatch):
        link("review:judge", "5/../../admin")
    for not_an_id in (-1, True, 2.5):
        with pytest.raises(NoReverseMatch):
            link("review:judge", not_an_id)
