"""The process's limit of open files, raised at start to what the connection budgets need.

Every connection a listener holds is a descriptor, and so is every file served, every pipe to a run and the
store's own files.  Many systems start a process with a soft limit of 1,024; ``wasdi-server serve`` raises
it (``RLIMIT_NOFILE``, within the hard limit an unprivileged process may not pass) to the sum of the
listeners' budgets plus ``RESERVE``.  Where the hard limit is lower, the budgets shrink in proportion, so the
listeners stop at their budget rather than at a failing ``accept()``.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

RESERVE = 1024
"""Descriptors kept for everything that is not a client connection (files, pipes, the store, the runs)."""
SMALLEST_BUDGET = 16


@dataclass(frozen=True)
class DescriptorLimit:
    """The open-files limit as found and as set."""

    found: int
    """The soft limit the process started with."""
    soft: int
    """The soft limit now."""
    hard: int
    """The hard limit (unlimited as -1)."""
    needed: int
    """What the budgets need (their sum plus ``RESERVE``)."""

    @property
    def enough(self) -> bool:
        return self.soft == resource.RLIM_INFINITY or self.soft >= self.needed

    def describe(self) -> str:
        hard = "unlimited" if self.hard == resource.RLIM_INFINITY else str(self.hard)
        soft = "unlimited" if self.soft == resource.RLIM_INFINITY else str(self.soft)
        raised = f" (raised from {self.found})" if self.soft != self.found else ""
        verdict = "enough" if self.enough else \
            "NOT enough: the connection budgets are cut to fit (raise the hard limit: ulimit -Hn, LimitNOFILE=)"
        return (f"open files: soft limit {soft}{raised}, hard limit {hard}; the connection budgets "
                f"need {self.needed}: {verdict}")


def needed(budgets: dict[str, int]) -> int:
    return sum(budgets.values()) + RESERVE


def current(budgets: dict[str, int]) -> DescriptorLimit:
    """The limit as it is (``wasdi-server doctor``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return DescriptorLimit(soft, soft, hard, needed(budgets))


def raise_to_fit(budgets: dict[str, int]) -> DescriptorLimit:
    """Raise the soft limit to what ``budgets`` (listener -> connections in all) need, within the hard limit
    (never lowering it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed(budgets)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            target = soft
    else:
        target = soft
    return DescriptorLimit(soft, target, hard, want)


def fitted(budgets: dict[str, int], limit: DescriptorLimit) -> dict[str, int]:
    """``budgets`` cut in proportion so that they and ``RESERVE`` fit in the soft limit (unchanged if they do)."""
    if limit.enough or limit.soft == resource.RLIM_INFINITY:
        return dict(budgets)
    room = max(limit.soft - RESERVE, SMALLEST_BUDGET * len(budgets))
    total = sum(budgets.values())
    return {name: max(SMALLEST_BUDGET, value * room // total) for name, value in budgets.items()}
