"""Durable intents: multi-step changes that a crash cannot leave half-done.

A change that touches several collections and files (deleting a user, a workspace, a sharing
cascade) is written first as an *intent* record in the store, then carried out by idempotent
steps, and the intent is removed only when every step has finished.  When the server starts,
``resume_pending`` finishes every intent still recorded, so whatever instant a crash comes the
change ends complete.  Because every step is idempotent, running an intent twice (or finishing
one a crash interrupted) is always safe.

A kind of intent is registered once with the function that carries it out::

    intents.register("delete_user", deletion.carry_out)
    intents.run("delete_user", user_id)
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..dates import now_ms
from . import Collection

log = logging.getLogger("wasdi_server.intents")

INTENTS = "intents"
"""The store collection of pending intents (key ``intentId``)."""

Runner = Callable[[str, Mapping[str, Any]], None]
"""Carries out one intent: its subject (the id the change is about) and its details."""


class IntentLog:
    """The ``intents`` collection: ``{intentId, kind, subject, details, createdAt, attempts}``."""

    def __init__(self, intents: Collection) -> None:
        self.intents = intents
        self.runners: dict[str, Runner] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(kind: str, subject: str) -> str:
        return f"{kind}|{subject}"

    def register(self, kind: str, runner: Runner) -> None:
        if kind in self.runners:
            raise ValueError(f"the intent kind {kind!r} is registered twice")
        self.runners[kind] = runner

    def pending(self) -> list[dict[str, Any]]:
        return sorted(self.intents.all(), key=lambda d: float(d.get("createdAt") or 0))

    def is_pending(self, kind: str, subject: str) -> bool:
        return self.intents.get(self.key(kind, subject)) is not None

    def record(self, kind: str, subject: str, details: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Write the intent durably (a second record of the same change is the same record)."""
        if kind not in self.runners:
            raise ValueError(f"no runner for the intent kind {kind!r}")
        with self.intents.transaction():
            existing = self.intents.get(self.key(kind, subject))
            if existing is not None:
                return existing
            return self.intents.insert({"intentId": self.key(kind, subject), "kind": kind, "subject": subject,
                                        "details": dict(details or {}), "createdAt": now_ms(), "attempts": 0})

    def run(self, kind: str, subject: str, details: Mapping[str, Any] | None = None, *,
            one_at_a_time: bool = True) -> None:
        """Record the intent, carry it out, and remove it.  If a step fails the intent stays recorded
        (and is finished at the next start, or by the next ``run`` of the same change).

        ``one_at_a_time=False`` is for changes whose subject is unique to the call (no other change can
        interleave with it) and whose caller holds a lock of its own that another intent's steps take.
        """
        self.finish(self.record(kind, subject, details), one_at_a_time=one_at_a_time)

    def finish(self, intent: Mapping[str, Any], *, one_at_a_time: bool = True) -> None:
        runner = self.runners.get(str(intent.get("kind")))
        if runner is None:
            raise ValueError(f"no runner for the intent kind {intent.get('kind')!r}")
        # One intent at a time: two deletions of the same user must not interleave their steps.
        with self._lock if one_at_a_time else contextlib.nullcontext():
            self.intents.update(str(intent["intentId"]), {"attempts": int(intent.get("attempts") or 0) + 1})
            runner(str(intent["subject"]), dict(intent.get("details") or {}))
            self.intents.delete(str(intent["intentId"]))

    def resume_pending(self) -> int:
        """Finish every recorded intent (at start); the number finished.  One that fails again is logged
        and stays recorded for the next start."""
        finished = 0
        for intent in self.pending():
            try:
                self.finish(intent)
                finished += 1
                log.info("finished the interrupted %s of %s", intent.get("kind"), intent.get("subject"))
            except Exception:
                log.exception("the pending %s of %s could not be finished", intent.get("kind"), intent.get("subject"))
        return finished
