"""The one way a size in bytes is written for people, by the server (workspace storage, file sizes) and the CLI."""

from __future__ import annotations


def human_size(size: int | float) -> str:
    """``0B``, ``512B``, ``12 KB``, ``3.4 GB``: powers of 1024, the text WASDI's clients show for workspace
    storage."""
    if size <= 0:
        return "0B"
    units = ["B", "KB", "MB", "GB", "TB", "PB"]
    value = float(size)
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{int(size)}B"
    return f"{value:.1f} {units[unit]}" if value < 10 else f"{round(value)} {units[unit]}"
