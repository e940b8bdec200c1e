from django.contrib import admin

from review.models import Arbitration, Judgement


class InsertOnlyAdmin(admin.ModelAdmin):
    """Judgements and arbitrations can be read here, never changed or deleted."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Judgement)
class JudgementAdmin(InsertOnlyAdmin):
    list_display = ["pair", "reviewer", "verdict", "created_at"]
    list_filter = ["verdict"]


@admin.register(Arbitration)
class ArbitrationAdmin(InsertOnlyAdmin):
    list_display = ["pair", "arbiter", "verdict", "created_at"]
