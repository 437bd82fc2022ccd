"""The resource types of permissions (``/admin/resourcePermissions/types``), where each is stored, and the
registry of each type's own share and unshare rules.

The API names are upper case (gaps §0.10); sharing records store the lower-case type of the sharing
module (domains/accounts/sharing.py).  Changing a permission from the admin console always goes through the
share/unshare method of the type's own service, registered here by ``build_services`` (and, for the
services built on other branches, by whoever wires them: ``PROCESSOR``, ``WORKFLOW``, ``PARAMETER``)::

    services.resource_types.register_rules("PROCESSOR", apps.share, apps.unshare)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import BadRequest
from ..accounts.identity import User

WORKFLOWS_COLLECTION = "workflows"
"""The collection of SNAP workflows (key ``workflowId``; ``name``, ``userId``), wired by the workflows service."""


@dataclass(frozen=True)
class ResourceType:
    name: str
    """The API name (``WORKSPACE``)."""
    stored: str
    """The ``resourceType`` of sharing records (``workspace``)."""
    collection: str | None = None
    """Where resources of the type live, for partial-name searches (``None``: not searchable)."""
    key_field: str = ""
    name_field: str = "name"
    owner_field: str = "userId"


RESOURCE_TYPES: tuple[ResourceType, ...] = (
    ResourceType("ORGANIZATION", "organization", "organizations", "organizationId"),
    ResourceType("SUBSCRIPTION", "subscription", "subscriptions", "subscriptionId"),
    ResourceType("WORKSPACE", "workspace", "workspaces", "workspaceId"),
    ResourceType("STYLE", "style", "styles", "styleId"),
    ResourceType("WORKFLOW", "workflow", WORKFLOWS_COLLECTION, "workflowId"),
    ResourceType("PROCESSOR", "processor", "processors", "processorId"),
    ResourceType("PARAMETER", "processorparameterstemplate"),
    ResourceType("NODE", "node"),
    ResourceType("VOLUME", "volume"),
    ResourceType("MISSION", "mission"),
)
BY_NAME = {t.name: t for t in RESOURCE_TYPES}
BY_STORED = {t.stored: t for t in RESOURCE_TYPES}
SEARCHABLE = tuple(t.name for t in RESOURCE_TYPES if t.collection)

Share = Callable[[User, str, str, str | None], Any]
"""``share(caller, resource_id, user_id, rights)`` of a type's own service."""
Unshare = Callable[[User, str, str], Any]
"""``unshare(caller, resource_id, user_id)`` of a type's own service."""


@dataclass(frozen=True)
class ShareRules:
    share: Share
    unshare: Unshare


def resource_type(value: str | None) -> ResourceType:
    """The type an API or stored name means (any case); ``BadRequest`` when there is none."""
    wanted = (value or "").strip()
    found = BY_NAME.get(wanted.upper()) or BY_STORED.get(wanted.lower())
    if found is None:
        raise BadRequest(f"unknown resource type {wanted[:40]!r}; use one of {', '.join(BY_NAME)}")
    return found


class ResourceTypes:
    """The per-type share and unshare rules the admin console delegates to."""

    def __init__(self) -> None:
        self.rules: dict[str, ShareRules] = {}

    @staticmethod
    def names() -> list[str]:
        return [t.name for t in RESOURCE_TYPES]

    def register_rules(self, type_name: str, share: Share, unshare: Unshare) -> None:
        kind = resource_type(type_name)
        if kind.name in self.rules:
            raise ValueError(f"share rules for {kind.name} are registered twice")
        self.rules[kind.name] = ShareRules(share, unshare)

    def rules_of(self, kind: ResourceType) -> ShareRules:
        rules = self.rules.get(kind.name)
        if rules is None:
            raise BadRequest(f"permissions on {kind.name} resources cannot be changed on this server")
        return rules
