"""The launcher: queued operations, their worker pool, and the registry of operation handlers.

The handlers (``ops_apps``, ``ops_graph``, ``ops_products``) register themselves when imported; the composition
root imports them, since they use the services, which use parts of the launcher (``engines``)."""

from .operations import OPERATIONS, OperationContext, OperationFailed, OperationStopped, operation
from .pool import Launcher

__all__ = ["OPERATIONS", "Launcher", "OperationContext", "OperationFailed", "OperationStopped", "operation"]
