"""Screening runs, from a corpus's documents to published pairs:

- `lifecycle`: a run's record (configuration, versions, manifest) and its states: create, queue, retry, fail;
- `exact`: the exact pass (doc-content-v1);
- `near`: the near pass over the database (sign, band, verify; the incremental index);
- `pipeline`: the steps in order, and the whole run in one process;
- `fanout`: the same steps spread over workers through Redis (the only module that knows its keys);
- `publish`: every result written at once with the status;
- `selectors`: reads for pages and exports.

The service API other modules call is re-exported here.
"""

from screening.runs.lifecycle import (  # noqa: F401
    STAGES,
    RunOptions,
    RunRefused,
    near_config_of,
    run_create,
    run_enqueue,
    run_fail,
    run_retry,
    run_start,
)
from screening.runs.pipeline import run_execute  # noqa: F401
from screening.runs.publish import pair_evidence_complete, run_evidence_complete  # noqa: F401
from screening.runs.selectors import (  # noqa: F401
    PAIR_COLUMNS,
    pair_context,
    pair_rows,
    run_summary,
    with_documents,
)
