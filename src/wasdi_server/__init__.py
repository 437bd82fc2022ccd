"""wasdi_server: a compact, self-hostable implementation of the WASDI service contract."""

from __future__ import annotations

from typing import Any

from .settings import Settings, load_settings

__all__ = ["Settings", "create_app", "load_settings"]


def __getattr__(name: str) -> Any:
    # Loaded on first use, so ``wasdi-server`` can say which extra is missing instead of an ImportError.
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(name)
