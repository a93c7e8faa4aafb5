"""Dask's own logs kept silent in a local cluster's worker processes (runtime/parallel.py).

Imported only where a cluster starts: importing `distributed` costs the CLI half a second.
"""

from __future__ import annotations

import logging
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

DASK_LOG_LEVEL = logging.CRITICAL


class QuietDaskLogs(WorkerPlugin):
    """Sets Dask's loggers to CRITICAL in every worker process, also one restarted later. A worker
    whose heartbeat races the scheduler's shutdown logs an ERROR with a traceback after a clean run;
    everything that matters reaches the sweep's process anyway: a point's failure as its Outcome, a
    cluster that cannot start or a lost worker as an exception. (`LocalCluster(silence_logs=...)`
    reaches only the process that starts the cluster and the nannies.)"""

    name = "phalanx-quiet-dask-logs"

    def setup(self, worker: Any) -> None:
        logging.getLogger("distributed").setLevel(DASK_LOG_LEVEL)
