"""Permissions and sharing: the one place where the sharing rules of every resource type live.

Rules (contract, cross-cutting conventions 5-7, and the per-resource sharing endpoints):
- rights are ``read`` or ``write``; a missing or invalid value means ``read``;
- the owner and admins have full powers; a ``write`` sharing may edit and share further;
- nobody shares with the owner; only admins share with themselves; the target must exist; the caller's
  rights are checked before these rules, so a refusal says nothing about the owner or the target;
- a repeated share succeeds without a duplicate ("Already Shared."), or, where the resource type
  refuses repeats (``repeat_fails``: processors, styles, workflows), fails with "Already shared";
- a user may always drop their own sharing; removing others' needs write rights;
- access to a resource's parent (``Resource.via``, a subscription's organization) gives read access;
- the destination user is e-mailed after a successful share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...dates import now_ms
from ...errors import (
    MSG_NO_ACCESS_RIGHTS,
    MSG_SHARING_WITH_NON_EXISTENT_USER,
    MSG_SHARING_WITH_ONESELF,
    MSG_SHARING_WITH_OWNER,
    BadRequest,
    Forbidden,
)
from ...providers.mail import Mailer, send_quietly
from ...store import Collection
from .identity import User, UserService, normalise_user_id

READ = "read"
WRITE = "write"

DONE = "Done"
ALREADY_SHARED = "Already Shared."
ALREADY_SHARED_NO_DOT = "Already Shared"
"""The repeat-share message of /subscriptions and /organizations (the contract writes it without the dot)."""
ALREADY_SHARED_FAILURE = "Already shared"
"""The failure of a repeated share where it is refused (processors, styles, workflows: gaps §0.8)."""


def normalise_rights(rights: str | None) -> str:
    """``write`` when asked for (any case); anything else is ``read``."""
    return WRITE if (rights or "").strip().lower() == WRITE else READ


@dataclass(frozen=True)
class Resource:
    """What sharing needs to know about a resource: its type, id, owner and a display name."""

    type: str
    """Stored resource type: workspace, organization, subscription, style, workflow, processor,
    processorparameterstemplate, node, mission."""
    id: str
    owner_id: str
    name: str = ""
    via: tuple[Resource, ...] = ()
    """Resources whose access (any right) gives read access to this one: a subscription's organization."""


@dataclass(frozen=True)
class ShareOutcome:
    message: str
    created: bool


class SharingService:
    """The ``sharings`` collection: one record per (resource type, resource id, user)."""

    def __init__(self, sharings: Collection, users: UserService, mailer: Mailer, public_url: str = "") -> None:
        self.sharings = sharings
        self.users = users
        self.mailer = mailer
        self.public_url = public_url

    @staticmethod
    def key(resource_type: str, resource_id: str, user_id: str) -> str:
        return f"{resource_type}|{resource_id}|{user_id}"

    # -- rights ----------------------------------------------------------------------------------
    def sharing(self, resource: Resource, user_id: str) -> dict[str, Any] | None:
        return self.sharings.get(self.key(resource.type, resource.id, user_id))

    def rights_of(self, user: User, resource: Resource) -> str | None:
        """``write`` for owner, admin or a write sharing; ``read`` for a read sharing; else ``None``."""
        if user.is_admin or user.user_id == resource.owner_id:
            return WRITE
        record = self.sharing(resource, user.user_id)
        if record:
            return str(record["permissions"])
        if any(self.rights_of(user, parent) is not None for parent in resource.via):
            return READ
        return None

    def can_read(self, user: User, resource: Resource) -> bool:
        return self.rights_of(user, resource) is not None

    def can_write(self, user: User, resource: Resource) -> bool:
        return self.rights_of(user, resource) == WRITE

    def require_read(self, user: User, resource: Resource) -> None:
        if not self.can_read(user, resource):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)

    def require_write(self, user: User, resource: Resource) -> None:
        if not self.can_write(user, resource):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)

    def shared_with(self, user_id: str, resource_type: str) -> dict[str, dict[str, Any]]:
        """Sharings given to ``user_id`` for one resource type, by resource id."""
        return {d["resourceId"]: d for d in self.sharings.find(userId=user_id, resourceType=resource_type)}

    def sharings_of(self, resource: Resource) -> list[dict[str, Any]]:
        return self.sharings.find(resourceType=resource.type, resourceId=resource.id)

    def sharings_by_resource(self, resource_type: str, resource_ids: set[str]) -> dict[str, list[str]]:
        """User ids each resource is shared with, in one pass over the collection."""
        out: dict[str, list[str]] = {rid: [] for rid in resource_ids}
        for d in self.sharings.find(lambda d: d.get("resourceId") in resource_ids, resourceType=resource_type):
            out[d["resourceId"]].append(d["userId"])
        return out

    # -- changes ---------------------------------------------------------------------------------
    def share(self, caller: User, resource: Resource, target_user_id: str | None, rights: str | None = None,
              *, notify: bool = True, repeat_fails: bool = False, admin_self_share: bool = True) -> ShareOutcome:
        """Share ``resource`` with a user under every rule of the contract.

        ``repeat_fails``: a repeated share is a ``BadRequest("Already shared")`` instead of a success.
        ``admin_self_share=False``: admins cannot share with themselves either (/subscriptions).
        """
        # Rights first: a refusal must not say who owns the resource or whether a user exists.
        if not self.can_write(caller, resource):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        target = normalise_user_id(target_user_id)
        if not target:
            raise BadRequest(MSG_SHARING_WITH_NON_EXISTENT_USER)
        if target == caller.user_id and not (caller.is_admin and admin_self_share):
            raise BadRequest(MSG_SHARING_WITH_ONESELF)
        if target == resource.owner_id:
            raise BadRequest(MSG_SHARING_WITH_OWNER)
        target_doc = self.users.get(target)
        if target_doc is None:
            raise BadRequest(MSG_SHARING_WITH_NON_EXISTENT_USER)
        sharing_id = self.key(resource.type, resource.id, target)
        record = {
            "sharingId": sharing_id, "resourceType": resource.type,
            "resourceId": resource.id, "userId": target, "ownerId": resource.owner_id,
            "permissions": normalise_rights(rights), "createdBy": caller.user_id, "createdDate": now_ms(),
        }
        with self.sharings.transaction():
            if self.sharings.get(sharing_id) is not None:
                if repeat_fails:
                    raise BadRequest(ALREADY_SHARED_FAILURE)
                return ShareOutcome(ALREADY_SHARED, created=False)
            self.sharings.insert(record)
        if notify:
            label = resource.name or resource.id
            article = "an" if resource.type[:1] in "aeiou" else "a"
            send_quietly(self.mailer, target, f"WASDI: {article} {resource.type} has been shared with you",
                         f"{caller.user_id} shared the {resource.type} \"{label}\" with you "
                         f"({record['permissions']} access).\n")
        return ShareOutcome(DONE, created=True)

    def unshare(self, caller: User, resource: Resource, target_user_id: str | None, *,
                others_by_owner_only: bool = False) -> None:
        """Remove one user's sharing: the user themself, a writer, the owner or an admin may.

        ``others_by_owner_only`` (styles, workflows): someone else's sharing goes only by the owner or an
        admin, not by a writer."""
        target = normalise_user_id(target_user_id)
        # Rights first (anyone may drop their own sharing): a refusal must not say who owns the resource
        # or whether a user exists.
        if target != caller.user_id and not (
                self.can_write(caller, resource) and (not others_by_owner_only or caller.is_admin
                                                      or caller.user_id == resource.owner_id)):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        if not target or self.users.get(target) is None:
            raise BadRequest(MSG_SHARING_WITH_NON_EXISTENT_USER)
        if target == resource.owner_id:
            raise BadRequest(MSG_SHARING_WITH_OWNER)
        if not self.sharings.delete(self.key(resource.type, resource.id, target)):
            raise BadRequest("MSG_ERROR_SHARING_NOT_FOUND")

    def listed(self, caller: User, resource: Resource) -> list[dict[str, Any]]:
        """The sharings of ``resource`` as the sharing-list endpoints answer them (read rights needed)."""
        if not self.can_read(caller, resource):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        return [{"userId": s["userId"], "permissions": s["permissions"]} for s in self.sharings_of(resource)]

    def remove_all(self, resource: Resource) -> int:
        """Drop every sharing of a resource (before the resource itself is deleted)."""
        return self.sharings.delete_where(resourceType=resource.type, resourceId=resource.id)

    def remove_for_user(self, user_id: str) -> int:
        return self.sharings.delete_where(userId=user_id)

    def delete_all_of_user(self, user_id: str) -> None:
        """Sharings the user received, and those of resources the user owns (given)."""
        self.sharings.delete_where(lambda d: d.get("userId") == user_id or d.get("ownerId") == user_id)
