"""The API's endpoints: each reads its input through the web's form, calls the web's service or selector, and
renders through review.api.serializers. Roles are checked first (403), then the object (404)."""

from __future__ import annotations

import base64
import binascii
import csv
import json
from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import decorators as drf
from rest_framework import exceptions, status
from rest_framework.decorators import api_view, renderer_classes
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response

from dedup_site import background
from dedup_site.api import Conflict, Unavailable, checked, form_input, form_serializer, id_in, idempotent
from dedup_site.api_renderers import JSONRenderer
from dedup_site.csvcells import neutralise
from dedup_site.prepared import Prepared
from dedup_site.queues import QueueUnavailable
from dedup_site.roles import ARBITRATE, EXPORT, REVIEW, START_RUN, UPLOAD, VIEW_TRAIL
from dedup_site.trail import trail_entries
from dedup_site.trail_page import TrailFilterForm
from review import selectors, services
from review.api import serializers as out
from review.forms import ArbitrationFilterForm, ArbitrationForm, JudgementForm, QueueFilterForm, SheetForm
from review.models import Lease, SheetExport
from review.sheets import sheet_exports
from screening import evaluation, runs
from screening.forms import LabelsForm, RunForm, UploadForm
from screening.ingest import uploads
from screening.models import CandidatePair, Corpus, ScreeningRun, Upload

MAX_PAGE = 500
DEFAULT_PAGE = 100


def _require(request, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise PermissionDenied(f"this needs the permission {perm} (see the README's Roles)")


def _url(request, name: str, *args, **query) -> str:
    url = request.build_absolute_uri(reverse(f"api:{name}", args=args))
    return f"{url}?{urlencode(query)}" if query else url


def _errors(*codes: int, **more) -> dict:
    words = {400: "a field broke a rule (each named)", 401: "no token, or an unknown, expired or revoked one",
             403: "your role may not do this", 404: "no such object (or not one you may know of)",
             409: "refused by the record's rules (the detail says which)", 429: "too many requests: see Retry-After",
             503: "the job queue is not reachable"}
    codes = sorted({*codes, 401, 429})  # every call needs a token and is throttled
    return {code: OpenApiResponse(more.get(f"r{code}", out.Error), description=words[code]) for code in codes}


def _accepted(request, job, name: str) -> Response:
    """202 for a queued job (an upload, a run, a sheet): its id, status and where to follow it."""
    return Response(out.Accepted({"id": job.pk, "status": job.status, "url": _url(request, name, job.pk)}).data,
                    status=status.HTTP_202_ACCEPTED)


def _page_size(request) -> int:
    text = request.query_params.get("page_size", "")
    if not text:
        return DEFAULT_PAGE
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_PAGE):
        raise exceptions.ValidationError({"page_size": [f"a whole number from 1 to {MAX_PAGE}"]})
    return int(text)


def _cursor_in(request) -> str:
    """The opaque cursor of a `next` link, as the selectors wrote it; a 400 for anything else."""
    text = request.query_params.get("cursor", "")
    if not text:
        return ""
    try:
        cursor = base64.urlsafe_b64decode(text.encode("ascii") + b"==").decode("ascii")
    except (binascii.Error, UnicodeError, ValueError):
        cursor = ""
    # The decoder skips what is not base64 ("!!!" reads as nothing): only the text _cursor_out writes is one.
    if not cursor or _cursor_out(cursor) != text:
        raise exceptions.ValidationError({"cursor": ["not a cursor this API wrote: use the next link as given"]})
    return cursor


def _cursor_out(cursor: str) -> str:
    return base64.urlsafe_b64encode(cursor.encode()).decode().rstrip("=")


def _next_link(request, cursor: str) -> str | None:
    if not cursor:
        return None
    query = request.query_params.copy()
    query["cursor"] = _cursor_out(cursor)
    return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")


@extend_schema(exclude=True)
@api_view(["GET", "POST", "PUT", "PATCH", "DELETE"])
@drf.authentication_classes([])
@drf.permission_classes([])
@drf.throttle_classes([])
def not_found(request, *args, **kwargs):
    """Any other address under /api/v1/ (an id that is not a number too): a JSON 404, as the API's own."""
    raise exceptions.NotFound("no such address in this API: see /api/v1/schema/")


# --- corpora and uploads -------------------------------------------------------------------------------------

CorpusList = extend_schema(methods=["GET"], responses={200: out.CorpusPage, **_errors(401)}, tags=["corpora"])
CorpusCreate = extend_schema(methods=["POST"], request=out.CorpusCreate, tags=["corpora"],
                             responses={201: out.Corpus, **_errors(400, 401, 403), 409: OpenApiResponse(
                                 out.CorpusExists, description="a corpus has this name: its id and url")})


def _corpus_out(corpus: Corpus, count: int | None = None) -> dict:
    return out.Corpus({"id": corpus.pk, "name": corpus.name, "created_at": corpus.created_at,
                       "document_count": corpus.documents.count() if count is None else count}).data


@CorpusList
@CorpusCreate
@api_view(["GET", "POST"])
def corpora(request):
    if request.method == "GET":  # anyone signed in, as the corpus list page
        rows = Corpus.objects.annotate(n=Count("documents")).order_by("name")
        return Response({"results": [_corpus_out(c, c.n) for c in rows]})
    _require(request, UPLOAD)
    name = request.data.get("name", "") if hasattr(request.data, "get") else ""
    try:
        corpus = uploads.corpus_create(name=name.strip() if isinstance(name, str) else "", user=request.user)
    except uploads.CorpusExists as error:
        return Response({"detail": f"name: {error}", "errors": {"name": [str(error)]}, "id": error.corpus.pk,
                         "url": _url(request, "corpus", error.corpus.pk)}, status=status.HTTP_409_CONFLICT)
    except uploads.UploadRefused as error:
        raise exceptions.ValidationError({"name": [str(error)]}) from None
    return Response(_corpus_out(corpus, 0), status=status.HTTP_201_CREATED)


@extend_schema(responses={200: out.Corpus, **_errors(401, 404)}, tags=["corpora"])
@api_view(["GET"])
def corpus_detail(request, pk):
    return Response(_corpus_out(get_object_or_404(Corpus, pk=pk)))


UploadIn = form_serializer(UploadForm, "UploadIn", exclude=("corpus",))


@extend_schema(request={"multipart/form-data": UploadIn}, tags=["uploads"],
               parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER)],
               responses={202: out.Accepted, **_errors(400, 401, 403, 404, 409, 503)})
@api_view(["POST"])
@idempotent
def upload_create(request, pk):
    """Store the file (all of it, or nothing) and queue its import; follow `url` until `status` is `done` or
    `failed` (a file that broke rules: `rejected`, each problem naming file, line and rule)."""
    _require(request, UPLOAD)
    corpus = get_object_or_404(Corpus, pk=pk)
    data = {k: v for k, v in request.data.items() if k != "file"}
    form = checked(UploadForm({**data, "corpus": corpus.name}, request.FILES))
    file = form["file"]
    try:
        upload = uploads.upload_create(corpus_name=corpus.name, chunks=file.chunks(), size=file.size,
                                       original_name=file.name, language=form["language"], user=request.user)
    except uploads.UploadRefused as error:
        raise exceptions.ValidationError({"file": [str(error)]}) from None
    try:
        uploads.upload_enqueue(upload=upload)
    except QueueUnavailable:
        raise Unavailable() from None
    return _accepted(request, upload, "upload")


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1] if text.strip() else ""


@extend_schema(responses={200: out.UploadState, **_errors(401, 404)}, tags=["uploads"])
@api_view(["GET"])
def upload_detail(request, pk):
    upload = get_object_or_404(Upload, pk=pk)
    return Response(out.UploadState({**{f: getattr(upload, f) for f in (
        "id", "corpus_id", "original_name", "language", "status", "uploaded_at", "finished_at", "document_count",
        "problem_count", "problems", "problem_groups")}, "error": _last_line(upload.error),
        "is_rejected": upload.status == Upload.Status.REJECTED, "language_check": _language_check(upload)}).data)


def _language_check(upload: Upload) -> dict | None:
    if not upload.language_check:
        return None
    done = upload.languages_checked
    return {"status": upload.language_check, "checked": upload.language_check_done,
            "mismatch_count": upload.language_mismatch_count if done else 0,
            "mismatches": upload.language_mismatches if done else []}


# --- runs ------------------------------------------------------------------------------------------------------

RunIn = type("RunIn", (form_serializer(RunForm, "RunFields"),), {
    "corpus": out.S.IntegerField(help_text="the corpus's id")})


def _run_out(run: ScreeningRun) -> dict:
    state = background.status(run, "run")
    return out.Run({**{f: getattr(run, f) for f in (
        "id", "corpus_id", "status", "exact", "near", "reviews_required", "config", "stats", "created_at",
        "started_at", "finished_at")}, "summary": runs.run_summary(run), "error": _last_line(run.error),
        "progress": {"fraction": state["fraction"], "stage": state["stage"]}}).data


@extend_schema(request=RunIn, tags=["runs"],
               parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER)],
               responses={202: out.Accepted, **_errors(400, 401, 403, 404, 409, 503)})
@api_view(["POST"])
@idempotent
def run_create(request):
    """Start a run (the run form's options and defaults); follow `url` until `status` is `done` (or `failed`)."""
    _require(request, START_RUN)
    corpus = get_object_or_404(Corpus, pk=id_in(request.data, "corpus"))
    form = checked(form_input(RunForm, {k: v for k, v in request.data.items() if k != "corpus"}))
    try:
        run = runs.run_create(corpus=corpus, options=form["options"], user=request.user)
    except runs.RunRefused as error:
        raise exceptions.ValidationError({"non_field_errors": [str(error)]}) from None
    try:
        runs.run_enqueue(run=run)
    except QueueUnavailable:
        raise Unavailable() from None
    return _accepted(request, run, "run")


@extend_schema(responses={200: out.Run, **_errors(401, 404)}, tags=["runs"])
@api_view(["GET"])
def run_detail(request, pk):
    return Response(_run_out(get_object_or_404(ScreeningRun, pk=pk)))


def _complete_run(pk: int) -> ScreeningRun:
    run = selectors.complete_run(pk)
    if run is None:
        raise Http404("no such complete run")
    return run


# --- pairs, next, leases ---------------------------------------------------------------------------------------

FILTER_PARAMS = [OpenApiParameter(name, OpenApiTypes.STR, description=str(field.help_text or field.label or ""))
                 for name, field in QueueFilterForm.base_fields.items() if name not in ("corpus", "run")]


def _queue_filter(request, run: ScreeningRun, data) -> selectors.QueueFilter:
    """The queue's filters (as the queue page reads them: a blind reviewer may not filter by what others'
    verdicts decided), in this run; a 400 naming the filter that is wrong."""
    blind = not selectors.sees_all(request.user)
    given = {k: v for k, v in data.items() if k in QueueFilterForm.base_fields and k not in ("corpus", "run")}
    cleaned = checked(QueueFilterForm({**given, "run": run.pk}, blind=blind))
    values = {k: v for k, v in cleaned.items() if v not in (None, "", False)}
    return selectors.QueueFilter(**{k: v for k, v in values.items() if k in selectors.QueueFilter.__dataclass_fields__})


@extend_schema(parameters=[*FILTER_PARAMS, OpenApiParameter("cursor", OpenApiTypes.STR),
                           OpenApiParameter("page_size", OpenApiTypes.INT, description=f"1 to {MAX_PAGE}")],
               responses={200: out.PairPage, **_errors(400, 401, 403, 404)}, tags=["pairs"])
@api_view(["GET"])
def run_pairs(request, pk):
    """The run's review queue with the queue page's filters, in queue order, a cursor page at a time."""
    _require(request, REVIEW)
    run = _complete_run(pk)
    flt = _queue_filter(request, run, request.query_params)
    cursor, size = _cursor_in(request), _page_size(request)
    try:
        if cursor:
            selectors.after_cursor(flt.sort, cursor)
        page = selectors.queue_page(flt, after=cursor, limit=size, reviewer=request.user,
                                    all_visible=selectors.sees_all(request.user), run=run)
    except selectors.BadCursor:
        raise exceptions.ValidationError({"cursor": ["not a position in this queue (another sort or filter?)"]}
                                         ) from None
    rows = [{**{f: getattr(r, f) for f in out.PairRow._declared_fields if hasattr(r, f)}, "pk": r.pk,
             "run_id": r.run_id} for r in page.rows]
    return Response({"results": out.PairRow(rows, many=True).data, "next": _next_link(request, page.next)})


def _document(doc) -> dict:
    return {"pk": doc.pk, **{f: getattr(doc, f) for f in (
        "doc_id", "source_id", "version", "language", "title", "collected_at", "place")}, "length": len(doc.body)}


def _pair_out(request, pk: int) -> dict:
    """The pair as its review page shows it to this user (blind review applied by pair_view)."""
    pair = selectors.pair_for_review(pk, request.user)
    if pair is None:
        raise Http404("no such pair in a complete run")
    pair = runs.pair_evidence_complete(pair=runs.with_documents(pair))
    view = selectors.pair_view(pair, request.user)
    leased, open_ = services.lease_state(pair=pair, reviewer=request.user, current=view["current"])
    shown, final = selectors.shown_status(pair.status, pair.final_verdict, mine=view["current"],
                                          all_visible=selectors.sees_all(request.user), flag=pair.flag)
    others = None if view["others"] is None else [
        {"id": j.pk, "reviewer": j.reviewer.get_username(), "verdict": j.verdict, "reason": j.reason,
         "retained": j.retained, "related_source": j.related_source, "created_at": j.created_at}
        for j in view["others"].order_by("created_at", "id")]
    arbitrations = None if view["arbitrations"] is None else [
        {"id": a.pk, "arbiter": a.arbiter.get_username(), "verdict": a.verdict, "reason": a.reason,
         "retained": a.retained, "self_arbitrated": a.self_arbitrated, "created_at": a.created_at}
        for a in view["arbitrations"]]
    mine = [{"id": 0, **m} for m in view["mine"]]
    return out.Pair({
        **{f: getattr(pair, f) for f in ("id", "pass_name", "jaccard", "minhash_estimate", "template_share",
                                         "jaccard_without_template", "cluster", "revision_signals", "evidence")},
        "run": pair.run_id, "left": _document(pair.left), "right": _document(pair.right),
        "suggestion": {"verdict": pair.suggested_verdict, "confidence": pair.suggestion_confidence,
                       "reasons": pair.suggestion_reasons, "source": pair.suggestion_source},
        "status": shown, "final_verdict": final, "flag": pair.flag if shown == selectors.NEEDS_ARBITRATION else "",
        "mine": mine, "others": others, "arbitrations": arbitrations, "leased": leased, "open": open_}).data


@extend_schema(responses={200: out.Pair, **_errors(401, 403, 404)}, tags=["pairs"])
@api_view(["GET"])
def pair_detail(request, pk):
    """Both documents' metadata, the evidence and the suggestion; other reviewers' judgements only once you
    have given yours (blind review). Opening a pair takes no lease."""
    _require(request, REVIEW)
    return Response(_pair_out(request, pk))


def _lease_end(pair_id: int, user):
    return Lease.objects.filter(pair_id=pair_id, reviewer=user).values_list("expires_at", flat=True).first()


@extend_schema(request=None, parameters=FILTER_PARAMS, tags=["pairs"],
               responses={200: out.Leased, 204: OpenApiResponse(description="nothing left for you with these filters"),
                          **_errors(400, 401, 403, 404, 409)})
@api_view(["POST"])
def run_next(request, pk):
    """The next pair for you in queue order (the queue's filters, as query parameters or in the body), held
    for you under a lease of DEDUP_LEASE_SECONDS; 409 when you hold DEDUP_MAX_LEASES pairs already."""
    _require(request, REVIEW)
    run = _complete_run(pk)
    flt = _queue_filter(request, run, {**request.query_params.dict(), **(
        request.data if hasattr(request.data, "items") else {})})
    try:
        pair = services.next_pair(flt, request.user)
    except services.LeaseCapReached as error:
        raise Conflict(str(error)) from None
    if pair is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response({"pair": _pair_out(request, pair.pk), "lease_expires": _lease_end(pair.pk, request.user)})


@extend_schema(methods=["POST"], request=None, tags=["pairs"],
               description="Renew a lease you hold (never takes one).",
               responses={200: out.LeaseState, **_errors(401, 403, 404)})
@extend_schema(methods=["DELETE"], tags=["pairs"], description="Let go of the pair.",
               responses={204: OpenApiResponse(description="released"), **_errors(401, 403, 404)})
@api_view(["POST", "DELETE"])
def pair_lease(request, pk):
    _require(request, REVIEW)
    pair = get_object_or_404(CandidatePair, pk=pk, run__status=ScreeningRun.Status.COMPLETE)
    if request.method == "DELETE":
        services.lease_release(pair_id=pair.pk, reviewer=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
    held = services.lease_renew(pair_id=pair.pk, reviewer=request.user)
    return Response({"held": held, "lease_expires": _lease_end(pair.pk, request.user) if held else None})


# --- judgements and arbitrations ------------------------------------------------------------------------------

JudgementIn = form_serializer(JudgementForm, "JudgementIn")
ArbitrationIn = form_serializer(ArbitrationForm, "ArbitrationIn")


# The pair a judgement or arbitration names, the read each of them makes first, compiled once: only whether it
# is in a complete run (a 404 before the body's 400) and its corpus (for the preset reasons); the service reads
# the pair again under its lock.
_RECORDED_PAIR = Prepared(lambda pk: CandidatePair.objects.select_related("run").only("id", "run__corpus_id")
                          .filter(pk=pk, run__status=ScreeningRun.Status.COMPLETE))


# The answer's serializer, made once: a new one a response deep-copied its fields each time (its fields keep
# nothing of a call, so one serves every request).
_CREATED = out.Created()


def _typed_reason(data) -> bool:
    """Whether the body has a reason of its own (the form keeps it, stripped, and never asks for a preset)."""
    reason = data.get("reason") if hasattr(data, "get") else None
    return isinstance(reason, str) and bool(reason.strip())


def _recorded(request, form_class, pk: int, perm: str, record) -> Response:
    _require(request, perm)
    pair = _RECORDED_PAIR.one(pk)
    if pair is None:
        raise Http404("No CandidatePair matches the given query.")  # as get_object_or_404 said
    # The corpus's preset reasons only for a body without a reason: a typed one is recorded as typed.
    presets = None if _typed_reason(request.data) else selectors.preset_reasons_of(pair.run.corpus_id)
    data = checked(form_input(form_class, request.data, presets=presets))
    try:
        row = record(pair, data)
    except services.PasswordNotOwn as error:  # the service's own check, asked once a request
        raise PermissionDenied(str(error)) from None
    except services.ReviewRefused as error:
        raise Conflict(str(error)) from None
    return Response(_CREATED.to_representation({"id": row.pk, "pair": pair.pk, "verdict": row.verdict,
                                                "reason": row.reason, "retained": row.retained,
                                                "created_at": row.created_at}), status=status.HTTP_201_CREATED)


@extend_schema(request=JudgementIn, tags=["review"],
               parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER)],
               responses={201: out.Created, **_errors(400, 401, 403, 404, 409)})
@api_view(["POST"])
@idempotent
def judgements(request, pk):
    """Record your judgement (insert-only: an earlier one of yours stays; this one becomes current). Without
    a reason, the corpus's preset reason for the verdict is recorded (a default preset in the request's
    language, Accept-Language: English without one). 403 while your password is one someone else chose; 409
    when the pair needs no more reviewers or was settled by arbitration."""
    return _recorded(request, JudgementForm, pk, REVIEW, lambda pair, data: services.judgement_record(
        pair=pair, reviewer=request.user, **data))


@extend_schema(request=ArbitrationIn, tags=["review"],
               parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER)],
               responses={201: out.Created, **_errors(400, 401, 403, 404, 409)})
@api_view(["POST"])
@idempotent
def arbitrations(request, pk):
    """Settle a pair that needs arbitration (arbiters; not one you judged, unless the corpus allows it)."""
    return _recorded(request, ArbitrationForm, pk, ARBITRATE, lambda pair, data: services.arbitration_record(
        pair=pair, arbiter=request.user, **data))


@extend_schema(parameters=[OpenApiParameter(name, OpenApiTypes.STR) for name in ArbitrationFilterForm.base_fields],
               responses={200: out.CasePage, **_errors(400, 401, 403)}, tags=["review"])
@api_view(["GET"])
def arbitration_cases(request):
    """The pairs waiting for an arbiter, best score first (at most 200), as the arbitration queue."""
    _require(request, ARBITRATE)
    data = {k: v for k, v in checked(ArbitrationFilterForm(request.query_params)).items() if v not in (None, "", False)}
    cases = selectors.arbitration_cases(request.user, flt=selectors.ArbitrationFilter(**data))
    return Response({"results": out.Case(cases, many=True).data})


# --- decisions, labels, evaluation -----------------------------------------------------------------------------


class CSVRenderer(BaseRenderer):
    """Lets `?format=csv` (or Accept: text/csv) through content negotiation; the view streams the CSV itself."""

    media_type, format, charset = "text/csv", "csv", "utf-8"

    def render(self, data, *_args, **_kwargs):  # DRF passes the media type and context
        return json.dumps(data).encode()  # only errors come here (the CSV itself is streamed)


@extend_schema(parameters=[OpenApiParameter("cursor", OpenApiTypes.STR),
                           OpenApiParameter("page_size", OpenApiTypes.INT, description=f"1 to {MAX_PAGE}"),
                           OpenApiParameter("format", OpenApiTypes.STR, enum=["json", "csv"],
                                            description="csv: every pair at once, as a CSV file")],
               responses={(200, "application/json"): out.DecisionPage, (200, "text/csv"): OpenApiTypes.STR,
                          **_errors(400, 401, 403, 404)}, tags=["decisions"])
@api_view(["GET"])
@renderer_classes([JSONRenderer, CSVRenderer])
def run_decisions(request, pk):
    """Every pair of the run with its status and current final verdict, by pair id: for the next step of a
    pipeline (admins, who see every verdict)."""
    _require(request, EXPORT)
    run = _complete_run(pk)
    if request.accepted_renderer.format == "csv":
        return _decisions_csv(run)
    cursor, size = _cursor_in(request), _page_size(request)
    if cursor and not (cursor.isascii() and cursor.isdigit() and len(cursor) <= 18):
        raise exceptions.ValidationError({"cursor": ["not a cursor this API wrote: use the next link as given"]})
    rows = selectors.decisions(run, after=int(cursor or 0), limit=size + 1)
    more = len(rows) > size
    rows = rows[:size]
    return Response({"results": out.Decision([dict(zip(selectors.DECISION_COLUMNS, r, strict=True)) for r in rows],
                                             many=True).data,
                     "next": _next_link(request, str(rows[-1][0]) if more and rows else "")})


class _Echo:
    def write(self, value):
        return value


def _decisions_csv(run: ScreeningRun) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())
    lines = (writer.writerow([neutralise(v) for v in row])
             for row in [selectors.DECISION_COLUMNS, *selectors.decisions(run)])
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-decisions.csv"'
    return response


LabelsIn = form_serializer(LabelsForm, "LabelsIn")


@extend_schema(request={"multipart/form-data": LabelsIn}, tags=["evaluation"],
               responses={201: out.LabelSetOut, **_errors(401, 403, 404), 400: OpenApiResponse(
                   out.LabelsRejected, description="the file broke rules; each problem names its line")})
@api_view(["POST"])
def labels(request, pk):
    """Upload a labels CSV (left_id,right_id,label[,reason][,split]): every row or none."""
    _require(request, UPLOAD)
    corpus = get_object_or_404(Corpus, pk=pk)
    form = checked(LabelsForm({k: v for k, v in request.data.items() if k != "file"}, request.FILES))
    file = form["file"]
    try:
        label_set = evaluation.labelset_import(corpus=corpus, data=file.read(), original_name=file.name,
                                               name=form["name"], user=request.user)
    except evaluation.LabelsRejected as error:
        return Response({"detail": f"file: {error.problems[0]}", "errors": {"file": error.problems[:50]},
                         "problems": error.problems}, status=status.HTTP_400_BAD_REQUEST)
    return Response(out.LabelSetOut({"id": label_set.pk, "name": label_set.name, "size": label_set.size,
                                     "positives": label_set.positives}).data, status=status.HTTP_201_CREATED)


@extend_schema(parameters=[OpenApiParameter("labels", OpenApiTypes.INT, required=True),
                           OpenApiParameter("thresholds", OpenApiTypes.STR, description="e.g. 0.5,0.7,0.9"),
                           OpenApiParameter("split", OpenApiTypes.STR, enum=["tuning", "acceptance"])],
               responses={200: out.Evaluation, **_errors(400, 401, 404)}, tags=["evaluation"])
@api_view(["GET"])
def run_evaluation(request, pk):
    """Precision and recall of the run against a label set you may see, at each threshold."""
    run = _complete_run(pk)
    text = request.query_params.get("labels", "")
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise exceptions.ValidationError({"labels": ["the id of a label set of the run's corpus"]})
    label_set = get_object_or_404(evaluation.label_sets_visible(run.corpus, request.user), pk=int(text))
    try:
        thresholds = [float(t) for t in request.query_params.get("thresholds", "").split(",") if t.strip()]
        report = evaluation.run_evaluate(run=run, label_set=label_set, split=request.query_params.get("split", ""),
                                         thresholds=thresholds or evaluation.DEFAULT_THRESHOLDS)
    except (ValueError, evaluation.EvaluationRefused) as error:
        raise exceptions.ValidationError({"thresholds": [f"numbers from 0 to 1, separated by commas ({error})"]}
                                         ) from None
    return Response(out.Evaluation({"run": run.pk, "labels": label_set.pk, "pairs": len(report.pairs), "metrics": [
        {**{f: getattr(m, f) for f in out.Metric._declared_fields}} for m in report.metrics]}).data)


# --- sheets ----------------------------------------------------------------------------------------------------

SheetIn = form_serializer(SheetForm, "SheetIn")


def _sheet_out(request, export: SheetExport) -> dict:
    done = export.status == SheetExport.Status.COMPLETE
    return out.Sheet({**{f: getattr(export, f) for f in (
        "id", "status", "selection", "row_count", "csv_sha256", "created_at", "finished_at")},
        "run": export.run_id, "error": _last_line(export.error),
        "csv": _url(request, "sheet_file", export.pk, "csv") if done else None,
        "manifest": _url(request, "sheet_file", export.pk, "manifest") if done else None}).data


@extend_schema(request=SheetIn, tags=["sheets"],
               parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER)],
               responses={202: out.Accepted, **_errors(400, 401, 403, 404, 409, 503)})
@api_view(["POST"])
@idempotent
def sheet_create(request, pk):
    """Export the run's signed review sheet (the sheet form's selection); follow `url` for its files."""
    _require(request, EXPORT)
    run = get_object_or_404(ScreeningRun, pk=pk)
    selection = sheet_exports.Selection(**checked(SheetForm(request.data)))
    try:
        export = sheet_exports.sheet_export_create(run=run, user=request.user, selection=selection)
        sheet_exports.sheet_export_enqueue(export=export)
    except services.ReviewRefused as error:
        raise Conflict(str(error)) from None
    except QueueUnavailable:
        raise Unavailable() from None
    return _accepted(request, export, "sheet")


@extend_schema(responses={200: out.Sheet, **_errors(401, 403, 404)}, tags=["sheets"])
@api_view(["GET"])
def sheet_detail(request, pk):
    _require(request, EXPORT)
    return Response(_sheet_out(request, get_object_or_404(SheetExport, pk=pk)))


@extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT,
                          **_errors(401, 403, 404)},
               parameters=[OpenApiParameter("part", OpenApiTypes.STR, OpenApiParameter.PATH, enum=["csv", "manifest"])],
               tags=["sheets"])
@api_view(["GET"])
def sheet_file(request, pk, part):
    """The sheet's CSV (text/csv) or its signed manifest (JSON), with the same permission as the export; read
    through the app from wherever it is kept (the exports folder or a bucket)."""
    _require(request, EXPORT)
    if part not in ("csv", "manifest"):
        raise Http404("a sheet export has a csv and a manifest")
    export = get_object_or_404(SheetExport, pk=pk, status=SheetExport.Status.COMPLETE)
    csv_name, manifest_name = sheet_exports.export_names(export)
    content_type = "text/csv; charset=utf-8" if part == "csv" else "application/json"
    response = StreamingHttpResponse(sheet_exports.export_chunks(export, part), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{csv_name if part == "csv" else manifest_name}"'
    return response


# --- the trail of administrative acts ------------------------------------------------------------------------------


TRAIL_PARAMS = [OpenApiParameter(name, OpenApiTypes.DATE if name in ("since", "until") else OpenApiTypes.STR,
                                 description=str(field.help_text), enum=[k for k, _ in field.choices if k] if hasattr(
                                     field, "choices") else None)
                for name, field in TrailFilterForm.base_fields.items()]


@extend_schema(parameters=[*TRAIL_PARAMS, OpenApiParameter("cursor", OpenApiTypes.STR),
                           OpenApiParameter("page_size", OpenApiTypes.INT, description=f"1 to {MAX_PAGE}")],
               responses={200: out.TrailPage, **_errors(400, 401, 403)}, tags=["trail"])
@api_view(["GET"])
def trail(request):
    """The trail of administrative acts (roles, accounts, passwords set by others, codes, tokens, review
    settings, runs, label sets, sheet exports), newest first, with the Trail page's filters, a cursor page at a
    time (admins)."""
    _require(request, VIEW_TRAIL)
    form = TrailFilterForm(request.query_params)
    checked(form)
    cursor, size = _cursor_in(request), _page_size(request)
    if cursor and not (cursor.isascii() and cursor.isdigit() and len(cursor) <= 18):
        raise exceptions.ValidationError({"cursor": ["not a cursor this API wrote: use the next link as given"]})
    rows = list(trail_entries(form.trail_filter(), before=int(cursor) if cursor else None)[:size + 1])
    more = len(rows) > size
    rows = rows[:size]
    return Response({"results": out.TrailEntry([{
        "id": e.pk, "at": e.at, "actor": e.actor_name or None, "command": e.command, "action": e.action,
        "target_type": e.target_type, "target_id": e.target_id, "target": e.target_label, "before": e.before,
        "after": e.after} for e in rows], many=True).data,
        "next": _next_link(request, str(rows[-1].pk) if more and rows else "")})
