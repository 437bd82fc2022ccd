"""App engines, one module per family: ``python_env`` (Python + pip apps in a virtual environment) and
``unsupported`` (every type this server cannot build, refused with the reason).  ``engine_for`` picks one;
operations call it, and nothing else knows how an app is built or started."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domains.apps.app_records import PYTHON_TYPES
from ...domains.apps.engines import AppLayout, EngineError, LogLine
from ..box import Box
from ..box.proxy import OutboundProxy
from .base import Engine, Launch
from .legacy_cache import unshare
from .python_env import PythonEngine
from .unsupported import UnsupportedEngine

if TYPE_CHECKING:
    from ...settings import Settings

__all__ = ["AppLayout", "Engine", "EngineError", "Launch", "LogLine", "engine_for"]

_PYTHON: dict[tuple[object, ...], PythonEngine] = {}


def engine_for(app_type: str, settings: Settings) -> Engine:
    """The engine of an app type (one Python engine per configuration, found once)."""
    if app_type not in PYTHON_TYPES:
        return UnsupportedEngine(app_type)
    # Builds reach the package index through the box's proxy door (names resolved by the server, the index let
    # through); offline builds get no door at all.
    proxy = None if settings.apps_offline else OutboundProxy.from_settings(settings)
    box = Box.from_settings(settings, proxy=proxy)
    key = (settings.apps_library, settings.apps_python, tuple(settings.apps_find_links), settings.apps_offline, box,
           settings.port, (proxy.rules, proxy.max_connections, proxy.idle_seconds) if proxy else None)
    if key not in _PYTHON:
        unshare(settings.app_environments_root)
        _PYTHON[key] = PythonEngine(settings.apps_library, settings.apps_python, tuple(settings.apps_find_links),
                                    settings.apps_offline, box)
    return _PYTHON[key]
