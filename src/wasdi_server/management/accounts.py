"""User accounts as an operator manages them: add, list, disable, enable, set a new password.

One set of operations, run either directly on a data directory no server holds, or inside the
running server through the local admin channel (``channel.py``), so the rules are the same both ways.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..domains.accounts.identity import ADMIN, normalise_user_id
from ..domains.accounts.passwords import hash_password, password_problem, random_password
from ..errors import BadRequest, NotFound

if TYPE_CHECKING:
    from ..composition import Services

OPERATIONS = ("user.add", "user.list", "user.disable", "user.enable", "user.reset")


def _existing(services: Services, user_id: str) -> str:
    uid = normalise_user_id(user_id)
    if not services.users.exists(uid):
        raise NotFound(f"there is no user {uid}")
    return uid


def add(services: Services, user_id: str, password: str, admin: bool = False, name: str = "",
        surname: str = "") -> dict[str, Any]:
    services.users.add(user_id, password, admin=admin, name=name, surname=surname)
    uid = normalise_user_id(user_id)
    services.subscriptions.create_trial(uid)
    return {"userId": uid, "admin": admin}


def listing(services: Services) -> list[dict[str, Any]]:
    """Every account, without anything secret (no hashes, no validation codes)."""
    rows = [{"userId": doc.get("userId"), "name": doc.get("name") or "", "surname": doc.get("surname") or "",
             "role": doc.get("role") or "USER", "active": bool(doc.get("active"))}
            for doc in services.store.collection("users").all()]
    return sorted(rows, key=lambda row: str(row["userId"]))


def set_active(services: Services, user_id: str, active: bool) -> dict[str, Any]:
    uid = _existing(services, user_id)
    services.users.users.update(uid, {"active": active})
    if not active:
        # A disabled account keeps no open session.
        services.store.collection("sessions").delete_where(userId=uid)
    return {"userId": uid, "active": active}


def reset(services: Services, user_id: str, password: str | None = None) -> dict[str, Any]:
    """Set ``password`` (or a random one, returned once) on the account."""
    uid = _existing(services, user_id)
    chosen = password or random_password()
    problem = password_problem(chosen)
    if problem:
        raise BadRequest(problem)
    services.users.users.update(uid, {"passwordHash": hash_password(chosen)})
    return {"userId": uid, "password": None if password else chosen}


def run(services: Services, operation: str, arguments: dict[str, Any]) -> Any:
    """Run one operation by name (what the admin channel receives)."""
    if operation == "user.add":
        return add(services, str(arguments["userId"]), str(arguments["password"]), bool(arguments.get("admin")),
                   str(arguments.get("name") or ""), str(arguments.get("surname") or ""))
    if operation == "user.list":
        return listing(services)
    if operation in ("user.disable", "user.enable"):
        return set_active(services, str(arguments["userId"]), operation == "user.enable")
    if operation == "user.reset":
        return reset(services, str(arguments["userId"]), arguments.get("password") or None)
    raise BadRequest(f"unknown operation {operation!r}")


__all__ = ["ADMIN", "OPERATIONS", "add", "listing", "reset", "run", "set_active"]
