"""The endpoint catalogue: every endpoint of the service contract, as data.

``ENDPOINTS`` lists them all; ``endpoint(name)`` finds one by its ``<group>.<operation>`` name.
Nothing else in the toolkit types a path, a parameter name or a failure style.

The group modules are imported, and the tables built, on first use (module ``__getattr__``): importing
the SDK's client reads only the vocabulary (``_types``), and an endpoint's table when it is first called.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._types import (
    Auth,
    Body,
    BodyKind,
    Endpoint,
    Failure,
    FailureKind,
    Param,
    ParamType,
    Response,
    ResponseKind,
    Style,
    to_snake,
)

GROUP_NAMES: tuple[str, ...] = (
    "auth", "processor_media", "images", "file_buffer", "admin", "organizations", "param_templates", "processes",
    "credits", "nodes", "search", "styles", "subscriptions", "products", "files", "workflows", "projects",
    "processors", "workspaces", "utility", "package_manager", "console",
)
"""The group modules, in the catalogue's order."""

if TYPE_CHECKING:
    GROUP_MODULES: tuple[ModuleType, ...]
    ENDPOINTS: tuple[Endpoint, ...]
    CONTRACT: tuple[Endpoint, ...]
    EXTRAS: tuple[Endpoint, ...]
    BY_NAME: dict[str, Endpoint]
    GROUPS: tuple[str, ...]


@cache
def _tables() -> dict[str, Any]:
    modules = tuple(importlib.import_module(f"{__name__}.{name}") for name in GROUP_NAMES)
    endpoints: tuple[Endpoint, ...] = tuple(e for module in modules for e in module.ENDPOINTS)
    return {
        "GROUP_MODULES": modules,
        "ENDPOINTS": endpoints,
        # the endpoints of the service contract (216)
        "CONTRACT": tuple(e for e in endpoints if e.contract),
        # calls the official clients make that the contract does not list
        "EXTRAS": tuple(e for e in endpoints if not e.contract),
        "BY_NAME": {e.name: e for e in endpoints},
        "GROUPS": tuple(dict.fromkeys(e.group for e in endpoints)),
    }


def __getattr__(name: str) -> Any:
    tables = _tables() if name in ("GROUP_MODULES", "ENDPOINTS", "CONTRACT", "EXTRAS", "BY_NAME", "GROUPS") else {}
    if name in tables:
        return tables[name]
    if name in GROUP_NAMES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def endpoint(name: str) -> Endpoint:
    """The endpoint called ``name`` (``"workspaces.create"``)."""
    by_name: dict[str, Endpoint] = _tables()["BY_NAME"]
    return by_name[name]


def by_group(group: str) -> tuple[Endpoint, ...]:
    endpoints: tuple[Endpoint, ...] = _tables()["ENDPOINTS"]
    return tuple(e for e in endpoints if e.group == group)


__all__ = [
    "BY_NAME",
    "CONTRACT",
    "ENDPOINTS",
    "EXTRAS",
    "GROUPS",
    "GROUP_MODULES",
    "GROUP_NAMES",
    "Auth",
    "Body",
    "BodyKind",
    "Endpoint",
    "Failure",
    "FailureKind",
    "Param",
    "ParamType",
    "Response",
    "ResponseKind",
    "Style",
    "by_group",
    "endpoint",
    "to_snake",
]
