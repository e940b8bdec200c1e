"""The API's response shapes. Views render through these, so the schema documents what is sent."""

from __future__ import annotations

from rest_framework import serializers

from dedup_site import trail
from review.models import Retained
from review.selectors import BLIND_STATUSES, STATUSES
from screening.vocabulary import API_STATES, FINAL_VERDICTS, ApiState, Verdict

S = serializers
# The choice sets, named once for the schema (SPECTACULAR_SETTINGS' ENUM_NAME_OVERRIDES).
STATUS_CHOICES = sorted({*STATUSES, *BLIND_STATUSES})
VERDICTS = [v.value for v in Verdict]
FINAL = [v.value for v in FINAL_VERDICTS]
STATES = [state.value for state in ApiState]


def api_state(status: str) -> str:
    return API_STATES[status].value


class State(S.ChoiceField):
    """A job's status in the API's words (`done` when complete), from the model's."""

    def __init__(self, **kwargs):
        kwargs.setdefault("help_text", "queued, running, done (complete) or failed")
        super().__init__(choices=STATES, **kwargs)

    def to_representation(self, value):
        return api_state(value)


class Error(S.Serializer):
    detail = S.CharField(help_text="what went wrong, naming the field and the rule")
    errors = S.DictField(child=S.ListField(child=S.CharField()), required=False,
                         help_text="for a 400: each field and the rules it broke")


class Accepted(S.Serializer):
    id = S.IntegerField()
    status = State()
    url = S.URLField(help_text="where to follow it")


class Corpus(S.Serializer):
    id = S.IntegerField()
    name = S.CharField()
    created_at = S.DateTimeField()
    document_count = S.IntegerField()


class CorpusCreate(S.Serializer):
    name = S.CharField(max_length=64, help_text="1-64 letters, digits, '.', '_' or '-', starting with a letter or "
                                                "digit")


class CorpusExists(S.Serializer):
    detail = S.CharField()
    errors = S.DictField(child=S.ListField(child=S.CharField()), help_text="name: the rule it broke")
    id = S.IntegerField(help_text="the corpus that has the name")
    url = S.URLField()


class CorpusPage(S.Serializer):
    results = Corpus(many=True)


class LanguageCheck(S.Serializer):
    status = State(help_text="queued (the import is running), running, done or failed; its own state, after the "
                             "upload's")
    checked = S.IntegerField(help_text="documents read so far, of document_count")
    mismatch_count = S.IntegerField(help_text="when done: documents whose tag disagrees with a confident detection")
    mismatches = S.ListField(child=S.DictField(), help_text="when done: doc_id, place, tag, detected, confidence "
                                                            "(the first ones stored)")


class UploadState(S.Serializer):
    id = S.IntegerField()
    corpus = S.IntegerField(source="corpus_id")
    original_name = S.CharField()
    language = S.CharField()
    status = State()
    rejected = S.BooleanField(source="is_rejected",
                              help_text="the file broke a rule (status failed, each problem listed)")
    uploaded_at = S.DateTimeField()
    finished_at = S.DateTimeField(allow_null=True)
    document_count = S.IntegerField()
    problem_count = S.IntegerField()
    problems = S.ListField(child=S.CharField(), help_text="each problem naming file, line and rule (the first "
                                                          "ones stored)")
    problem_groups = S.ListField(child=S.DictField(), help_text="one per rule broken: field, rule, count, examples")
    error = S.CharField(help_text="when failed: the program's error (last line)")
    language_check = LanguageCheck(allow_null=True, help_text="the language check that follows the import; null "
                                                              "when none is planned (rejected, failed, or older)")


class Progress(S.Serializer):
    fraction = S.FloatField()
    stage = S.CharField()


class Run(S.Serializer):
    id = S.IntegerField()
    corpus = S.IntegerField(source="corpus_id")
    status = State()
    exact = S.BooleanField()
    near = S.BooleanField()
    reviews_required = S.IntegerField()
    config = S.DictField()
    stats = S.DictField()
    summary = S.CharField()
    progress = Progress()
    created_at = S.DateTimeField()
    started_at = S.DateTimeField(allow_null=True)
    finished_at = S.DateTimeField(allow_null=True)
    error = S.CharField()


class PairRow(S.Serializer):
    id = S.IntegerField(source="pk")
    run = S.IntegerField(source="run_id")
    pass_name = S.CharField()
    jaccard = S.FloatField()
    cluster = S.IntegerField(allow_null=True)
    status = S.ChoiceField(choices=STATUS_CHOICES, help_text="as you may see it (blind review: reviewed)")
    final_verdict = S.CharField(help_text="empty unless settled and visible to you")
    left = S.CharField(help_text="doc_id")
    right = S.CharField(help_text="doc_id")
    left_title = S.CharField()
    right_title = S.CharField()
    mine = S.CharField(help_text="your current verdict, empty without one")
    suggestion = S.CharField()
    confidence = S.FloatField(allow_null=True)
    revision_signals = S.ListField(child=S.ListField(child=S.CharField()))
    below = S.BooleanField(help_text="below the run's review threshold")


class PairPage(S.Serializer):
    results = PairRow(many=True)
    next = S.URLField(allow_null=True, help_text="the next page (an opaque cursor), null on the last")


class DocumentMeta(S.Serializer):
    id = S.IntegerField(source="pk")
    doc_id = S.CharField()
    source_id = S.CharField()
    version = S.CharField()
    language = S.CharField()
    title = S.CharField()
    collected_at = S.CharField()
    place = S.CharField()
    length = S.IntegerField()


class JudgementOut(S.Serializer):
    id = S.IntegerField()
    reviewer = S.CharField(required=False)
    verdict = S.CharField()
    reason = S.CharField()
    retained = S.CharField()
    related_source = S.CharField()
    created_at = S.DateTimeField()


class ArbitrationOut(S.Serializer):
    id = S.IntegerField()
    arbiter = S.CharField()
    verdict = S.ChoiceField(choices=FINAL)
    reason = S.CharField()
    retained = S.ChoiceField(choices=Retained.values)
    self_arbitrated = S.BooleanField()
    created_at = S.DateTimeField()


class Suggestion(S.Serializer):
    verdict = S.CharField()
    confidence = S.FloatField(allow_null=True)
    reasons = S.ListField(child=S.JSONField())
    source = S.CharField()


class Pair(S.Serializer):
    id = S.IntegerField()
    run = S.IntegerField()
    pass_name = S.CharField()
    jaccard = S.FloatField()
    minhash_estimate = S.FloatField(allow_null=True)
    template_share = S.FloatField(allow_null=True)
    jaccard_without_template = S.FloatField(allow_null=True)
    cluster = S.IntegerField(allow_null=True)
    revision_signals = S.ListField(child=S.ListField(child=S.CharField()))
    left = DocumentMeta()
    right = DocumentMeta()
    evidence = S.DictField()
    suggestion = Suggestion()
    status = S.ChoiceField(choices=STATUS_CHOICES, help_text="as you may see it (blind review)")
    final_verdict = S.CharField()
    flag = S.CharField(help_text="why it waits for an arbiter (when you may see it does)")
    mine = JudgementOut(many=True, help_text="your own judgements, newest first")
    others = JudgementOut(many=True, allow_null=True,
                          help_text="other reviewers' judgements; null until you have judged (blind review)")
    arbitrations = ArbitrationOut(many=True, allow_null=True, help_text="null until you have judged")
    leased = S.BooleanField(help_text="you hold it under a lease now")
    open = S.BooleanField(help_text="a judgement of yours would be taken")


class Leased(S.Serializer):
    pair = Pair()
    lease_expires = S.DateTimeField()


class LeaseState(S.Serializer):
    held = S.BooleanField()
    lease_expires = S.DateTimeField(allow_null=True)


class Created(S.Serializer):
    id = S.IntegerField()
    pair = S.IntegerField()
    verdict = S.ChoiceField(choices=VERDICTS)
    reason = S.CharField()
    retained = S.ChoiceField(choices=Retained.values)
    created_at = S.DateTimeField()


class Case(S.Serializer):
    id = S.IntegerField(source="pk")
    run = S.IntegerField(source="run_id")
    jaccard = S.FloatField()
    left = S.CharField(source="left.doc_id")
    right = S.CharField(source="right.doc_id")
    flag = S.CharField()
    took_part = S.BooleanField()
    settleable = S.BooleanField(help_text="you may settle it")


class CasePage(S.Serializer):
    results = Case(many=True)


class Decision(S.Serializer):
    pair = S.IntegerField()
    left_doc_id = S.CharField()
    right_doc_id = S.CharField()
    pass_name = S.CharField()
    jaccard = S.FloatField()
    cluster = S.IntegerField(allow_null=True)
    status = S.ChoiceField(choices=STATUSES)
    final_verdict = S.CharField()
    flag = S.CharField()


class DecisionPage(S.Serializer):
    results = Decision(many=True)
    next = S.URLField(allow_null=True)


class LabelSetOut(S.Serializer):
    id = S.IntegerField()
    name = S.CharField()
    size = S.IntegerField()
    positives = S.IntegerField()


class LabelsRejected(S.Serializer):
    detail = S.CharField()
    errors = S.DictField(child=S.ListField(child=S.CharField()))
    problems = S.ListField(child=S.CharField(), required=False,
                           help_text="when the file broke rules: each problem naming the line and the rule")


class Metric(S.Serializer):
    threshold = S.FloatField()
    tp = S.IntegerField()
    fp = S.IntegerField()
    fn = S.IntegerField()
    tn = S.IntegerField()
    precision = S.FloatField(allow_null=True)
    recall = S.FloatField(allow_null=True)
    candidate_recall = S.FloatField(allow_null=True)


class Evaluation(S.Serializer):
    run = S.IntegerField()
    labels = S.IntegerField()
    pairs = S.IntegerField()
    metrics = Metric(many=True)


class Sheet(S.Serializer):
    id = S.IntegerField()
    run = S.IntegerField()
    status = State()
    selection = S.DictField()
    row_count = S.IntegerField()
    csv_sha256 = S.CharField()
    created_at = S.DateTimeField()
    finished_at = S.DateTimeField(allow_null=True)
    error = S.CharField()
    csv = S.URLField(allow_null=True, help_text="the sheet, once complete")
    manifest = S.URLField(allow_null=True, help_text="its signed manifest, once complete")


class TrailEntry(S.Serializer):
    id = S.IntegerField()
    at = S.DateTimeField()
    actor = S.CharField(allow_null=True, help_text="the actor's user name then; null: the server's command line")
    command = S.CharField(help_text="the server's command that acted (empty when a person did)")
    action = S.ChoiceField(choices=sorted(trail.ACTIONS), help_text="what was done")
    target_type = S.ChoiceField(choices=sorted(trail.TARGETS))
    target_id = S.IntegerField(allow_null=True)
    target = S.CharField(help_text="the target's name then")
    before = S.DictField(help_text="what the act changed, as it was")
    after = S.DictField(help_text="and as it became (never a password or a code)")


class TrailPage(S.Serializer):
    results = TrailEntry(many=True)
    next = S.URLField(allow_null=True)
