"""The rename-on-collision rule shared by workspaces, subscriptions, projects and credit packages."""

from __future__ import annotations

from collections.abc import Iterable


def unique_name(desired: str, taken: Iterable[str]) -> str:
    """``desired`` if free, else ``desired(1)``, ``desired(2)`` ... (the first free one)."""
    used = set(taken)
    if desired not in used:
        return desired
    n = 1
    while f"{desired}({n})" in used:
        n += 1
    return f"{desired}({n})"
