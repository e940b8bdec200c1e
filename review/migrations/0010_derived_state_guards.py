"""Only review.services writes a pair's review state and the reviewers' current verdicts (triggers of
dedup_site.guards.WriterGuard). Before they are installed, pairs whose reviewers disagreed and whose state a
later change of mind turned into agreement go back to the arbitration queue: once disputed, only an arbiter
settles a pair (review.services._derive)."""

from django.db import migrations

from dedup_site.guards import WriterGuard, install, remove

# Copies, as they stood when this migration was written.
WRITER = "review.services"
GUARDS = [
    WriterGuard("review_currentverdict", writer=WRITER),
    WriterGuard("screening_candidatepair", writer=WRITER, columns=("status", "final_verdict", "flag"),
                insert_when="NEW.status <> 'pending' OR NEW.final_verdict <> '' OR NEW.flag <> ''"),
]


def _dispute(verdicts) -> str:
    verdicts = set(verdicts)
    if "arbitration" in verdicts:
        return "a reviewer asked for arbitration"
    return "the reviewers disagree" if len(verdicts) > 1 else ""


def disputes_back_to_arbitration(apps, editor):
    CandidatePair = apps.get_model("screening", "CandidatePair")
    Judgement = apps.get_model("review", "Judgement")
    Arbitration = apps.get_model("review", "Arbitration")
    arbitrated = set(Arbitration.objects.values_list("pair_id", flat=True))
    history: dict[int, list[tuple[int, str]]] = {}
    for pair_id, reviewer_id, verdict in Judgement.objects.order_by("pair_id", "created_at", "id").values_list(
            "pair_id", "reviewer_id", "verdict"):
        history.setdefault(pair_id, []).append((reviewer_id, verdict))
    for pair in CandidatePair.objects.filter(pk__in=list(history)).exclude(status="needs_arbitration").select_related(
            "run"):
        if pair.pk in arbitrated:
            continue
        current: dict[int, str] = {}
        for reviewer_id, verdict in history[pair.pk]:
            if verdict == "withdrawn":
                current.pop(reviewer_id, None)
            else:
                current[reviewer_id] = verdict
            if len(current) >= pair.run.reviews_required and _dispute(current.values()):
                CandidatePair.objects.filter(pk=pair.pk).update(status="needs_arbitration", final_verdict="",
                                                                flag=_dispute(current.values()))
                break


def forward(apps, editor):
    install(editor.connection, GUARDS)


def backward(apps, editor):
    remove(editor.connection, GUARDS)


class Migration(migrations.Migration):

    dependencies = [("review", "0009_review_actions")]

    operations = [
        migrations.RunPython(disputes_back_to_arbitration, migrations.RunPython.noop),
        migrations.RunPython(forward, backward),
    ]
