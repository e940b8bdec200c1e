"""One server process answers requests in several languages: nothing it keeps between requests (compiled
templates, cached form answers) may carry one request's language into another's page."""

from __future__ import annotations

import re

import pytest
from django.template import engines
from django.test import Client
from django.urls import reverse

from screening.models import CandidatePair
from tests.factories import copies_run

ACCEPT = {"fa": "fa-IR,fa;q=0.9", "zh-hans": "zh-CN,zh;q=0.9", "en": "en-US"}


def _client(user, language: str) -> Client:
    client = Client(headers={"accept-language": ACCEPT[language]})
    client.force_login(user)
    return client


def _key_hints(page: str) -> dict[str, str]:
    """The Persian letter shown beside the skip and undo keys (empty outside Persian)."""
    return dict((key, layout) for layout, key in re.findall(r'<kbd data-layout="([^"]*)">([nu])</kbd>', page))


@pytest.mark.django_db
def test_the_skip_and_undo_key_hints_follow_each_requests_language(import_records, editor):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    engines["jinja2"].env.cache.clear()  # the verdict bar compiled afresh, by the first request below
    hints = {language: _key_hints(_client(editor, language).get(reverse("review:pair", args=[pair.pk]))
                                  .content.decode()) for language in ("zh-hans", "fa", "en", "fa")}
    assert hints == {"zh-hans": {"n": "", "u": ""}, "fa": {"n": "د", "u": "ع"}, "en": {"n": "", "u": ""}}, hints


@pytest.mark.django_db
def test_a_refused_queue_filter_is_named_in_each_requests_language(import_records, editor):
    run = copies_run(import_records, 1)
    warnings = {}
    for language in ("fa", "en", "zh-hans"):
        page = _client(editor, language).get(reverse("review:queue"), {"run": run.pk, "min_score": "lots"})
        warnings[language] = [str(m) for m in page.context["messages"]]
    assert any("lots" in w and "Enter a number" in w for w in warnings["en"]), warnings
    assert not any("Enter a number" in w for w in warnings["fa"] + warnings["zh-hans"]), warnings
    assert any("lots" in w and re.search("[\u0600-\u06ff]", w) for w in warnings["fa"]), warnings
    assert any("lots" in w and re.search("[\u4e00-\u9fff]", w) for w in warnings["zh-hans"]), warnings
