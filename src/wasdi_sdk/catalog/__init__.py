"""The endpoint catalogue: every endpoint of the service contract, as data.

``ENDPOINTS`` lists them all; ``endpoint(name)`` finds one by its ``<group>.<operation>`` name.
Nothing else in the toolkit types a path, a parameter name or a failure style.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    admin,
    auth,
    console,
    credits,
    file_buffer,
    files,
    images,
    nodes,
    organizations,
    package_manager,
    param_templates,
    processes,
    processor_media,
    processors,
    products,
    projects,
    search,
    styles,
    subscriptions,
    utility,
    workflows,
    workspaces,
)
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

GROUP_MODULES: tuple[ModuleType, ...] = (
    auth,
    processor_media,
    images,
    file_buffer,
    admin,
    organizations,
    param_templates,
    processes,
    credits,
    nodes,
    search,
    styles,
    subscriptions,
    products,
    files,
    workflows,
    projects,
    processors,
    workspaces,
    utility,
    package_manager,
    console,
)

ENDPOINTS: tuple[Endpoint, ...] = tuple(e for module in GROUP_MODULES for e in module.ENDPOINTS)
CONTRACT: tuple[Endpoint, ...] = tuple(e for e in ENDPOINTS if e.contract)
"""The endpoints of the service contract (216)."""
EXTRAS: tuple[Endpoint, ...] = tuple(e for e in ENDPOINTS if not e.contract)
"""Calls the official clients make that the contract does not list."""
BY_NAME: dict[str, Endpoint] = {e.name: e for e in ENDPOINTS}
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(e.group for e in ENDPOINTS))


def endpoint(name: str) -> Endpoint:
    """The endpoint called ``name`` (``"workspaces.create"``)."""
    return BY_NAME[name]


def by_group(group: str) -> tuple[Endpoint, ...]:
    return tuple(e for e in ENDPOINTS if e.group == group)


__all__ = [
    "BY_NAME",
    "CONTRACT",
    "ENDPOINTS",
    "EXTRAS",
    "GROUPS",
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
