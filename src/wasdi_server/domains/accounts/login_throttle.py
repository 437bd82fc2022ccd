"""Login throttling: failed password checks slow down further attempts, keyed by account and client address.

Any protocol that checks passwords uses one ``LoginThrottle`` the same way (the API's ``/auth/login``
today; a file-transfer server later): ``check(account, address)`` before the password check (``Throttled``
while a delay runs: refused at once, not checked, not counted, so an attacker only earns longer waits),
then ``failed`` or ``succeeded``.

Nothing here depends on whether the account exists: the login checks a password for an unknown account
too (against a dummy hash), so failures against unknown accounts cost what others cost and count the
same, and the throttle's answers cannot tell an attacker which accounts exist.

What a stranger cannot do with it: lock out someone else.  An account is refused only for its own
failures from one address (``PAIR``), for failures from addresses it has never logged in from
(``ACCOUNT``, which never applies at an address the account has used: its owner is not slowed by a
stranger guessing from elsewhere), and for failures from an address it has never logged in from
(``ADDRESS``: password spraying from one address; everyone who has logged in from that address before,
colleagues behind an office's NAT included, still gets in with the right password).  What it cannot
tell apart: two people behind one address failing on the same account.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ...bounded_cache import BoundedCache
from ...errors import Unauthorized

FORGET_AFTER_SECONDS = 15 * 60.0
"""Failures older than this (counted from the last one) are forgotten."""
KNOWN_ADDRESS_SECONDS = 30 * 24 * 3600.0
"""An address an account logged in from is known to that account for this long."""
MAX_ENTRIES = 100_000
"""Memory bound of each table: the oldest entries go first."""


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
ACCOUNT = Rule(free=10, max_delay=30.0)
"""One account from every address it has not logged in from (slows guessing spread over many addresses)."""
ADDRESS = Rule(free=20, max_delay=300.0)
"""Every account that has not logged in from it, from one address (slows one address trying many accounts)."""


class Throttled(Unauthorized):
    """An attempt refused while a delay runs (the login's own failure, 401)."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"too many failed logins: try again in {max(1, round(wait))} seconds")
        self.wait = wait


class LoginThrottle:
    """Failure counts in memory (a restart forgets them, which costs an attacker nothing worth having)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._failures: BoundedCache[str, tuple[int, float]] = BoundedCache(MAX_ENTRIES)
        self._known: BoundedCache[str, float] = BoundedCache(MAX_ENTRIES)
        self._lock = threading.Lock()

    def _keys(self, account: str, address: str) -> list[tuple[str, Rule]]:
        keys = [(f"pair\n{account}\n{address}", PAIR)]
        if not self._is_known(account, address):
            keys += [(f"account\n{account}", ACCOUNT), (f"address\n{address}", ADDRESS)]
        return keys

    def _is_known(self, account: str, address: str) -> bool:
        stamp = self._known.get(f"{account}\n{address}")
        return stamp is not None and self.clock() - stamp < KNOWN_ADDRESS_SECONDS

    def wait_seconds(self, account: str, address: str) -> float:
        """How long this account must wait before trying again from this address (0: go ahead)."""
        now = self.clock()
        longest = 0.0
        with self._lock:
            for key, rule in self._keys(account, address):
                entry = self._failures.get(key)
                if entry is None:
                    continue
                failures, last = entry
                if now - last > FORGET_AFTER_SECONDS:
                    self._failures.pop(key)
                    continue
                longest = max(longest, last + rule.delay(failures) - now)
        return longest

    def check(self, account: str, address: str) -> None:
        """``Throttled`` while a delay runs for this account at this address."""
        wait = self.wait_seconds(account, address)
        if wait > 0:
            raise Throttled(wait)

    def failed(self, account: str, address: str) -> None:
        """Count a failed password check."""
        now = self.clock()
        with self._lock:
            for key, _ in self._keys(account, address):
                failures, last = self._failures.pop(key) or (0, now)
                if now - last > FORGET_AFTER_SECONDS:
                    failures = 0
                self._failures.put(key, (failures + 1, now))

    def succeeded(self, account: str, address: str) -> None:
        """A right password: this account's failures here are forgotten and the address is known to it."""
        with self._lock:
            self._failures.pop(f"pair\n{account}\n{address}", None)
            self._known.put(f"{account}\n{address}", self.clock())

    def size(self) -> int:
        with self._lock:
            return len(self._failures) + len(self._known)
