"""Login throttling: repeated failures slow down further attempts, per account and per client address.

Refused attempts are answered at once (no sleeping thread), and are not checked nor counted, so an
attacker only earns longer waits.  The delay that spans every address of one account is small and
does not apply to an address the account has logged in from before: a stranger failing on purpose
slows themselves, never locks the owner out.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import Unauthorized

FORGET_AFTER_SECONDS = 15 * 60.0
"""Failures older than this (counted from the last one) are forgotten."""
KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600.0
MAX_ENTRIES = 100_000
"""Memory bound: the oldest entries go first."""


@dataclass(frozen=True)
class Rule:
    free: int
    """Failures allowed before any delay."""
    max_delay: float
    """The delay doubles with each further failure up to this many seconds."""

    def delay(self, failures: int) -> float:
        extra = failures - self.free
        return 0.0 if extra < 0 else min(2.0 ** min(extra, 30), self.max_delay)


PAIR = Rule(free=5, max_delay=300.0)
"""One account from one address."""
ADDRESS = Rule(free=20, max_delay=300.0)
"""Every account from one address (offices share an address, hence the larger allowance)."""
ACCOUNT = Rule(free=10, max_delay=30.0)
"""One account from every address it has never logged in from (slows distributed guessing)."""


class LoginThrottle:
    """Failure counts in memory (a restart forgets them, which costs an attacker nothing worth having)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._known: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def _keys(self, user_id: str, address: str) -> list[tuple[str, Rule]]:
        keys = [(f"pair\n{user_id}\n{address}", PAIR), (f"address\n{address}", ADDRESS)]
        if not self._is_known(user_id, address):
            keys.append((f"account\n{user_id}", ACCOUNT))
        return keys

    def _is_known(self, user_id: str, address: str) -> bool:
        stamp = self._known.get(f"{user_id}\n{address}")
        return stamp is not None and self.clock() - stamp < KNOWN_ADDRESS_SECONDS

    def wait_seconds(self, user_id: str, address: str) -> float:
        """How long this account must wait before trying again from this address (0: go ahead)."""
        now = self.clock()
        longest = 0.0
        with self._lock:
            for key, rule in self._keys(user_id, address):
                entry = self._failures.get(key)
                if entry is None:
                    continue
                failures, last = entry
                if now - last > FORGET_AFTER_SECONDS:
                    del self._failures[key]
                    continue
                longest = max(longest, last + rule.delay(failures) - now)
        return longest

    def check(self, user_id: str, address: str) -> None:
        """Refuse (in the login's own failure style) while a delay is running."""
        wait = self.wait_seconds(user_id, address)
        if wait > 0:
            raise Unauthorized(f"too many failed logins: try again in {max(1, round(wait))} seconds")

    def failed(self, user_id: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            for key, _ in self._keys(user_id, address):
                failures, last = self._failures.pop(key, (0, now))
                if now - last > FORGET_AFTER_SECONDS:
                    failures = 0
                self._failures[key] = (failures + 1, now)
            self._trim(self._failures)

    def succeeded(self, user_id: str, address: str) -> None:
        with self._lock:
            self._failures.pop(f"pair\n{user_id}\n{address}", None)
            self._known.pop(f"{user_id}\n{address}", None)
            self._known[f"{user_id}\n{address}"] = self.clock()
            self._trim(self._known)

    @staticmethod
    def _trim(entries: OrderedDict[str, object]) -> None:
        while len(entries) > MAX_ENTRIES:
            entries.popitem(last=False)

    def size(self) -> int:
        with self._lock:
            return len(self._failures) + len(self._known)
