"""The one way a size in bytes is written for people, by the server (workspace storage, file sizes, search results)
and the CLI: the two forms the original server writes."""

from __future__ import annotations

UNITS = ("B", "KB", "MB", "GB", "TB", "PB")


def scaled(size: int | float) -> tuple[float, str]:
    """``size`` bytes in the largest unit (powers of 1024) that keeps the value at 1 or more."""
    value, unit = float(size), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value /= 1024
        unit += 1
    return value, UNITS[unit]


def human_size(size: int | float) -> str:
    """``0B``, ``512B``, ``12 KB``, ``3.4 GB``: the text WASDI's clients show for workspace storage."""
    if size <= 0:
        return "0B"
    value, unit = scaled(size)
    if unit == "B":
        return f"{int(size)}B"
    return f"{value:.1f} {unit}" if value < 10 else f"{round(value)} {unit}"


def search_size(size: int | float | None) -> str | None:
    """``123 B``, ``1.23 GB``: a search result's size, as the original's results show it."""
    if size is None:
        return None
    value, unit = scaled(max(0.0, float(size)))
    return f"{int(value)} B" if unit == "B" else f"{value:.2f} {unit}"
