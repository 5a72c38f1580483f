import re
from datetime import datetime, timezone

import pytest

from blackboard.clock import age_seconds, describe_age, now_iso, parse_iso


def test_now_is_utc_with_z() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now_iso())
    age = age_seconds(now_iso())
    assert age is not None and abs(age) < 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T10:00:00Z", datetime(2026, 11, 22, 10, tzinfo=timezone.utc)),
        ("2026-11-22T10:00:00+00:00", datetime(2026, 11, 22, 10, tzinfo=timezone.utc)),
        ("2026-11-22T10:00:00", datetime(2026, 11, 22, 10, tzinfo=timezone.utc)),
        ("yesterday", None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_parse_iso(text: object, expected: object) -> None:
    assert parse_iso(text) == expected


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 seconds"),
        (1, "1 second"),
        (59, "59 seconds"),
        (60, "1 minute"),
        (7200, "2 hours"),
        (86400 * 12, "12 days"),
    ],
)
def test_describe_age(seconds: float, text: str) -> None:
    assert describe_age(seconds) == text
