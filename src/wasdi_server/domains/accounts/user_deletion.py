"""Deleting a user for good: one durable intent, and a registry of per-service clean-ups.

Every service that keeps something a user owns offers an idempotent ``delete_all_of_user(user_id)``
that removes that user's records, files and the sharings of them (a second call does nothing), and
registers it here with ``UserDeletion.register``.  ``build_services`` registers those of the services
it wires; services built elsewhere (apps, workflows, parameter templates) register theirs the same
way, before the server starts::

    services.user_deletion.register("apps", apps.delete_all_of_user)

The deletion itself runs as the ``delete_user`` intent (store/intents.py): the account is first
disabled (no new session, no new work), then every clean-up runs in registration order, then the
account record goes.  A crash anywhere leaves the intent recorded and the next start finishes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ...store.intents import IntentLog
from .identity import UserService

log = logging.getLogger("wasdi_server.user_deletion")

DELETE_USER = "delete_user"

Cleanup = Callable[[str], None]


class UserDeletion:
    def __init__(self, users: UserService, intents: IntentLog) -> None:
        self.users = users
        self.intents = intents
        self.cleanups: list[tuple[str, Cleanup]] = []
        self.disable_hooks: list[Cleanup] = []
        """Called once the account is disabled (drop cached sessions of the user)."""
        intents.register(DELETE_USER, self.carry_out)

    def register(self, name: str, cleanup: Cleanup) -> None:
        """Add a service's ``delete_all_of_user``; clean-ups run in the order they were registered."""
        if any(existing == name for existing, _ in self.cleanups):
            raise ValueError(f"a user clean-up named {name!r} is registered twice")
        self.cleanups.append((name, cleanup))

    def delete(self, user_id: str) -> None:
        """Delete the account and everything it owns, durably."""
        self.intents.run(DELETE_USER, user_id)

    def carry_out(self, user_id: str, details: Mapping[str, Any]) -> None:
        # Disabled first, so that the user cannot create anything while their things are removed.
        self.users.users.update(user_id, {"active": False})
        for hook in self.disable_hooks:
            hook(user_id)
        for name, cleanup in self.cleanups:
            log.info("deleting the %s of user %s", name, user_id)
            cleanup(user_id)
        self.users.users.delete(user_id)
