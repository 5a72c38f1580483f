"""UTC timestamps as ISO-8601 strings ending in ``Z`` (e.g. ``2026-11-22T10:00:00Z``)."""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Optional


def now_iso() -> str:
    """The current UTC time, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def parse_iso(text: object) -> Optional[datetime]:
    """An aware datetime for an ISO-8601 string, or None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    from datetime import datetime, timezone  # not needed by most hook runs

    try:
        value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def epoch_seconds(text: object) -> Optional[float]:
    """Seconds since 1970 of an ISO-8601 timestamp, or None when it is not one.

    Our own ``YYYY-MM-DDTHH:MM:SSZ`` is read here by hand: importing ``datetime`` costs a
    third of a bare interpreter start, and SessionStart reads a few of these every time.
    Any other form goes through ``datetime``.
    """
    if isinstance(text, str) and len(text) == 20:
        separators = text[4] + text[7] + text[10] + text[13] + text[16] + text[19]
        digits = text[0:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
        if separators == "--T::Z" and digits.isascii() and digits.isdigit():
            year, month, day = int(text[0:4]), int(text[5:7]), int(text[8:10])
            hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
            if not (year and 1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
                return None
            if hour > 23 or minute > 59 or second > 59:
                return None
            return float(_days_since_1970(year, month, day) * 86400 + hour * 3600 + minute * 60 + second)
    then = parse_iso(text)
    return None if then is None else then.timestamp()


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_since_1970(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (the count in a year starting in March)."""
    year -= month <= 2
    era, year_of_era = divmod(year, 400)
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def age_seconds(text: object) -> Optional[float]:
    """Seconds elapsed since an ISO-8601 timestamp, or None when it is not one."""
    then = epoch_seconds(text)
    return None if then is None else time.time() - then


def describe_age(seconds: float) -> str:
    """A short human age: ``45 seconds``, ``3 hours``, ``12 days``."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    count = max(int(seconds), 0)
    return f"{count} second{'s' if count != 1 else ''}"


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """Seconds in ``30d``, ``12h``, ``45m``, ``2w`` or a plain number of seconds; ValueError otherwise."""
    text = text.strip().lower()
    unit = _UNITS.get(text[-1:]) if text else None
    number = text[:-1] if unit else text
    value = float(number) * (unit or 1)
    if value < 0 or value != value:
        raise ValueError(text)
    return value
