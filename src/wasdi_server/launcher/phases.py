"""Where an operation's time went: wall-clock seconds per named phase, said in one log line at its end.

An operator reading the server log sees which phase of a slow import was slow (the transfer, the disk, the
reader); ``bench/search.py`` reads the same line to print the breakdown of its import.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES_MARK = "phases:"
"""What precedes the phases in the log line (``name seconds s`` pairs, comma-separated)."""


class Phases:
    """Seconds per phase, in the order the phases were first timed; a phase timed twice adds up."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.started = time.perf_counter()

    def add(self, name: str, seconds: float) -> None:
        """Count ``seconds`` more to ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + max(0.0, seconds)

    @contextmanager
    def timing(self, name: str) -> Iterator[None]:
        """Count the time the block takes to ``name`` (also when it raises)."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - began)

    def line(self) -> str:
        """``total T s; phases: a 0.123 s, b 0.004 s`` (the total since this object was made)."""
        total = time.perf_counter() - self.started
        shown = ", ".join(f"{name} {seconds:.3f} s" for name, seconds in self.seconds.items())
        return f"{total:.3f} s; {PHASES_MARK} {shown}"


def parse_phases(text: str) -> dict[str, float]:
    """The phases of a ``Phases.line`` found in ``text`` (its last one), or an empty map."""
    at = text.rfind(PHASES_MARK)
    if at < 0:
        return {}
    found: dict[str, float] = {}
    for part in text[at + len(PHASES_MARK):].splitlines()[0].split(","):
        name, _, value = part.strip().rpartition(" ")[0].rpartition(" ")
        try:
            found[name.strip()] = float(value)
        except ValueError:
            continue
    return found
