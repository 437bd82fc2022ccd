"""The launcher: queued operations, their worker pool, and the registry of operation handlers."""

from . import (
    ops_apps,  # noqa: F401  (registers DEPLOYPROCESSOR, RUNPROCESSOR, ENVIRONMENTUPDATE ... : the apps)
    ops_graph,  # noqa: F401  (registers GRAPH)
    ops_products,  # noqa: F401  (registers INGEST, READMETADATA, DOWNLOAD, SHARE, PUBLISHBAND, DELETE)
)
from .operations import OPERATIONS, OperationContext, OperationFailed, OperationStopped, operation
from .pool import Launcher

__all__ = ["OPERATIONS", "Launcher", "OperationContext", "OperationFailed", "OperationStopped", "operation"]
