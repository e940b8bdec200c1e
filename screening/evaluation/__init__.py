"""Evaluation of runs against labels: `labelsets` (imported or made from verdicts), `report` (metrics per
threshold, splits, runs side by side), `audit` (every pair of a run, by a worker). The pure metrics live
in screening.engine.metrics. The service API other modules call is re-exported here."""

from screening.evaluation.audit import (  # noqa: F401
    AUDIT_LIMIT,
    Audit,
    audit_create,
    audit_enqueue,
    audit_execute,
    audit_fail,
    audit_latest,
    run_audit,
)
from screening.evaluation.labelsets import (  # noqa: F401
    EvaluationRefused,
    LabelsRejected,
    label_sets_visible,
    labelset_from_run,
    labelset_import,
)
from screening.evaluation.model import model_train, suggestions_refresh  # noqa: F401
from screening.evaluation.report import DEFAULT_THRESHOLDS, compare_runs, run_evaluate  # noqa: F401
