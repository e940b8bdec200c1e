"""The review's words, written once: verdicts, pair states, run states and arbitration reasons.

Plain Python (no Django) so that the engine's rules and metrics use the same keys as the models, forms,
selectors, templates and page scripts. Every other module imports these enums; a test
(tests/test_architecture.py) fails on a verdict key spelled anywhere else in the application.

Labels are English source strings marked with `gettext_noop` so that `makemessages` collects them into the
catalogs; the pages translate them where they are shown (`label()` in the Django layer), never here.

Adding a verdict: a member of `Verdict` with its label in VERDICT_LABELS, its shortcut in VERDICT_KEYS and its
default reason in review.models.PRESET_REASONS; whether it settles a pair as a copy (COPY_VERDICTS); then a
migration for the new choice (makemigrations finds it) and its translations.
"""

from __future__ import annotations

from enum import StrEnum


def gettext_noop(message: str) -> str:
    """Marks a label for the message catalogs; it is translated where it is shown."""
    return message


class Verdict(StrEnum):
    """What a reviewer or an arbiter decides about a candidate pair."""

    KEEP_BOTH = "keep-both"
    MERGE_ENTRY = "merge-entry"
    PUBLIC_QUOTE = "public-quote"
    VALID_REVISION = "valid-revision"
    ARBITRATION = "arbitration"  # a reviewer's request that an arbiter decide; never final

    @property
    def label(self) -> str:
        return VERDICT_LABELS[self]

    @property
    def is_copy(self) -> bool:
        return self in COPY_VERDICTS


VERDICT_LABELS = {
    Verdict.KEEP_BOTH: gettext_noop("keep both"),
    Verdict.MERGE_ENTRY: gettext_noop("merge entry"),
    Verdict.PUBLIC_QUOTE: gettext_noop("public quote"),
    Verdict.VALID_REVISION: gettext_noop("valid revision"),
    Verdict.ARBITRATION: gettext_noop("send to arbitration"),
}
# The verdicts that can settle a pair (what an arbiter, a cluster or a bulk decision records).
FINAL_VERDICTS = (Verdict.KEEP_BOTH, Verdict.MERGE_ENTRY, Verdict.PUBLIC_QUOTE, Verdict.VALID_REVISION)
# The verdicts that settle a pair as a copy of the other (label 1 in an evaluation); the rest keep both texts.
COPY_VERDICTS = frozenset({Verdict.MERGE_ENTRY})
# The letter that picks a verdict on the review pages (read from the key's position, whatever the layout).
VERDICT_KEYS = {Verdict.KEEP_BOTH: "k", Verdict.MERGE_ENTRY: "m", Verdict.PUBLIC_QUOTE: "q",
                Verdict.VALID_REVISION: "v", Verdict.ARBITRATION: "a"}
WITHDRAWN = "withdrawn"  # recorded by undo: the reviewer has no current verdict on the pair


class PairState(StrEnum):
    """Where a candidate pair stands in review (derived from its judgements and arbitrations)."""

    PENDING = "pending"  # no review yet
    JUDGED = "judged"  # some of the reviews it needs, not all
    NEEDS_ARBITRATION = "needs_arbitration"
    SETTLED = "settled"
    REVIEWED = "reviewed"  # never stored: settled or disputed, as a blind reviewer is told

    @property
    def label(self) -> str:
        return PAIR_STATE_LABELS[self]


PAIR_STATE_LABELS = {
    PairState.PENDING: gettext_noop("pending"),
    PairState.JUDGED: gettext_noop("judged"),
    PairState.NEEDS_ARBITRATION: gettext_noop("needs arbitration"),
    PairState.SETTLED: gettext_noop("settled"),
    PairState.REVIEWED: gettext_noop("reviewed"),
}
STORED_PAIR_STATES = (PairState.PENDING, PairState.JUDGED, PairState.NEEDS_ARBITRATION, PairState.SETTLED)
OPEN_PAIR_STATES = (PairState.PENDING, PairState.JUDGED)  # still wanting judgements
BLIND_PAIR_STATES = (PairState.PENDING, PairState.JUDGED, PairState.REVIEWED)


class RunState(StrEnum):
    """Where a background job's object stands: a run, an upload, an audit, a sheet export."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETE = "complete"
    REJECTED = "rejected"  # uploads only: the file broke a rule
    FAILED = "failed"

    @property
    def label(self) -> str:
        return RUN_STATE_LABELS[self]


RUN_STATE_LABELS = {
    RunState.QUEUED: gettext_noop("queued"),
    RunState.RUNNING: gettext_noop("running"),
    RunState.COMPLETE: gettext_noop("complete"),
    RunState.REJECTED: gettext_noop("rejected"),
    RunState.FAILED: gettext_noop("failed"),
}


class ApiState(StrEnum):
    """A job's state as the REST API says it (issue 40), one set for uploads, runs and sheets: a run state's
    `complete` is `done`, and a rejected upload is `failed` (its problems listed). The pages keep RunState."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


API_STATES = {RunState.QUEUED: ApiState.QUEUED, RunState.RUNNING: ApiState.RUNNING, RunState.COMPLETE: ApiState.DONE,
              RunState.REJECTED: ApiState.FAILED, RunState.FAILED: ApiState.FAILED}


class ArbitrationReason(StrEnum):
    """Why a pair waits for an arbiter: the start of its stored flag (a cluster's flag goes on to say which)."""

    DISAGREE = "the reviewers disagree"
    ASKED = "a reviewer asked for arbitration"
    CLUSTER = "contradicts cluster"

    @property
    def key(self) -> str:
        """Its name in a filter's address (?why=...)."""
        return self.name.lower()

    @property
    def label(self) -> str:
        return ARBITRATION_REASON_LABELS[self]


ARBITRATION_REASON_LABELS = {
    ArbitrationReason.DISAGREE: gettext_noop("the reviewers disagree"),
    ArbitrationReason.ASKED: gettext_noop("a reviewer asked for arbitration"),
    ArbitrationReason.CLUSTER: gettext_noop("contradicts its cluster"),
}


def dispute_of(verdicts) -> str:
    """Why these verdicts (every reviewer a pair needs) send it to an arbiter; "" when they settle it."""
    verdicts = set(verdicts)
    if Verdict.ARBITRATION in verdicts:
        return ArbitrationReason.ASKED.value
    return ArbitrationReason.DISAGREE.value if len(verdicts) > 1 else ""
