"""RQ jobs of the review app: each takes ids, loads its row and calls one service."""

from __future__ import annotations

from dedup_site import background
from review.models import SheetExport
from review.sheets import sheet_exports


def sheet_job(export_id: int) -> dict:
    export = SheetExport.objects.select_related("run__corpus", "exported_by").get(pk=export_id)
    with background.failure_recorded(lambda error: sheet_exports.sheet_export_fail(export_id=export_id, error=error)):
        export = sheet_exports.sheet_export_build(export=export, on_progress=background.reporter("sheet", export_id))
    return {"rows": export.row_count, "csv_sha256": export.csv_sha256}


def sheet_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    sheet_exports.sheet_export_fail(export_id=int(job.args[0]), error=background.failure_message(exc_type, exc_value))
