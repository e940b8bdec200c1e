from django.contrib import admin

from dedup_site.admin import ReadOnlyAdmin
from screening.models import Corpus, Document, SourceFile, Upload


@admin.register(Corpus)
class CorpusAdmin(ReadOnlyAdmin):
    list_display = ["name", "created_by", "created_at"]


@admin.register(SourceFile)
class SourceFileAdmin(ReadOnlyAdmin):
    list_display = ["sha256", "size", "stored_at"]


@admin.register(Upload)
class UploadAdmin(ReadOnlyAdmin):
    list_display = ["original_name", "corpus", "status", "document_count", "uploaded_by", "uploaded_at"]
    list_filter = ["status", "corpus"]


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ["doc_id", "corpus", "source_id", "version", "language"]
    list_filter = ["corpus", "language"]
    search_fields = ["doc_id", "source_id", "title"]
