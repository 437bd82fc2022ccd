"""Organizations: creation, listing, editing, deletion and sharing.

Rules (contract, /organizations):
- a name is required, trimmed, at most 200 characters, with no ``/``, ``\\``, ``..`` or control
  characters, and unique among all organizations (case-insensitive): a clash is a 400;
- the owner and admins have full powers; a ``write`` sharing may edit and share; a ``read``
  sharing may only read; strangers get 403 (all through ``SharingService``);
- deleting: the owner (or an admin) removes the sharings, detaches the subscriptions of the
  organization (their ``organizationId`` is cleared) and deletes it; a user it is shared with
  only drops their own sharing;
- members of an organization (owner and sharees) may read its subscriptions (``Resource.via``).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, Forbidden
from ...paths import safe_id
from ...store import Collection
from ..accounts.identity import User
from ..accounts.sharing import ALREADY_SHARED_NO_DOT, READ, WRITE, Resource, ShareOutcome, SharingService

ORGANIZATION = "organization"
MAX_NAME_LENGTH = 200
MAX_TEXT_LENGTH = 2000
INVALID_ORGANIZATION = "MSG_ERROR_INVALID_ORGANIZATION"
NO_ACCESS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_ORGANIZATION"
DUPLICATE_NAME = "An organization with the same name already exists."
EDITABLE_TEXT = ("description", "address", "email", "url")

_BAD_NAME = re.compile(r"[/\\\x00-\x1f\x7f]")


def check_display_name(name: Any, what: str, max_length: int = MAX_NAME_LENGTH) -> str:
    """A display name: a non-empty string, trimmed, bounded, without path separators, ``..`` or control
    characters; ``BadRequest`` otherwise."""
    if not isinstance(name, str):
        raise BadRequest(f"{what} name is required")
    cleaned = name.strip()
    if not cleaned:
        raise BadRequest(f"{what} name is required")
    if len(cleaned) > max_length:
        raise BadRequest(f"{what} name is too long (at most {max_length} characters)")
    if _BAD_NAME.search(cleaned) or ".." in cleaned:
        raise BadRequest(f"invalid {what} name {cleaned[:60]!r}: no '/', '\\\\', '..' or control characters")
    return cleaned


def check_text(value: Any, what: str, max_length: int = MAX_TEXT_LENGTH) -> str:
    """A free text field: ``None`` is empty; bounded length."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"{what} must be a string")
    if len(value) > max_length:
        raise BadRequest(f"{what} is too long (at most {max_length} characters)")
    return value


def checked_id(value: str | None, what: str, message: str) -> str:
    """An id given by a client: present and well formed, else ``BadRequest(message)``."""
    if not value or not value.strip():
        raise BadRequest(message)
    try:
        return safe_id(value.strip(), what)
    except BadRequest as e:
        raise BadRequest(message) from e


class OrganizationService:
    """The ``organizations`` collection: ``{organizationId, userId, name, description, address, email, url,
    creationDate}``; sharings in ``SharingService`` under the type ``organization``."""

    def __init__(self, organizations: Collection, subscriptions: Collection, sharing: SharingService, *,
                 atomic: Callable[[], AbstractContextManager[None]]) -> None:
        self.organizations = organizations
        self.atomic = atomic
        """``Store.atomic``: a deletion's writes commit as one (a crash leaves all of them or none)."""
        self.subscriptions = subscriptions
        self.sharing = sharing

    # -- lookups -------------------------------------------------------------------------------
    @staticmethod
    def resource(doc: Mapping[str, Any]) -> Resource:
        return Resource(ORGANIZATION, doc["organizationId"], doc["userId"], doc.get("name") or "")

    def get(self, organization_id: str | None) -> dict[str, Any] | None:
        return self.organizations.get(organization_id) if organization_id else None

    def load(self, organization_id: str | None) -> dict[str, Any]:
        """The record; ``BadRequest`` when the id is missing, malformed or unknown."""
        key = checked_id(organization_id, "organization", "Invalid organizationId.")
        doc = self.organizations.get(key)
        if doc is None:
            raise BadRequest(INVALID_ORGANIZATION)
        return doc

    def readable(self, user: User, organization_id: str | None) -> dict[str, Any]:
        doc = self.load(organization_id)
        if not self.sharing.can_read(user, self.resource(doc)):
            raise Forbidden(NO_ACCESS)
        return doc

    def writable(self, user: User, organization_id: str | None) -> dict[str, Any]:
        doc = self.load(organization_id)
        if not self.sharing.can_write(user, self.resource(doc)):
            raise Forbidden(NO_ACCESS)
        return doc

    def member_of(self, user_id: str) -> dict[str, dict[str, Any]]:
        """Organizations the user owns or that are shared with them, by id (owned first)."""
        found = {d["organizationId"]: d for d in self.organizations.find(userId=user_id)}
        for org_id in self.sharing.shared_with(user_id, ORGANIZATION):
            doc = self.organizations.get(org_id)
            if doc is not None and org_id not in found:
                found[org_id] = doc
        return found

    def _name_taken(self, name: str, exclude_id: str | None = None) -> bool:
        wanted = name.casefold()
        return any((d.get("name") or "").strip().casefold() == wanted and d["organizationId"] != exclude_id
                   for d in self.organizations.all())

    # -- views -----------------------------------------------------------------------------------
    def list_for(self, user: User) -> list[dict[str, Any]]:
        """OrganizationListViewModel fields: owned ones (readOnly false), then shared ones."""
        owned = self.organizations.find(userId=user.user_id)
        out = [{"organizationId": d["organizationId"], "ownerUserId": d["userId"], "name": d.get("name"),
                "readOnly": False} for d in owned]
        owned_ids = {d["organizationId"] for d in owned}
        for org_id, sharing in self.sharing.shared_with(user.user_id, ORGANIZATION).items():
            doc = self.organizations.get(org_id)
            if doc is None or org_id in owned_ids:
                continue
            out.append({"organizationId": org_id, "ownerUserId": doc["userId"], "name": doc.get("name"),
                        "readOnly": sharing.get("permissions") != WRITE})
        return out

    def view(self, user: User, organization_id: str | None) -> dict[str, Any]:
        """OrganizationViewModel fields, with the users it is shared with and ``readOnly``."""
        doc = self.readable(user, organization_id)
        resource = self.resource(doc)
        return {
            "organizationId": doc["organizationId"], "userId": doc["userId"], "name": doc.get("name"),
            "description": doc.get("description") or "", "address": doc.get("address") or "",
            "email": doc.get("email") or "", "url": doc.get("url") or "",
            "readOnly": not self.sharing.can_write(user, resource),
            "sharedUsers": [s["userId"] for s in self.sharing.sharings_of(resource)],
        }

    # -- changes -------------------------------------------------------------------------------
    def create(self, user: User, data: Mapping[str, Any]) -> str:
        """A new organization owned by ``user``; its id.  ``organizationId`` in ``data`` is ignored."""
        name = check_display_name(data.get("name"), "organization")
        texts = {key: check_text(data.get(key), key) for key in EDITABLE_TEXT}
        with self.organizations.transaction():
            if self._name_taken(name):
                raise BadRequest(DUPLICATE_NAME)
            doc = self.organizations.insert({
                "organizationId": str(uuid.uuid4()), "userId": user.user_id, "name": name, **texts,
                "creationDate": int(now_ms()),
            })
        return str(doc["organizationId"])

    def update(self, user: User, data: Mapping[str, Any]) -> str:
        """Change name and texts (write permission); the id.  Texts not sent, or sent as null, are kept
        (an empty string clears one)."""
        organization_id = data.get("organizationId")
        if not organization_id:
            raise BadRequest("Invalid organizationId.")
        name = check_display_name(data.get("name"), "organization")
        doc = self.writable(user, organization_id)
        changes: dict[str, Any] = {"name": name}
        for key in EDITABLE_TEXT:
            if data.get(key) is not None:
                changes[key] = check_text(data.get(key), key)
        with self.organizations.transaction():
            if self._name_taken(name, exclude_id=doc["organizationId"]):
                raise BadRequest(DUPLICATE_NAME)
            self.organizations.update(doc["organizationId"], changes)
        return str(doc["organizationId"])

    def delete(self, user: User, organization_id: str | None) -> str:
        """Owner or admin: sharings go, subscriptions are detached, the organization goes.  A user it is
        shared with: only their sharing goes.  Anyone else: 403.  The id."""
        doc = self.load(organization_id)
        resource = self.resource(doc)
        org_id = str(doc["organizationId"])
        if user.user_id != doc["userId"] and not user.is_admin:
            if self.sharing.sharing(resource, user.user_id) is None:
                raise Forbidden(NO_ACCESS)
            self.sharing.sharings.delete(self.sharing.key(ORGANIZATION, org_id, user.user_id))
            return org_id
        self._remove(doc)
        return org_id

    def _remove(self, doc: Mapping[str, Any]) -> None:
        org_id = str(doc["organizationId"])
        with self.atomic():
            self.sharing.remove_all(self.resource(doc))
            self.subscriptions.update_where({"organizationId": None}, organizationId=org_id)
            self.organizations.delete(org_id)

    def delete_all_of_user(self, user_id: str) -> None:
        """Every organization the user owns (their subscriptions are detached, as on a delete)."""
        for doc in self.organizations.find(userId=user_id):
            self._remove(doc)

    def share(self, caller: User, organization_id: str | None, user_id: str | None,
              rights: str | None) -> str:
        """``Done``, or ``Already Shared`` for a repeat (rights default to read)."""
        outcome: ShareOutcome = self.sharing.share(caller, self.resource(self.load(organization_id)), user_id,
                                                   rights)
        return outcome.message if outcome.created else ALREADY_SHARED_NO_DOT

    def unshare(self, caller: User, organization_id: str | None, user_id: str | None) -> None:
        self.sharing.unshare(caller, self.resource(self.load(organization_id)), user_id)

    def sharings(self, caller: User, organization_id: str | None) -> list[dict[str, Any]]:
        """OrganizationSharingViewModel fields (read access needed)."""
        doc = self.readable(caller, organization_id)
        return [{"organizationId": doc["organizationId"], "userId": s["userId"], "ownerId": doc["userId"],
                 "permissions": s.get("permissions") or READ} for s in self.sharing.sharings_of(self.resource(doc))]
