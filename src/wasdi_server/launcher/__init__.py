"""The launcher: queued operations, their worker pool, and the registry of operation handlers.

The handlers (``ops_apps``, ``ops_graph``, ``ops_products``) register themselves when imported; the composition
root imports them, since they use the services, which use parts of the launcher (``engines``).  The names below
are imported on first use (module ``__getattr__``): a boxed reader, which imports ``launcher.box``'s reading parts
only, does not load the pool, the operations and the rules they call at every start."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .operations import OPERATIONS, OperationContext, OperationFailed, OperationStopped, operation
    from .pool import Launcher

__all__ = ["OPERATIONS", "Launcher", "OperationContext", "OperationFailed", "OperationStopped", "operation"]
_WHERE = {"Launcher": ".pool", **dict.fromkeys(
    ["OPERATIONS", "OperationContext", "OperationFailed", "OperationStopped", "operation"], ".operations")}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
