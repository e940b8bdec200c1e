"""Words the audit found wrong: an untranslated warning, a sentence that did not parse, a tampered sheet
misnamed, and a release that ended on a page its admin may not see."""

from __future__ import annotations

from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import translation

from review import decisions, selectors, services
from review.models import Lease
from screening.models import CandidatePair
from tests.factories import copies_run
from tests.test_sheets import export

CATALOGS = sorted(Path(settings.BASE_DIR, "locale").glob("*/LC_MESSAGES/django.po"))


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "ignored"), [("fa", "نادیده گرفته شد"), ("zh-hans", "已忽略")])
def test_the_arbitration_queues_ignored_filters_are_in_the_interfaces_language(arbiter_client, language, ignored):
    response = arbiter_client.get(reverse("review:arbitration_queue"), {"run": "abc", "why": "x"},
                                  HTTP_ACCEPT_LANGUAGE=language)
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert len(shown) == 2 and all(ignored in m for m in shown), shown
    assert not any("Ignored" in m for m in shown)


@pytest.mark.django_db
def test_nothing_to_record_in_bulk_is_said_in_a_sentence_that_parses(import_records, editor, editor2):
    run = copies_run(import_records, 2)
    for pair in CandidatePair.objects.filter(run=run):  # one review a pair: editor2 settles both
        services.judgement_record(pair=pair, reviewer=editor2, verdict="merge-entry", reason="copy")
    flt = selectors.QueueFilter(run=run.pk)
    plan = decisions.bulk_plan(flt=flt, reviewer=editor, verdict="keep-both")
    with pytest.raises(services.ReviewRefused) as refused:
        decisions.bulk_decide(flt=flt, reviewer=editor, verdict="keep-both", reason="r", token=plan.token, filters={})
    assert str(refused.value) == ("nothing to record: every pair of this selection is held or judged by the "
                                  "reviewers it needs")
    with translation.override("fa"):
        assert translation.gettext(decisions.FULL) != decisions.FULL


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.parts[-3])
def test_no_message_says_is_has(path):
    assert not [e.msgid for e in polib.pofile(str(path)) if " is has " in e.msgid or " is has " in e.msgstr]
    translated = {e.msgid: e.msgstr for e in polib.pofile(str(path))}
    assert translated["held or judged by the reviewers it needs"]
    assert "has the reviewers it needs" not in translated


@pytest.mark.django_db
def test_verify_sheet_calls_a_duplicated_row_duplicated_with_its_row_numbers(reviewed, tmp_path, capsys):
    csv_path, manifest_path = export(reviewed, tmp_path)
    lines = csv_path.read_bytes().split(b"\r\n")
    csv_path.write_bytes(b"\r\n".join([*lines[:3], lines[2], *lines[3:]]))  # row 2, on line 3, copied after it
    with pytest.raises(CommandError):
        call_command("verify_sheet", str(csv_path), "--manifest", str(manifest_path))
    err = capsys.readouterr().err
    assert "INVALID: a row was duplicated: row 2 on lines 3 and 4" in err and "edited" not in err


@pytest.mark.django_db
def test_an_admin_releasing_someones_pairs_outside_the_dashboard_lands_on_a_page_they_may_see(
        import_records, editor, admin_client):
    run = copies_run(import_records, 2)
    for n, pair in enumerate(CandidatePair.objects.filter(run=run)):
        services.lease_take(pair_id=pair.pk, reviewer=editor)
        # With no run and no page to go back to, then from the Users page: admins do not review, so the queue
        # (where a release used to land) is a 403 for them.
        referer = {"HTTP_REFERER": f"http://testserver{reverse('users:list')}?q=e"} if n else {}
        response = admin_client.post(reverse("review:leases_release"), {"reviewer": editor.pk}, **referer)
        assert response.status_code == 302
        assert response.url == (f"{reverse('users:list')}?q=e" if n else reverse(settings.LOGIN_REDIRECT_URL))
        assert admin_client.get(response.url).status_code == 200
    assert not Lease.objects.exists()
    elsewhere = admin_client.post(f"{reverse('review:leases_release')}?run={run.pk}", {"reviewer": editor.pk},
                                  HTTP_REFERER="https://elsewhere.example/users/")
    assert elsewhere.url == reverse("review:dashboard", args=[run.pk])  # another site is never followed


@pytest.mark.django_db
def test_a_reviewer_releasing_their_own_pairs_goes_back_to_their_queue(import_records, editor, editor_client):
    pair = CandidatePair.objects.get(run=copies_run(import_records, 1))
    services.lease_take(pair_id=pair.pk, reviewer=editor)
    queue = f"{reverse('review:queue')}?run={pair.run_id}"
    assert editor_client.post(reverse("review:leases_release"), HTTP_REFERER=f"http://testserver{queue}").url == queue
    assert editor_client.post(reverse("review:leases_release")).url == reverse("review:queue")
