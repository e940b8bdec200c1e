from django.contrib import admin

from screening.models import Corpus, Document, SourceFile, Upload


class ReadOnlyAdmin(admin.ModelAdmin):
    """Sources, uploads and documents are evidence: the admin may look, never change or delete."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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
