"""The one date helper: every instant is UTC, read and written the same way everywhere.

``datetime.fromisoformat`` (Python 3.11+) reads every form the contract and the clients use
(``2024-01-05``, ``2024-01-05T10:14:11.123Z``, ``2024-01-05 10:14:11+02:00``, ...).  A time without a
zone is UTC: never the server's local time, which would make answers depend on where it runs.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

MAX_TEXT = 64


def parse_utc(text: str) -> datetime:
    """An aware UTC datetime from an ISO-8601 text; ``ValueError`` when unreadable."""
    value = text.strip()
    if not value or len(value) > MAX_TEXT:
        raise ValueError(f"not a date: {value[:40]!r}")
    if value.endswith("z"):
        value = value[:-1] + "Z"  # fromisoformat knows only the capital
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as e:
        raise ValueError(f"not a date: {value[:40]!r}") from e
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError as e:
        raise ValueError(f"date out of range: {value[:40]!r}") from e


def to_epoch_ms(moment: datetime) -> float:
    """Epoch milliseconds of ``moment`` (a naive datetime counts as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp() * 1000.0


def parse_epoch_ms(text: str) -> float:
    """Epoch milliseconds of an ISO-8601 text (zone-less means UTC); ``ValueError`` when unreadable."""
    return to_epoch_ms(parse_utc(text))


def from_epoch_ms(ms: float) -> datetime:
    """The UTC datetime of epoch milliseconds; ``ValueError`` when out of range or not finite."""
    if not math.isfinite(ms):
        raise ValueError("not a finite time")
    try:
        return datetime.fromtimestamp(ms / 1000.0, tz=UTC)
    except (OverflowError, OSError) as e:
        raise ValueError("time out of range") from e


def now_utc() -> datetime:
    return datetime.now(UTC)


def now_ms() -> float:
    return time.time() * 1000.0


def iso_z(moment: datetime) -> str:
    """``2024-01-05T10:14:11.000Z``: the millisecond UTC form clients send and read."""
    utc = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


JAVA_DATE = "%a %b %d %H:%M:%S UTC %Y"
"""``Tue Jul 02 17:17:26 UTC 2024``: the text Java's ``Date.toString`` gives, which clients know for user dates."""
PROCESS_DATE = "%Y-%m-%d %H:%M:%S"
"""``2024-07-02 17:17:26``: the process, payment and template dates."""
SECONDS_Z = "%Y-%m-%dT%H:%M:%SZ"
"""``2024-07-02T17:17:26Z``: file modification times in product metadata."""


def format_ms(ms: float, pattern: str) -> str:
    """Epoch milliseconds as UTC text in a ``time.strftime`` pattern (one of the forms above)."""
    return time.strftime(pattern, time.gmtime(ms / 1000.0))


def format_ms_or_none(ms: float | None, pattern: str = PROCESS_DATE) -> str | None:
    """``format_ms`` of a stored date that may be missing (``None`` stays ``None``)."""
    return None if ms is None else format_ms(float(ms), pattern)


def java_date_text(ms: float | None = None) -> str:
    """``Tue Jul 02 17:17:26 UTC 2024`` for ``ms`` (default: now)."""
    return format_ms(ms if ms is not None else now_ms(), JAVA_DATE)


def iso_z_ms(ms: float | None) -> str | None:
    """``2024-07-02T17:17:26.123Z`` from epoch milliseconds, exact to the millisecond (``None`` stays ``None``)."""
    if ms is None:
        return None
    seconds, millis = divmod(int(ms), 1000)
    return format_ms(seconds * 1000.0, "%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def parse_any_ms(text: str) -> float:
    """Epoch milliseconds from ``1700000000000``, an ISO-8601 date or the ``JAVA_DATE`` form; ``ValueError``
    when it is none of them."""
    value = text.strip()
    if value.isdigit():
        return float(value)
    try:
        return parse_epoch_ms(value)
    except ValueError:
        pass
    try:
        return to_epoch_ms(datetime.strptime(value, JAVA_DATE).replace(tzinfo=UTC))
    except ValueError as e:
        raise ValueError(f"not a date: {value[:40]!r}") from e
