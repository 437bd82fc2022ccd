"""The admin console's searches and permission records: partial-name lookups of users, workspaces, apps
and any searchable resource type, and the sharing records behind ``/admin/resourcePermissions``.

Rules (contract, "Admin"):
- only admins search (403 ``MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD`` for others); a partial name
  has at least 3 characters (400 ``MSG_ERROR_INVALID_PARTIAL_NAME``), matched case-insensitively;
- permission records are listed by at least one criterion (400 ``MSG_ERROR_INSUFFICIENT_SEARCH_CRITERIA``);
  admins see every record, other users only the MISSION records they are part of (403 for other types,
  before the criteria are judged);
- adding or removing a permission is for admins only (403 before anything else is looked at; owners share
  through each type's own share endpoint) and is the share or unshare of the type's own service
  (domains/admin/resource_types.py), so every rule of that type applies;
- the resource types are listed to admins only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import BadRequest, Forbidden
from ...store import Store
from ..accounts.identity import User, normalise_user_id
from ..accounts.sharing import SharingService
from ..apps.app_records import is_public
from ..workspaces.workspaces import WorkspaceService
from .resource_types import SEARCHABLE, ResourceTypes, resource_type

NOT_ADMIN = "MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD"
INVALID_PARTIAL_NAME = "MSG_ERROR_INVALID_PARTIAL_NAME"
INSUFFICIENT_CRITERIA = "MSG_ERROR_INSUFFICIENT_SEARCH_CRITERIA"
MIN_PARTIAL_NAME = 3
MAX_PAGE = 1000


def require_admin(user: User) -> None:
    if not user.is_admin:
        raise Forbidden(NOT_ADMIN)


def partial_name(value: str | None) -> str:
    """The lower-case search text; ``BadRequest`` when shorter than 3 characters."""
    text = (value or "").strip().lower()
    if len(text) < MIN_PARTIAL_NAME:
        raise BadRequest(INVALID_PARTIAL_NAME)
    return text


def contains(text: str, *values: Any) -> bool:
    return any(text in str(v or "").lower() for v in values)


def capitalised_role(role: str | None) -> str:
    """``ADMIN`` -> ``Admin``: how the original's user search shows roles (gaps §1)."""
    return (role or "USER").capitalize()


def app_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    """DeployedProcessorViewModel fields of a stored app (domains/apps/app_records.py)."""
    return {"processorId": doc["processorId"], "processorName": doc.get("name"),
            "processorVersion": doc.get("version"), "processorDescription": doc.get("description"),
            "publisher": doc.get("userId"), "paramsSample": doc.get("paramsSample"),
            "isPublic": 1 if is_public(doc) else 0, "minuteTimeout": doc.get("minuteTimeout"),
            "type": doc.get("type"), "deploymentOngoing": bool(doc.get("deploymentOngoing")),
            "lastUpdate": doc.get("lastUpdate"), "readOnly": False, "sharedWithMe": False}


class AdminLookups:
    def __init__(self, store: Store, sharing: SharingService, workspaces: WorkspaceService,
                 types: ResourceTypes) -> None:
        self.store = store
        self.sharing = sharing
        self.workspaces = workspaces
        self.types = types

    def _collection_docs(self, name: str) -> list[dict[str, Any]]:
        try:
            return self.store.collection(name).all()
        except KeyError:  # a collection whose service is not wired on this server holds nothing
            return []

    # -- searches --------------------------------------------------------------------------------
    def users(self, caller: User, partial: str | None) -> list[dict[str, Any]]:
        """UserViewModel fields of users whose id, name or surname contains the text."""
        require_admin(caller)
        text = partial_name(partial)
        return [{"userId": d["userId"], "name": d.get("name") or "", "surname": d.get("surname") or "",
                 "role": capitalised_role(d.get("role")), "publicNickName": d.get("publicNickName") or "",
                 "link": d.get("link") or "", "description": d.get("description") or "",
                 "skin": d.get("skin") or "wasdi", "authProvider": d.get("authProvider")}
                for d in sorted(self._collection_docs("users"), key=lambda d: d["userId"])
                if contains(text, d.get("userId"), d.get("name"), d.get("surname"))]

    def workspaces_named(self, caller: User, partial: str | None) -> list[dict[str, Any]]:
        require_admin(caller)
        text = partial_name(partial)
        docs = sorted((d for d in self._collection_docs("workspaces") if contains(text, d.get("name"))),
                      key=lambda d: (str(d.get("name")).lower(), d["workspaceId"]))
        return self.workspaces.list_views(docs, lambda d: False)

    def apps_named(self, caller: User, partial: str | None) -> list[dict[str, Any]]:
        require_admin(caller)
        text = partial_name(partial)
        return [app_view(d) for d in sorted(self._collection_docs("processors"), key=lambda d: str(d.get("name")))
                if contains(text, d.get("name"))]

    def resources_named(self, caller: User, type_name: str | None, partial: str | None, offset: int,
                        limit: int) -> list[dict[str, Any]]:
        """GenericResourceViewModel fields of one page of resources of a searchable type."""
        require_admin(caller)
        kind = resource_type(type_name)
        if kind.name not in SEARCHABLE or kind.collection is None:
            raise BadRequest(f"resources of type {kind.name} cannot be searched; use one of {', '.join(SEARCHABLE)}")
        text = partial_name(partial)
        if offset < 0 or limit < 0 or limit > MAX_PAGE:
            raise BadRequest(f"offset must be >= 0 and limit between 0 and {MAX_PAGE}")
        key_field = kind.key_field
        found = sorted((d for d in self._collection_docs(kind.collection) if contains(text, d.get(kind.name_field))),
                       key=lambda d: (str(d.get(kind.name_field)).lower(), str(d.get(key_field))))
        return [{"resourceType": kind.name, "resourceId": d.get(key_field), "resourceName": d.get(kind.name_field),
                 "userId": d.get(kind.owner_field)} for d in found[offset:offset + limit]]

    # -- permissions -----------------------------------------------------------------------------
    def permissions(self, caller: User, type_name: str | None, resource_id: str | None,
                    user_id: str | None) -> list[dict[str, Any]]:
        """UserResourcePermissionViewModel fields of the sharing records matching every given criterion."""
        wanted_type = (type_name or "").strip()
        wanted_id = (resource_id or "").strip()
        wanted_user = normalise_user_id(user_id)
        if not caller.is_admin and wanted_type.upper() != "MISSION" and wanted_type.lower() != "mission":
            raise Forbidden(NOT_ADMIN)  # rights before any rule on the criteria
        if not (wanted_type or wanted_id or wanted_user):
            raise BadRequest(INSUFFICIENT_CRITERIA)
        kind = resource_type(wanted_type) if wanted_type else None
        equals: dict[str, Any] = {}
        if kind is not None:
            equals["resourceType"] = kind.stored
        if wanted_id:
            equals["resourceId"] = wanted_id
        if wanted_user:
            equals["userId"] = wanted_user
        records = self.sharing.sharings.find(**equals)
        if not caller.is_admin:
            records = [r for r in records if caller.user_id in (r.get("userId"), r.get("ownerId"))]
        return [{"resourceId": r["resourceId"], "resourceType": r["resourceType"], "userId": r["userId"],
                 "ownerId": r.get("ownerId"), "permissions": r.get("permissions"), "createdBy": r.get("createdBy"),
                 "createdDate": r.get("createdDate")}
                for r in sorted(records, key=lambda r: (r["resourceType"], r["resourceId"], r["userId"]))]

    def add_permission(self, caller: User, type_name: str | None, resource_id: str | None, user_id: str | None,
                       rights: str | None) -> None:
        require_admin(caller)
        kind = resource_type(type_name)
        rules = self.types.rules_of(kind)
        rules.share(caller, self._required(resource_id, "resourceId"), self._required(user_id, "userId"), rights)

    def remove_permission(self, caller: User, type_name: str | None, resource_id: str | None,
                          user_id: str | None) -> None:
        require_admin(caller)
        kind = resource_type(type_name)
        rules = self.types.rules_of(kind)
        rules.unshare(caller, self._required(resource_id, "resourceId"), self._required(user_id, "userId"))

    def resource_type_names(self, caller: User) -> list[str]:
        """The types permissions exist for (admins: the console that changes permissions is theirs)."""
        require_admin(caller)
        return self.types.names()

    @staticmethod
    def _required(value: str | None, name: str) -> str:
        text = (value or "").strip()
        if not text:
            raise BadRequest(f"{name} is required")
        return text
