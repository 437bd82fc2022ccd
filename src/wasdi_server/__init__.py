"""wasdi_server: a compact, self-hostable implementation of the WASDI service contract.

Names are imported on first use (module ``__getattr__``): a process that imports one part of the server (a boxed
reader imports the map drawing and the product readers) does not pay for the settings, pydantic or the app, and
``wasdi-server`` can say which extra is missing instead of an ImportError.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .settings import Settings, load_settings

__all__ = ["Settings", "create_app", "load_settings"]
_WHERE = {"Settings": ".settings", "load_settings": ".settings", "create_app": ".app"}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
