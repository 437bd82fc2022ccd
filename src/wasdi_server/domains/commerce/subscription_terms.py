"""Subscription terms: the types on sale and the user type each grants, the period each buys, and the dates
of a subscription.

- Dates are stored as epoch milliseconds and emitted as ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` (UTC).  On
  input a date is an ISO-8601 string (``Z`` or an offset; a date alone is midnight UTC) or a number of
  epoch milliseconds (also as text).
- Periods: a missing end is derived from the type (Free 90 days, OneDay 1 day, OneWeek 7 days, OneMonth one
  calendar month, OneYear one calendar year).  ``durationDays`` is always the whole number of days between
  start and end.
"""

from __future__ import annotations

import calendar
import math
from typing import Any

from ...dates import from_epoch_ms, parse_epoch_ms
from ...errors import BadRequest

DAY_MS = 24 * 3600 * 1000.0
TRIAL_DAYS = 90
MAX_EPOCH_MS = 253402300799999  # 9999-12-31T23:59:59.999Z

SUBSCRIPTION_TYPES: dict[str, tuple[str, str]] = {
    # typeId: (name, user type it grants)
    "Free": ("Free", "FREE"),
    "OneDayStandard": ("One Day Standard", "STANDARD"),
    "OneWeekStandard": ("One Week Standard", "STANDARD"),
    "OneMonthStandard": ("One Month Standard", "STANDARD"),
    "OneYearStandard": ("One Year Standard", "STANDARD"),
    "OneMonthProfessional": ("One Month Professional", "PROFESSIONAL"),
    "OneYearProfessional": ("One Year Professional", "PROFESSIONAL"),
}
TYPE_PERIODS: dict[str, tuple[int, int]] = {
    # typeId: (days, months) of the period the type buys
    "Free": (TRIAL_DAYS, 0),
    "OneDayStandard": (1, 0),
    "OneWeekStandard": (7, 0),
    "OneMonthStandard": (0, 1),
    "OneYearStandard": (0, 12),
    "OneMonthProfessional": (0, 1),
    "OneYearProfessional": (0, 12),
}
USER_TYPE_RANK = {"NONE": 0, "FREE": 1, "STANDARD": 2, "PROFESSIONAL": 3}


def parse_date(value: Any, what: str) -> int | None:
    """Epoch milliseconds from an ISO string or a number (or its text); ``None`` when empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise BadRequest(f"{what} is not a date")
    number: float | None = None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if len(text) > 64:
            raise BadRequest(f"{what} is not a date")
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is None:
            try:
                number = parse_epoch_ms(text)
            except ValueError as e:
                raise BadRequest(f"{what} is not an ISO-8601 date or epoch milliseconds: {text[:40]!r}") from e
    else:
        raise BadRequest(f"{what} is not a date")
    if not math.isfinite(number) or not 0 <= number <= MAX_EPOCH_MS:
        raise BadRequest(f"{what} is out of range")
    return int(number)


def add_period(start_ms: int, days: int, months: int) -> int:
    """``start`` plus whole days and calendar months (a missing day of month becomes the month's last)."""
    if months:
        stamp = from_epoch_ms(start_ms)
        total = stamp.month - 1 + months
        year, month = stamp.year + total // 12, total % 12 + 1
        day = min(stamp.day, calendar.monthrange(year, month)[1])
        start_ms = int(stamp.replace(year=year, month=month, day=day).timestamp() * 1000)
    return min(MAX_EPOCH_MS, int(start_ms + days * DAY_MS))


def type_end(type_id: str, start_ms: int) -> int:
    days, months = TYPE_PERIODS.get(type_id, (TRIAL_DAYS, 0))
    return add_period(start_ms, days, months)


def duration_days(start_ms: float, end_ms: float) -> int:
    return max(0, round((end_ms - start_ms) / DAY_MS))


def type_name(type_id: str | None) -> str:
    return SUBSCRIPTION_TYPES.get(type_id or "", (type_id or "", "NONE"))[0]


def check_type(type_id: Any) -> str:
    if not isinstance(type_id, str) or type_id not in SUBSCRIPTION_TYPES:
        raise BadRequest(f"invalid subscription type; one of: {', '.join(SUBSCRIPTION_TYPES)}")
    return type_id

