from django.contrib import admin

from dedup_site.admin import ReadOnlyAdmin
from review.models import Arbitration, Judgement


@admin.register(Judgement)
class JudgementAdmin(ReadOnlyAdmin):
    list_display = ["pair", "reviewer", "verdict", "created_at"]
    list_filter = ["verdict"]


@admin.register(Arbitration)
class ArbitrationAdmin(ReadOnlyAdmin):
    list_display = ["pair", "arbiter", "verdict", "created_at"]
