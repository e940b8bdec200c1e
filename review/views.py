from __future__ import annotations

from collections import Counter
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.datastructures import MultiValueDict
from django.utils.functional import SimpleLazyObject
from django.utils.translation import get_language, gettext, gettext_noop, ngettext, pgettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from dedup_site import accounts, background
from dedup_site.http import came_from, id_param
from dedup_site.links import link
from dedup_site.messages import form_errors
from dedup_site.numerals import LocalCount, isolated, local_digits
from dedup_site.queues import QueueUnavailable
from dedup_site.roles import ARBITRATE, EXPORT, REVIEW, START_RUN, UPLOAD, permission_required
from review import decisions, selectors, services
from review.forms import (
    KEYS,
    RETAINED_RADIOS,
    VERDICT_RADIOS,
    ArbitrationFilterForm,
    ArbitrationForm,
    JudgementForm,
    QueueFilterForm,
    ReviewPolicyForm,
    SheetForm,
    SignForm,
    radios,
)
from review.models import ReviewAction, SheetExport
from review.sheets import sheet_exports, signing
from screening import runs
from screening.evaluation.labelsets import EvaluationRefused
from screening.models import CandidatePair, Corpus, ScreeningRun
from screening.vocabulary import FINAL_VERDICTS, Verdict

BULK_VERDICTS = [v.value for v in FINAL_VERDICTS]  # in the vocabulary's order
FILTER_KEYS = ["corpus", "run", "pass_name", "min_score", "max_score", "cluster", "status", "signals", "suggestion",
               "min_confidence", "sort", "below"]


def _with(url: str, query: str) -> str:
    return f"{url}?{query}" if query else url


FILTER_FIELDS = frozenset(QueueFilterForm.base_fields)
# What else a queue's address may carry: its paging and a bulk decision's verdict.
QUEUE_PARAMETERS = frozenset({*FILTER_KEYS, *FILTER_FIELDS, "after", "before", "at", "verdict"})


def _unknown_parameters(request) -> list[str]:
    """Names in the address that no filter of the queue knows (a mistyped one would otherwise be dropped
    silently, and a bulk decision would cover more than was meant)."""
    return sorted(set(request.GET) - QUEUE_PARAMETERS)
# A cluster or bulk decision as the undo message names it.
ACTION_KINDS = {"cluster": gettext_noop("cluster"), "bulk": gettext_noop("bulk")}


@lru_cache(maxsize=1024)
def _cleaned_filters(blind: bool, given: tuple[tuple[str, tuple[str, ...]], ...], language: str) -> tuple[dict, tuple]:
    """The filter form's cleaned values and its errors for these query parameters: the same answer for the
    same parameters, so worked out once (building and cleaning the twelve-field form on every page was dear).
    `language` keys it too: the errors are in the request's language."""
    form = QueueFilterForm(MultiValueDict(dict(given)), blind=blind)
    form.is_valid()
    return form.cleaned_data, tuple((name, " ".join(errors)) for name, errors in form.errors.items())


def _filters(request, pair: CandidatePair | None = None) -> tuple[selectors.QueueFilter, str, QueueFilterForm]:
    """The queue filters from the query string (invalid values are ignored), and the string to carry them.
    With a pair, the filters stay in the pair's run: "next" after it never wanders into another run.
    The form comes back unbuilt (lazy): only the queue page's filter form, when not kept, draws it."""
    blind = not selectors.sees_all(request.user)
    cleaned, errors = _cleaned_filters(blind, tuple(sorted(
        (k, tuple(v)) for k, v in request.GET.lists() if k in FILTER_FIELDS)), get_language())
    for name, message in errors:
        messages.warning(request, gettext("Ignored {name}={value}: {message}").format(
            name=name, value=repr(request.GET.get(name, "")[:40]), message=message))
    data = {k: v for k, v in cleaned.items() if v not in (None, "", False)}
    if data.get("min_score", 0) > data.get("max_score", 1):
        messages.warning(request, gettext(
            "The score range {low} – {high} was upside down; showing {high} – {low}.").format(
            low=data["min_score"], high=data["max_score"]))
        data["min_score"], data["max_score"] = data["max_score"], data["min_score"]
    if pair is not None and data.get("run") != pair.run_id:
        data["run"] = pair.run_id
        data.pop("cluster", None)  # cluster numbers belong to a run
    elif pair is None and "run" not in data:
        # One run at a time: the newest complete run (of the corpus, when one is named).
        latest = selectors.latest_run(data.get("corpus", ""))
        if latest is not None:
            data["run"] = latest
    flt = selectors.QueueFilter(**{k: v for k, v in data.items() if k in selectors.QueueFilter.__dataclass_fields__})
    carried = urlencode({k: data[k] for k in FILTER_KEYS if k in data})
    return flt, carried, SimpleLazyObject(lambda: QueueFilterForm(request.GET, blind=blind))


@require_GET
@permission_required(REVIEW)
def queue(request):
    flt, carried, form = _filters(request)
    for name in _unknown_parameters(request):
        messages.warning(request, gettext("Ignored {name}: no filter of the queue has that name.").format(
            name=isolated(name)))
    all_visible = selectors.sees_all(request.user)
    run = selectors.complete_run(flt.run) if flt.run else None
    after, before = request.GET.get("after", ""), request.GET.get("before", "")
    at = id_param(request, "at") or 0
    try:
        for cursor in filter(None, (after, before)):
            selectors.after_cursor(flt.sort, cursor)  # raises BadCursor for what this program did not write
    except selectors.BadCursor:
        messages.warning(request, gettext(
            "Ignored {name}={value}: not a position in this queue; showing the first page.").format(
            name="before" if before else "after", value=repr((before or after)[:40])))
        after = before = ""
    if run is None:
        return render(request, "review/queue.html", {"form": form, "runs": selectors.reviewable_runs()})
    page = selectors.queue_page(flt, after=after, before=before, reviewer=request.user, all_visible=all_visible,
                               run=run)
    if not after and not before:
        at = 0
    # One link for the page, not one per row (a reverse() costs a translation and a resolver lookup).
    prefix, suffix = link("review:pair", 0).removesuffix("0/"), f"?{carried}" if carried else ""
    stamp = selectors.stamp_of(run)  # read with the run, for both counts below
    return render(request, "review/queue.html", {
        "rows": [(p, f"{prefix}{p.pk}/{suffix}") for p in page.rows], "page": page, "carried": carried,
        "form": form, "run": run, "runs": selectors.reviewable_runs(), "total": selectors.queue_count(flt, stamp),
        "first_row": at + 1, "last_row": at + len(page.rows), "next_at": at + len(page.rows),
        "prev_at": max(0, at - 50), "threshold": selectors.review_threshold(run.near, run.config),
        "below": flt.below, "progress": selectors.run_progress(run, request.user, blind=not all_visible, stamp=stamp),
        "carried_pairs": [(k, v) for k, v in parse_qsl(carried)], "bulk_verdicts": BULK_VERDICTS,
        "held": selectors.leases_held(request.user),
        "links": {"dashboard": link("review:dashboard", run.pk), "bulk": link("review:bulk_preview")},
        # The filter form is the same HTML for the same filters, run and role: drawn once and kept (its ten
        # widgets were dear to draw).
        "filters_key": (all_visible, run.pk, carried, [(k, v) for k, v in request.GET.lists() if k in FILTER_FIELDS]),
    })


@require_GET
@permission_required(REVIEW)
def next_pair(request):
    flt, carried, _ = _filters(request)
    try:
        pair = services.next_pair(flt, request.user)
    except services.LeaseCapReached as error:
        messages.error(request, gettext("No pair handed out: {error}.").format(error=error))
        return redirect(f"{link('review:queue')}?{carried}")
    if pair is None:
        messages.info(request, gettext("Nothing left for you to review with these filters."))
        return redirect(f"{link('review:queue')}?{carried}")
    return redirect(f"{link('review:pair', pair.pk)}?{carried}")


@require_GET
@permission_required(REVIEW)
def pair_review(request, pk):
    pair = selectors.pair_for_review(pk, request.user)
    if pair is None:
        raise Http404("No such pair in a complete run.")
    pair = runs.pair_evidence_complete(pair=runs.with_documents(pair))
    _, carried, _ = _filters(request, pair)
    # Opening a pair takes no lease (only "next" does): it can be judged while it still wants a reviewer.
    view = selectors.pair_view(pair, request.user)
    leased, holding = services.lease_state(pair=pair, reviewer=request.user, current=view["current"])
    context = {**runs.pair_context(pair), **view}
    context.update({
        "carried": carried, "keys": KEYS, "holding": holding, "leased": leased,
        "links": {"judge": link("review:judge", pair.pk), "skip": link("review:skip", pair.pk),
                  "lease": link("review:lease", pair.pk)},
        "renew_seconds": max(30, settings.DEDUP_LEASE_SECONDS // 3),
        "verdict_radios": VERDICT_RADIOS, "retained_radios": RETAINED_RADIOS,
    })
    return render(request, "review/pair.html", context)


@require_POST
@permission_required(REVIEW)
def judge(request, pk):
    # The run and both doc_ids in one query (not the document bodies): the form and the message need them.
    pair = get_object_or_404(CandidatePair.objects.select_related("run", "left", "right").defer(
        "left__body", "right__body"), pk=pk)
    _, carried, _ = _filters(request, pair)
    form = JudgementForm(request.POST, presets=selectors.preset_reasons_of(pair.run.corpus_id))
    if not form.is_valid():
        form_errors(request, form, "Not saved: ")
        return redirect(f"{link('review:pair', pk)}?{carried}")
    try:
        services.judgement_record(pair=pair, reviewer=request.user, **form.cleaned_data)
    except services.ReviewRefused as error:
        messages.error(request, gettext("Not saved: {error}").format(error=error))
        return redirect(f"{link('review:pair', pk)}?{carried}")
    messages.success(request, gettext("Saved {verdict} for {left} · {right}.").format(
        verdict=gettext(Verdict(form.cleaned_data["verdict"]).label), left=pair.left.doc_id, right=pair.right.doc_id))
    return redirect(f"{link('review:next')}?{carried}")


@require_POST
@permission_required(REVIEW)
def undo(request):
    _, carried, _ = _filters(request)
    try:
        withdrawal = decisions.undo_last(request.user)
    except services.ReviewRefused as error:
        messages.error(request, gettext("Not undone: {error}").format(error=error))
        if error.pair_id:
            return redirect(f"{link('review:pair', error.pair_id)}?{carried}")
        return redirect(f"{link('review:queue')}?{carried}")
    if withdrawal is None:
        messages.info(request, gettext("Nothing to undo."))
        return redirect(f"{link('review:queue')}?{carried}")
    if isinstance(withdrawal, ReviewAction):  # a whole cluster or bulk decision
        undone = withdrawal.undoes
        messages.success(request, ngettext(
            "Withdrew your {kind} decision #{pk}: {n} judgement withdrawn (every record is kept).",
            "Withdrew your {kind} decision #{pk}: {n} judgements withdrawn (every record is kept).",
            withdrawal.judgements).format(kind=gettext(ACTION_KINDS[undone.kind]), pk=LocalCount(undone.pk),
                                          n=LocalCount(withdrawal.judgements)))
        if undone.kind == ReviewAction.Kind.CLUSTER:
            return redirect("review:cluster", run_id=undone.run_id, number=undone.cluster)
        return redirect(f"{link('review:queue')}?{carried}")
    messages.success(request, gettext("Withdrew your {verdict} on this pair (both records are kept).").format(
        verdict=gettext(Verdict(withdrawal.supersedes.verdict).label)))
    return redirect(f"{link('review:pair', withdrawal.pair_id)}?{carried}")


@require_POST
@permission_required(REVIEW)
def skip(request, pk):
    pair = get_object_or_404(CandidatePair.objects.of_complete_runs(), pk=pk)
    _, carried, _ = _filters(request, pair)
    services.pair_skip(pair=pair, reviewer=request.user)
    return redirect(f"{link('review:next')}?{carried}")


@require_POST
@permission_required(REVIEW)
def lease(request, pk):
    """Renew a lease "next" gave while the pair's page is open (never a new one); `release` lets go when the
    page is left."""
    pair = get_object_or_404(CandidatePair.objects.of_complete_runs(), pk=pk)
    if request.POST.get("release"):
        services.lease_release(pair_id=pair.pk, reviewer=request.user)
        return HttpResponse(status=204)
    return JsonResponse({"held": services.lease_renew(pair_id=pair.pk, reviewer=request.user),
                         "seconds": settings.DEDUP_LEASE_SECONDS})


@require_POST
def leases_release(request):  # anyone logged in: the service allows one's own, or an admin's release of others
    """Let go of every pair I hold (or, for an admin on a run's dashboard, of one reviewer's in that run)."""
    reviewer = request.user
    run_id = id_param(request, "run")
    if request.POST.get("reviewer"):
        reviewer = get_object_or_404(get_user_model(), pk=_id(request.POST["reviewer"]))
    try:
        released = services.leases_release(actor=request.user, reviewer=reviewer, run_id=run_id)
    except services.ReviewRefused as error:
        raise PermissionDenied(str(error)) from None
    if reviewer.pk == request.user.pk:
        done = ngettext("Released %(count)s of your pair.", "Released %(count)s of your pairs.", released)
    else:
        done = ngettext("Released %(count)s of %(reviewer)s's pair.", "Released %(count)s of %(reviewer)s's pairs.",
                        released)
    messages.success(request, done % {"count": LocalCount(released), "reviewer": reviewer.get_username()})
    # Back where the form was (the dashboard, the queue, another page), else a page this user may see: an admin
    # who releases someone's pairs does not review, so the queue would be a 403 after a release that happened.
    if back := came_from(request):
        return redirect(back)
    if run_id and (reviewer.pk != request.user.pk or not request.user.has_perm(REVIEW)):
        return redirect("review:dashboard", run_id=run_id)
    if request.user.has_perm(REVIEW):
        return redirect(link("review:queue"))
    return redirect(settings.LOGIN_REDIRECT_URL)


def _arbitration_filters(request) -> tuple[selectors.ArbitrationFilter, str, ArbitrationFilterForm]:
    form = ArbitrationFilterForm(request.GET)
    if not form.is_valid():
        for name, errors in form.errors.items():
            messages.warning(request, gettext("Ignored {name}={value}: {message}").format(
                name=name, value=repr(request.GET.get(name, "")[:40]), message=" ".join(errors)))
    data = {k: v for k, v in form.cleaned_data.items() if v not in (None, "", False)}
    return selectors.ArbitrationFilter(**data), urlencode(data), form


@require_GET
@permission_required(ARBITRATE)
def arbitration_queue(request):
    flt, carried, form = _arbitration_filters(request)
    return render(request, "review/arbitration_queue.html", {
        "pairs": selectors.arbitration_cases(request.user, flt=flt), "form": form, "carried": carried,
        "total": selectors.arbitration_count(flt), "runs": selectors.reviewable_runs()})


@require_GET
@permission_required(ARBITRATE)
def arbitration_next(request):
    """The next case this arbiter may settle (after `after`, when given), with the queue's filters."""
    flt, carried, _ = _arbitration_filters(request)
    pair = selectors.next_case(request.user, flt, after=id_param(request, "after"))
    if pair is None:
        messages.info(request, gettext("No case left that you may settle with these filters."))
        return redirect(_with(link("review:arbitration_queue"), carried))
    return redirect(_with(link("review:arbitrate", pair.pk), carried))


@require_http_methods(["GET", "POST"])
@permission_required(ARBITRATE)
def arbitrate(request, pk):
    pair = runs.pair_evidence_complete(pair=runs.with_documents(
        get_object_or_404(CandidatePair.objects.of_complete_runs().select_related("run__corpus"), pk=pk)))
    _, carried, _ = _arbitration_filters(request)
    presets = selectors.preset_reasons_of(pair.run.corpus_id)
    form = ArbitrationForm(request.POST or None, presets=presets, initial={"retained": "both"})
    if request.method == "POST" and form.is_valid():
        try:
            services.arbitration_record(pair=pair, arbiter=request.user, **form.cleaned_data)
        except services.ReviewRefused as error:
            messages.error(request, gettext("Not saved: {error}").format(error=error))
        else:
            verdict = form.cleaned_data["verdict"]
            messages.success(request, gettext("Settled {left} · {right} as {verdict}.").format(
                left=isolated(pair.left.doc_id), right=isolated(pair.right.doc_id),
                verdict=gettext(Verdict(verdict).label)))
            return redirect(_with(link("review:arbitration_next"), carried))
    elif request.method == "POST":
        form_errors(request, form, "Not saved: ")
    context = runs.pair_context(pair)
    own = selectors.took_part(pair, request.user)
    context.update({
        "carried": carried, "presets": presets, "cases_left": selectors.arbitration_count(),
        "keys": KEYS, "own_case": own,
        # A refused decision comes back with what was picked still picked.
        "verdict_radios": radios(ArbitrationForm, "verdict", checked=form["verdict"].value() or ""),
        "retained_radios": radios(ArbitrationForm, "retained", checked=form["retained"].value() or ""),
        "status_label": selectors.status_label(pair.status),
        "self_allowed": own and services.self_arbitration_allowed(pair.run.corpus_id),
        "judgements": pair.judgements.select_related("reviewer").order_by("created_at", "id"),
        "arbitrations": pair.arbitrations.select_related("arbiter"), "reason_shown": selectors.reason_shown,
    })
    return render(request, "review/arbitrate.html", context)


@require_http_methods(["GET", "POST"])
@permission_required(START_RUN)
def policy(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    current = selectors.review_policy_of(corpus)
    form = ReviewPolicyForm(request.POST or None, presets=selectors.preset_reasons_of(corpus.pk), initial={
        "allow_self_arbitration": bool(current and current.allow_self_arbitration)})
    if request.method == "POST" and form.is_valid():
        services.review_policy_set(corpus=corpus, user=request.user, preset_reasons=form.presets(),
                                   allow_self_arbitration=form.cleaned_data["allow_self_arbitration"])
        messages.success(request, gettext("Review settings of {name} saved.").format(name=corpus.name))
        return redirect("review:policy", name=corpus.name)
    return render(request, "review/policy.html", {"corpus": corpus, "form": form, "policy": current})


@require_POST
@permission_required(UPLOAD)
def labels_from_verdicts(request, pk):
    run = get_object_or_404(ScreeningRun.objects.complete(), pk=pk)
    try:
        label_set = services.labelset_from_verdicts(run=run, user=request.user)
    except EvaluationRefused as error:
        messages.error(request, str(error))
        return redirect(run)
    messages.success(request, ngettext(
        "Label set {name}: {size} settled pair.", "Label set {name}: {size} settled pairs.",
                                       label_set.size).format(name=isolated(label_set.name),
                                                              size=LocalCount(label_set.size)))
    return redirect(f"{link('screening:evaluation', run.pk)}?labels={label_set.pk}")


@require_GET
def dashboard(request, run_id):
    if not (request.user.has_perm(REVIEW) or request.user.has_perm(START_RUN)):
        raise PermissionDenied(gettext("The dashboard is for reviewers and admins."))
    run = get_object_or_404(ScreeningRun.objects.select_related("corpus"), pk=run_id)
    return render(request, "review/dashboard.html", {
        "run": run, "board": selectors.dashboard(run, request.user),
        "leases": selectors.leases_of_run(run) if request.user.has_perm(START_RUN) else None})


MAX_LISTED_APART = 500  # records made with others' tokens, each to be accepted by its own box; the rest wait


@require_http_methods(["GET", "POST"])
def sign(request):
    if not (request.user.has_perm(REVIEW) or request.user.has_perm(ARBITRATE)):
        raise PermissionDenied(gettext("Signing is for reviewers."))
    form = SignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            # Only what the page listed can be refused (one field: a box and a hidden input a record would pass
            # Django's 1,000-field limit at 500 records); the rest were never shown, and wait for the next time.
            listed = {key for keys in request.POST.getlist("listed") for key in keys.split()}
            signature = services.signature_record(reviewer=request.user, password=form.cleaned_data["password"],
                                                  accepted=set(request.POST.getlist("accept")), listed=listed)
        except services.ReviewRefused as error:
            messages.error(request, str(error))
        else:
            messages.success(request, gettext("Signed {n} judgements as {name} at {when} UTC.").format(
                n=signature.records, name=signature.full_name, when=f"{signature.signed_at:%Y-%m-%d %H:%M:%S}"))
            refused = sum(len(ids) for ids in signature.refused.values())
            if refused:
                messages.warning(request, gettext(
                    "{n} records made with API tokens someone else made were not accepted: they stay unsigned, "
                    "and review sheets say refused.").format(n=refused))
            waiting = sum(r.by_others_token for r in selectors.unsigned_records(request.user)) - refused
            if waiting > 0:
                messages.warning(request, ngettext(
                    "{n} record made with an API token someone else made was not on the page you signed: it is "
                    "neither signed nor refused, and is listed when you sign next.",
                    "{n} records made with API tokens someone else made were not on the page you signed: they are "
                    "neither signed nor refused, and are listed when you sign next.", waiting).format(
                    n=LocalCount(waiting)))
            return redirect("review:sign")
    records = selectors.unsigned_records(request.user)
    own = [r for r in records if not r.by_others_token]
    others = [r for r in records if r.by_others_token][:MAX_LISTED_APART]
    return render(request, "review/sign.html", {
        "form": form, "meaning": signing.REVIEWER_MEANING, "unsigned": len(records),
        "records": Paginator(own, 50).get_page(request.GET.get("page")),
        "others": others, "listed": " ".join(r.key for r in others),
        "others_count": len(records) - len(own), "listed_apart": MAX_LISTED_APART,
        "by_run": [(run, corpus, n) for (run, corpus), n in Counter((r.run_id, r.corpus) for r in own).items()],
        "chosen": accounts.chosen_by_other(request.user),
        "signatures": selectors.signatures_of(request.user),
    })


@require_POST
@permission_required(EXPORT)
def sheet_start(request, run_id):
    run = get_object_or_404(ScreeningRun, pk=run_id)
    form = SheetForm(request.POST)
    if not form.is_valid():
        form_errors(request, form, "Not exported: ")
        return redirect(run)
    try:
        selection = sheet_exports.Selection(**form.cleaned_data)
        export = sheet_exports.sheet_export_create(run=run, user=request.user, selection=selection)
        sheet_exports.sheet_export_enqueue(export=export)
    except services.ReviewRefused as error:
        messages.error(request, str(error))
    except QueueUnavailable:
        messages.error(request, gettext("The export could not be queued: the job queue is not reachable."))
    else:
        messages.success(request, gettext(
            "Sheet export {pk} is queued; it appears below when ready.").format(pk=export.pk))
    return redirect(f"{run.get_absolute_url()}#sheets")


@require_GET
@permission_required(EXPORT)
def sheet_status(request, pk):
    return JsonResponse(background.status(get_object_or_404(SheetExport, pk=pk), "sheet"))


@require_GET
@permission_required(EXPORT)
def sheet_download(request, pk, part):
    if part not in ("csv", "manifest"):
        raise Http404("a sheet export has a csv and a manifest")
    export = get_object_or_404(SheetExport, pk=pk, status=SheetExport.Status.COMPLETE)
    csv_path, manifest_path = sheet_exports.export_paths(export)
    path = csv_path if part == "csv" else manifest_path
    content_type = "text/csv; charset=utf-8" if part == "csv" else "application/json"
    found = sheet_exports.export_object(export, part)
    if found is not None:  # in a bucket that is never public: a short-lived link, after the permission check
        bucket, key = found
        return redirect(bucket.presigned_get(key, path.name, content_type, settings.DOWNLOAD_URL_SECONDS))
    return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name, content_type=content_type)  # noqa: SIM115


@require_GET
def signing_key(request):
    key = sheet_exports.site_key()
    if request.GET.get("download"):
        response = HttpResponse(signing.public_pem(key), content_type="application/x-pem-file")
        response["Content-Disposition"] = 'attachment; filename="dedup-review-signing-key.pub.pem"'
        return response
    return render(request, "review/signing_key.html", {
        "pem": signing.public_pem(key).decode(), "fingerprint": signing.fingerprint(key)})


# --- clusters and bulk decisions --------------------------------------------------------------------


@require_GET
@permission_required(REVIEW)
def cluster(request, run_id, number):
    run = get_object_or_404(ScreeningRun.objects.complete().select_related("corpus"), pk=run_id)
    view = selectors.cluster_view(run, number, request.user)
    if view is None:
        raise Http404(f"run {run.pk} has no cluster {number}")
    # Opening a cluster takes no lease: "next cluster" or the page's Start does (decisions.cluster_hold).
    return render(request, "review/cluster.html", {
        "run": run, "view": view, "held": selectors.leases_in_cluster(run, number, request.user),
        "keys": KEYS, "presets": selectors.preset_reasons_of(run.corpus_id), "default_verdict": Verdict.MERGE_ENTRY,
        "splits": decisions.SPLIT_VERDICTS,
        "verdict_radios": [r for r in VERDICT_RADIOS if r[0] in FINAL_VERDICTS],  # a family is decided, not sent on
        "renew_seconds": max(30, settings.DEDUP_LEASE_SECONDS // 3),
    })


@require_POST
@permission_required(REVIEW)
def cluster_decide(request, run_id, number):
    run = get_object_or_404(ScreeningRun.objects.complete(), pk=run_id)
    presets = selectors.preset_reasons_of(run.corpus_id)
    verdict = request.POST.get("verdict", "")
    reason = request.POST.get("reason", "").strip() or presets.get(verdict, "")
    splits = {_id(k.removeprefix("split_")): v for k, v in request.POST.items() if k.startswith("split_") and v}
    try:
        action = decisions.cluster_decide(run=run, cluster=number, reviewer=request.user,
                                          keeper=_id(request.POST.get("keeper", "")), verdict=verdict,
                                          reason=reason, splits=splits)
    except services.ReviewRefused as error:
        messages.error(request, gettext("Not recorded: {error}").format(error=error))
        return redirect("review:cluster", run_id=run.pk, number=number)
    counts = pgettext("between the items of a short list", ", ").join(
        f"{LocalCount(n)} {gettext(Verdict(v).label)}" for v, n in sorted(_verdict_counts(action).items()))
    messages.success(request, ngettext("Cluster {number}: {n} judgement recorded ({counts}), keeping {keeper}.",
                                       "Cluster {number}: {n} judgements recorded ({counts}), keeping {keeper}.",
                                       action.judgements).format(
        number=LocalCount(number), n=LocalCount(action.judgements), counts=counts,
        keeper=isolated(action.selection["keeper_doc_id"])))
    return redirect(f"{link('review:cluster_next', run.pk)}?after={number}")


def _verdict_counts(action: ReviewAction) -> dict[str, int]:
    return dict(Counter(action.judgement_rows.values_list("verdict", flat=True)))


def _id(text: str) -> int:
    """A document id from a form field; 0 (no such document) for anything else."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else 0


@require_GET
@permission_required(REVIEW)
def cluster_next(request, run_id):
    run = get_object_or_404(ScreeningRun.objects.complete(), pk=run_id)
    number = decisions.next_cluster(run, request.user, after=id_param(request, "after"))
    if number is None:
        messages.info(request, gettext("No cluster of run {pk} is left for you to decide.").format(pk=run.pk))
        return redirect(f"{link('review:queue')}?run={run.pk}&sort=cluster")
    _cluster_hold(request, run, number)
    return redirect("review:cluster", run_id=run.pk, number=number)


@require_POST
@permission_required(REVIEW)
def cluster_hold(request, run_id, number):
    """The cluster page's Start: hold its open pairs for me, as "next cluster" does."""
    run = get_object_or_404(ScreeningRun.objects.complete(), pk=run_id)
    _cluster_hold(request, run, number)
    return redirect("review:cluster", run_id=run.pk, number=number)


def _cluster_hold(request, run: ScreeningRun, number: int) -> None:
    held, wanted, refusal = decisions.cluster_hold(run=run, cluster=number, reviewer=request.user)
    if refusal:
        messages.warning(request, gettext(
            "Holding {held} of the {wanted} pairs of cluster {number} you may judge: {refusal}.").format(
            held=LocalCount(held), wanted=LocalCount(wanted), number=LocalCount(number), refusal=refusal))
    elif wanted:
        messages.info(request, ngettext(
            "Holding the {held} pair of cluster {number} you may judge for you ({minutes} minutes).",
            "Holding the {held} pairs of cluster {number} you may judge for you ({minutes} minutes).", held).format(
            held=LocalCount(held), number=LocalCount(number), minutes=LocalCount(settings.DEDUP_LEASE_SECONDS // 60)))


def _shown_filters(request) -> list[tuple[str, str]]:
    """The queue filters a bulk decision covers, as the filter form names them: (label, value shown)."""
    form = QueueFilterForm(blind=not selectors.sees_all(request.user))
    shown = []
    for key, value in request.GET.items():
        if key not in FILTER_KEYS:
            continue
        field = form.fields.get(key)
        choices = {str(k): str(v) for k, v in getattr(field, "choices", ())}
        shown.append((str(field.label) if field else key,
                      choices.get(value) or local_digits(value, get_language() or "")))
    return shown


@require_GET
@permission_required(REVIEW)
def bulk_preview(request):
    flt, carried, _ = _filters(request)
    verdict = request.GET.get("verdict", "")
    run = ScreeningRun.objects.complete().filter(pk=flt.run or 0).first()
    try:
        if unknown := _unknown_parameters(request):
            raise services.ReviewRefused(gettext("no filter is named %(names)s: check the address") % {
                "names": pgettext("between the items of a short list", ", ").join(unknown)})
        if run is None:
            raise services.ReviewRefused(gettext("a bulk decision takes the pairs of one complete run: choose the run"))
        plan = decisions.bulk_plan(flt=flt, reviewer=request.user, verdict=verdict)
    except services.ReviewRefused as error:
        messages.error(request, gettext("No bulk decision: {error}").format(error=error))
        return redirect(_with(link("review:queue"), carried))
    return render(request, "review/bulk_preview.html", {
        "plan": plan, "verdict": verdict, "carried": carried, "count": len(plan.rows),
        "rows": plan.rows[:50], "filters": _shown_filters(request),
        "reason": selectors.preset_reasons_of(run.corpus_id).get(verdict, ""),
        "skipped": [(gettext(why), len(ids)) for why, ids in plan.skipped.items()],
    })


@require_POST
@permission_required(REVIEW)
def bulk_confirm(request):
    flt, carried, _ = _filters(request)
    verdict = request.POST.get("verdict", "")
    filters = dict(parse_qsl(carried))  # the filters as applied (what was ignored is not recorded)
    try:
        if unknown := _unknown_parameters(request):
            raise services.ReviewRefused(gettext("no filter is named %(names)s: check the address") % {
                "names": pgettext("between the items of a short list", ", ").join(unknown)})
        if not ScreeningRun.objects.complete().filter(pk=flt.run or 0).exists():
            raise services.ReviewRefused(gettext("a bulk decision takes the pairs of one complete run: choose the run"))
        action = decisions.bulk_decide(flt=flt, reviewer=request.user, verdict=verdict, token=request.POST.get(
            "token", ""), reason=request.POST.get("reason", ""), filters=filters)
    except services.ReviewRefused as error:
        messages.error(request, gettext("Not recorded: {error}").format(error=error))
        return redirect(f"{link('review:bulk_preview')}?{carried}&verdict={verdict}")
    messages.success(request, ngettext(
        "Bulk decision #{pk}: {n} judgement recorded as {verdict} (u, or Undo, withdraws it).",
        "Bulk decision #{pk}: {n} judgements recorded as {verdict} (u, or Undo, withdraws them all).",
        action.judgements).format(pk=LocalCount(action.pk), n=LocalCount(action.judgements),
                                  verdict=gettext(Verdict(verdict).label)))
    return redirect(f"{link('review:queue')}?{carried}")
