from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch, Q
from django.http import Http404, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.translation import gettext, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dedup_site import background, buckets, progress
from dedup_site.http import id_param, safe_next
from dedup_site.messages import form_errors
from dedup_site.numerals import LocalCount
from dedup_site.queues import QueueUnavailable
from dedup_site.roles import START_RUN, UPLOAD, permission_required
from screening import charts, evaluation, runs, suggestions
from screening.engine import metrics, shingle
from screening.engine.normalize import get_policy
from screening.forms import LabelsForm, PolicyPreviewForm, RunForm, UploadForm
from screening.ingest import sources, uploads
from screening.models import CandidatePair, Corpus, Document, ExactGroupMember, RunAudit, ScreeningRun, Upload

DOCS_PER_PAGE = 50


@require_GET
def corpus_list(request):
    corpora = Corpus.objects.annotate(document_count=Count("documents")).order_by("name")
    return render(request, "screening/corpus_list.html", {"corpora": corpora, "form": UploadForm()})


@require_GET
def corpus_detail(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    documents = corpus.documents.only("pk", "doc_id", "source_id", "version", "language", "title")
    query = request.GET.get("q", "").strip()
    if query:
        documents = documents.filter(
            Q(doc_id__icontains=query) | Q(source_id__icontains=query) | Q(title__icontains=query)
        )
    page = Paginator(documents.order_by("doc_id"), DOCS_PER_PAGE).get_page(request.GET.get("page"))
    uploads = corpus.uploads.select_related("source", "uploaded_by")
    corpus_runs = corpus.runs.select_related("started_by")
    return render(request, "screening/corpus_detail.html", {
        "corpus": corpus, "page": page, "query": query, "uploads": uploads, "runs": corpus_runs,
        "form": UploadForm(initial={"corpus": corpus.name}), "run_form": RunForm(),
        "indexes": corpus.lsh_indexes.order_by("-updated_at"),
    })


@require_POST
@permission_required(UPLOAD)
def upload_create(request):
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        form_errors(request, form, "Upload refused: ")
        return redirect(safe_next(request, "screening:corpus_list"))
    file = request.FILES["file"]
    try:
        upload = uploads.upload_create(
            corpus_name=form.cleaned_data["corpus"], chunks=file.chunks, size=file.size,
            original_name=file.name, language=form.cleaned_data["language"], user=request.user,
        )
    except uploads.UploadRefused as error:
        messages.error(request, gettext("Upload refused: {error}").format(error=error))
        return redirect(safe_next(request, "screening:corpus_list"))
    try:
        uploads.upload_enqueue(upload=upload)
    except QueueUnavailable:
        messages.error(request, gettext(
            "The upload was stored but could not be queued: the job queue is not reachable. "
                                        "Try again when it is back."))
    else:
        messages.success(request, gettext("{name} is stored and queued for import.").format(name=upload.original_name))
    return redirect(upload.corpus)


@require_GET
def upload_status(request, pk):
    upload = get_object_or_404(Upload, pk=pk)
    state = background.status(upload, "upload", document_count=upload.document_count,
                              problem_count=upload.problem_count, language_check=upload.language_check,
                              language_check_done=upload.language_check_done)
    if upload.is_checking_languages:  # the import is done; the bar now follows the language check
        state.update(active=True, stage="", label=checking_languages(upload),
                     fraction=round(upload.language_check_done / max(upload.document_count, 1), 4))
    return JsonResponse(state)


def checking_languages(upload: Upload) -> str:
    # The corpus page's words for it (templates/screening/corpus_detail.html), one catalog entry for both.
    return ngettext("checking languages: %(done)s of %(counter)s document",
                    "checking languages: %(done)s of %(counter)s documents",
                    upload.document_count) % {"done": LocalCount(upload.language_check_done),
                                              "counter": LocalCount(upload.document_count)}


@require_GET
@permission_required(UPLOAD)
def upload_source(request, pk):
    """The stored source of an upload, streamed through the app (a bucket is never public); from a bucket, its
    bytes are checked against their SHA-256 before the first one is sent."""
    upload = get_object_or_404(Upload.objects.select_related("source"), pk=pk)
    stream = sources.chunks(upload.source.sha256, upload.source.size)
    try:
        first = next(stream, b"")  # a missing or changed source fails here, before the response starts
    except buckets.BucketError as error:
        return HttpResponse(f"{upload.original_name}: {error}", status=409, content_type="text/plain; charset=utf-8")
    response = StreamingHttpResponse(_then(first, stream), content_type="application/octet-stream")
    response["Content-Disposition"] = content_disposition_header(True, upload.original_name)
    response["Content-Length"] = str(upload.source.size)
    return response


def _then(first: bytes, rest):
    yield first
    yield from rest


@require_GET
def document_detail(request, pk):
    document = get_object_or_404(Document.objects.select_related("corpus", "upload__source"), pk=pk)
    form = PolicyPreviewForm(request.GET or None)
    preview = None
    if form.is_valid():
        policy, spec = get_policy(form.cleaned_data["policy"]), form.cleaned_data["shingle"]
        text = policy.normalize(document.body) if spec.kind == "char" else " ".join(policy.words(document.body))
        preview = {"policy": policy, "spec": spec, "text": text,
                   "shingles": len(shingle.shingles(document.body, policy, spec))}
    return render(request, "screening/document_detail.html",
                  {"document": document, "form": form if request.GET else PolicyPreviewForm(), "preview": preview})


@require_GET
def pair_detail(request, pk):
    pair = runs.with_documents(get_object_or_404(CandidatePair.objects.select_related("run__corpus"), pk=pk))
    if pair.run.status != ScreeningRun.Status.COMPLETE:
        raise Http404("no such pair")
    return render(request, "screening/pair_detail.html", runs.pair_context(runs.pair_evidence_complete(pair=pair)))


@require_POST
@permission_required(START_RUN)
def run_start(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    form = RunForm(request.POST)
    if not form.is_valid():
        form_errors(request, form, "Run not started: ")
        return redirect(corpus)
    try:
        run = runs.run_create(corpus=corpus, options=form.cleaned_data["options"], user=request.user)
    except runs.RunRefused as error:
        messages.error(request, gettext("Run not started: {error}").format(error=error))
        return redirect(corpus)
    try:
        runs.run_enqueue(run=run)
    except QueueUnavailable as error:
        messages.error(request, gettext(
            "The run could not be queued: {error}. Use “Run again” when it is back.").format(
            error=error))
    return redirect(run)


@require_POST
@permission_required(START_RUN)
def run_retry(request, pk):
    run = get_object_or_404(ScreeningRun, pk=pk)
    try:
        runs.run_retry(run=run)
    except runs.RunRefused as error:
        messages.error(request, str(error))
    except QueueUnavailable as error:
        messages.error(request, gettext("The run could not be queued: {error}.").format(error=error))
    return redirect(run)


@require_GET
def run_detail(request, pk):
    run = get_object_or_404(ScreeningRun.objects.select_related("corpus", "started_by"), pk=pk)
    near = run.config.get("near")
    context = {
        "run": run, "summary": runs.run_summary(run), "near": near,
        "state": progress.read("run", run.pk) if run.is_active else None,
        "config_json": json.dumps(run.config, indent=2, ensure_ascii=False),
    }
    if near:
        context["probability"] = runs.near_config_of(run).probability_at_threshold
    if run.status == ScreeningRun.Status.COMPLETE:
        context["clusters"] = run.clusters.all()[:CLUSTERS_SHOWN]
        pairs = run.pairs.select_related("left", "right").only(
            "pk", "run_id", "pass_name", "jaccard", "minhash_estimate", "template_share", "cluster",
            "left__doc_id", "left__title", "right__doc_id", "right__title").order_by("-jaccard", "id")
        context["pairs_page"] = Paginator(pairs, PAIRS_SHOWN).get_page(request.GET.get("page"))
        if near:
            context["histogram"] = charts.histogram(run.stats["near"]["histogram"], low=0.0, high=1.0,
                                                    marker=near["threshold"])
            context["bar_link"] = f"{reverse('review:queue')}?run={run.pk}&pass_name=near"  # near pairs, as drawn
    return render(request, "screening/run_detail.html", context)


@require_GET
def run_status(request, pk):
    return JsonResponse(background.status(get_object_or_404(ScreeningRun, pk=pk), "run"))


GROUPS_PER_PAGE = 25
CLUSTERS_SHOWN = 50
PAIRS_SHOWN = 50


@require_GET
def exact_groups(request, pk):
    run = get_object_or_404(ScreeningRun.objects.select_related("corpus"), pk=pk)
    if run.status != ScreeningRun.Status.COMPLETE:
        messages.info(request, gettext("Run {pk} is {status}: its results appear when it is complete.").format(
            pk=run.pk, status=gettext(run.status)))
        return redirect(run)
    groups = (
        run.exact_groups.select_related("representative")
        .prefetch_related(Prefetch("members", queryset=ExactGroupMember.objects.select_related("document")))
        .order_by("-size", "representative__doc_id")
    )
    page = Paginator(groups, GROUPS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "screening/exact_groups.html", {"run": run, "page": page})


@require_http_methods(["GET", "POST"])
def labels(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    form = LabelsForm(request.POST or None, request.FILES or None)
    problems = []
    if request.method == "POST":
        if not request.user.has_perm(UPLOAD):
            raise PermissionDenied("Uploading labels needs the admin role.")
        if form.is_valid():
            file = form.cleaned_data["file"]
            try:
                label_set = evaluation.labelset_import(corpus=corpus, data=file.read(), original_name=file.name,
                                                       name=form.cleaned_data["name"], user=request.user)
            except evaluation.LabelsRejected as error:
                problems = error.problems
            else:
                messages.success(request, gettext("Label set {name}: {size} pairs, {positives} positive.").format(
                    name=label_set.name, size=LocalCount(label_set.size), positives=LocalCount(label_set.positives)))
                return redirect("screening:labels", name=corpus.name)
    return render(request, "screening/labels.html", {
        "corpus": corpus, "form": form, "problems": problems,
        "label_sets": evaluation.label_sets_visible(corpus, request.user).select_related("uploaded_by", "from_run"),
    })


def _thresholds(request) -> list[float]:
    """The thresholds asked for, or the defaults with a message when they are not numbers in [0, 1]."""
    text = request.GET.get("thresholds", "")
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        values = None
    if values is None or any(not 0 <= t <= 1 for t in values):
        messages.warning(request, gettext(
            "Ignored thresholds={text}: write numbers from 0 to 1, separated by commas.").format(
            text=repr(text[:40])))
        values = []
    return values or list(evaluation.DEFAULT_THRESHOLDS)


ERROR_KINDS = {"missed": metrics.MISSED_BY_LSH, "below": metrics.BELOW_THRESHOLD, "fp": metrics.FALSE_POSITIVE}
LABELLED_PER_PAGE = 50


def _labelled_rows(request, report) -> dict:
    """One page of the labelled pairs, filtered by the kind of error they make at one of the thresholds."""
    at = report.thresholds[len(report.thresholds) // 2]
    try:
        asked = float(request.GET.get("at", at))
        at = asked if asked in report.thresholds else at
    except ValueError:
        pass
    kind = request.GET.get("error", "")
    pairs = report.pairs
    if kind in ERROR_KINDS:
        pairs = [p for p in pairs if p.error(at) == ERROR_KINDS[kind]]
    elif kind == "errors":
        pairs = [p for p in pairs if p.error(at)]
    elif kind == "right":
        pairs = [p for p in pairs if not p.error(at)]
    page = Paginator(pairs, LABELLED_PER_PAGE).get_page(request.GET.get("page"))
    return {"rows": [(p, [(p.predicted(t), p.error(t)) for t in report.thresholds]) for p in page],
            "labelled_page": page, "error_kind": kind if kind in {*ERROR_KINDS, "errors", "right"} else "",
            "error_at": at, "error_counts": {name: sum(p.error(at) == text for p in report.pairs)
                                             for name, text in ERROR_KINDS.items()}}


@require_GET
def evaluation_page(request, pk):
    run = get_object_or_404(ScreeningRun.objects.complete().select_related("corpus"), pk=pk)
    label_sets = evaluation.label_sets_visible(run.corpus, request.user)
    chosen = label_sets.filter(pk=id_param(request, "labels") or 0).first() or label_sets.first()
    thresholds = _thresholds(request)
    split = request.GET.get("split", "") if request.GET.get("split") in ("tuning", "acceptance") else ""
    context = {"run": run, "label_sets": label_sets, "chosen": chosen, "split": split,
               "thresholds_text": ",".join(str(t) for t in thresholds), "audit_limit": evaluation.AUDIT_LIMIT}
    if chosen is not None:
        try:
            report = evaluation.run_evaluate(run=run, label_set=chosen, thresholds=thresholds, split=split)
        except evaluation.EvaluationRefused as error:
            messages.error(request, str(error))
            return redirect(run)
        context["report"] = report
        context.update(_labelled_rows(request, report))
        context["pr_chart"] = charts.lines({
            gettext("precision"): [(m.threshold, m.precision) for m in report.curve],
            gettext("recall"): [(m.threshold, m.recall) for m in report.curve],
            gettext("candidate recall"): [(m.threshold, m.candidate_recall) for m in report.curve],
        })
        bins = charts_bins(report.pairs)
        context["score_chart"] = charts.paired_histogram(*bins)
    context["audit_job"], context["audit"] = evaluation.audit_latest(run)
    context["model_in_use"] = suggestions.model_in_use(run.corpus)
    if context["audit_job"] is not None and context["audit_job"].is_active:
        context["audit_state"] = progress.read("audit", context["audit_job"].pk) or {}
    return render(request, "screening/evaluation.html", context)


@require_POST
@permission_required(START_RUN)
def model_train(request, pk):
    run = get_object_or_404(ScreeningRun.objects.complete(), pk=pk)
    label_set = get_object_or_404(run.corpus.label_sets, pk=id_param(request, "labels") or 0)
    back = f"{reverse('screening:evaluation', args=[run.pk])}?labels={label_set.pk}#suggestions"
    try:
        row = evaluation.model_train(run=run, label_set=label_set, user=request.user)
    except evaluation.EvaluationRefused as error:
        messages.error(request, str(error))
        return redirect(back)
    s = row.scores
    if row.in_use:
        messages.success(request, gettext(
            "Learned from {pairs} labelled pairs: {model:.3f} right in folds held out by source "
            "family (the rules: {rules:.3f}). It now suggests this corpus's verdicts.").format(
            pairs=s["pairs"], model=s["model_accuracy"], rules=s["rules_accuracy"]))
    else:
        messages.warning(request, gettext(
            "Learned, but not put in use: {model:.3f} right in held-out folds, below the rules' "
            "{rules:.3f}.").format(model=s["model_accuracy"], rules=s["rules_accuracy"]))
    return redirect(back)


@require_POST
@permission_required(START_RUN)
def audit_start(request, pk):
    run = get_object_or_404(ScreeningRun, pk=pk)
    back = reverse("screening:evaluation", args=[run.pk])
    try:
        audit = evaluation.audit_create(run=run, user=request.user)
        evaluation.audit_enqueue(audit=audit)
    except evaluation.EvaluationRefused as error:
        messages.error(request, str(error))
    except QueueUnavailable:
        messages.error(request, gettext("The audit could not be queued: the job queue is not reachable."))
    else:
        messages.success(request, gettext(
            "The all-pairs audit of run {pk} is queued; its result appears here.").format(pk=run.pk))
    return redirect(f"{back}?{request.GET.urlencode()}#audit" if request.GET else f"{back}#audit")


@require_GET
@permission_required(START_RUN)
def audit_status(request, pk):
    return JsonResponse(background.status(get_object_or_404(RunAudit, pk=pk), "audit"))


def charts_bins(pairs, bins: int = 20) -> tuple[list[int], list[int]]:
    positives, negatives = [0] * bins, [0] * bins
    for p in pairs:
        if p.jaccard is None:
            continue
        index = min(int(p.jaccard * bins), bins - 1)
        (positives if p.label == 1 else negatives)[index] += 1
    return positives, negatives


@require_GET
def compare(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    label_sets = evaluation.label_sets_visible(corpus, request.user)
    chosen = label_sets.filter(pk=id_param(request, "labels") or 0).first() or label_sets.first()
    thresholds = _thresholds(request)
    rows = evaluation.compare_runs(corpus=corpus, label_set=chosen, thresholds=thresholds) if chosen else []
    return render(request, "screening/compare.html", {
        "corpus": corpus, "label_sets": label_sets, "chosen": chosen, "rows": rows, "thresholds": thresholds,
    })
