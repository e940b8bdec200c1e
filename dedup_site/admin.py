from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Evidence (sources, documents, judgements, arbitrations) can be read in the admin, never changed."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
