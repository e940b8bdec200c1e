from __future__ import annotations

import redis
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from dedup_site import progress
from dedup_site.roles import UPLOAD, permission_required
from screening import services
from screening.forms import UploadForm
from screening.models import Corpus, Document, Upload

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
    return render(request, "screening/corpus_detail.html", {
        "corpus": corpus, "page": page, "query": query, "uploads": uploads,
        "form": UploadForm(initial={"corpus": corpus.name}),
    })


@require_POST
@permission_required(UPLOAD)
def upload_create(request):
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect(request.POST.get("next") or "screening:corpus_list")
    file = request.FILES["file"]
    try:
        upload = services.upload_create(
            corpus_name=form.cleaned_data["corpus"], chunks=file.chunks(), size=file.size,
            original_name=file.name, language=form.cleaned_data["language"], user=request.user,
        )
    except services.UploadRefused as error:
        messages.error(request, f"Upload refused: {error}")
        return redirect("screening:corpus_list")
    try:
        services.upload_enqueue(upload=upload)
    except (redis.RedisError, OSError, RuntimeError) as error:
        services.upload_fail(upload_id=upload.pk, error=f"the job queue (Redis) is not reachable: {error}")
        messages.error(request, "The upload was stored but could not be queued: the job queue is not reachable. "
                                "Try again when it is back.")
    else:
        messages.success(request, f"{upload.original_name} is stored and queued for import.")
    return redirect(upload.corpus)


@require_GET
def upload_status(request, pk):
    upload = get_object_or_404(Upload, pk=pk)
    state = progress.read("upload", upload.pk) if upload.is_active else None
    return JsonResponse({
        "status": upload.status,
        "active": upload.is_active,
        "fraction": 1.0 if not upload.is_active else (state or {}).get("fraction", 0.0),
        "document_count": upload.document_count,
        "problem_count": upload.problem_count,
    })


@require_GET
def document_detail(request, pk):
    document = get_object_or_404(Document.objects.select_related("corpus", "upload__source"), pk=pk)
    return render(request, "screening/document_detail.html", {"document": document})
