"""RQ jobs of the review app: thin functions that take ids, load rows and call one service."""

from __future__ import annotations

import traceback

from dedup_site import progress
from review import sheets
from review.models import SheetExport


def sheet_job(export_id: int) -> dict:
    export = SheetExport.objects.select_related("run__corpus", "exported_by").get(pk=export_id)
    try:
        export = sheets.sheet_export_build(
            export=export, on_progress=lambda fraction: progress.report("sheet", export_id, fraction, "rows"))
    except Exception:
        sheets.sheet_export_fail(export_id=export_id, error=traceback.format_exc(limit=5))
        raise
    return {"rows": export.row_count, "csv_sha256": export.csv_sha256}


def sheet_job_failed(job, connection, exc_type, exc_value, tb) -> None:
    sheets.sheet_export_fail(export_id=int(job.args[0]), error=f"{exc_type.__name__}: {exc_value}")
