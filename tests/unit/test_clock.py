import re
from datetime import datetime, timezone

import pytest

from blackboard.clock import age_seconds, describe_age, epoch_seconds, format_utc, now_iso


def test_now_is_utc_with_z() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now_iso())
    age = age_seconds(now_iso())
    assert age is not None
    assert abs(age) < 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T10:00:00Z", datetime(2026, 11, 22, 10, tzinfo=timezone.utc).timestamp()),
        ("2026-11-22T10:00:00+00:00", datetime(2026, 11, 22, 10, tzinfo=timezone.utc).timestamp()),
        ("2026-11-22T12:00:00+02:00", datetime(2026, 11, 22, 10, tzinfo=timezone.utc).timestamp()),
        ("2026-11-22T10:00:00", datetime(2026, 11, 22, 10, tzinfo=timezone.utc).timestamp()),
        ("yesterday", None),
        ("", None),
        (None, None),
        (42, None),
    ],
)
def test_epoch_seconds(text: object, expected: object) -> None:
    assert epoch_seconds(text) == expected


def test_format_utc_is_the_inverse_of_epoch_seconds() -> None:
    assert format_utc(1_795_000_000) == "2026-11-18T11:06:40Z"
    assert epoch_seconds(format_utc(1_795_000_000)) == 1_795_000_000


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


@pytest.mark.parametrize(
    "text",
    [
        "1900-02-29T00:00:00Z",  # not a leap year by the 100 rule
        "2026-02-30T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-11-00T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2026-11-22T24:00:00Z",
        "2026-11-22T10:60:00Z",
        "2026-11-22T10:00:60Z",
        "+026-11-22T10:00:00Z",
        "2026-1\uff11-22T10:00:00Z",  # a full-width digit
        "",
        "yesterday",
    ],
)
def test_epoch_seconds_refuses_what_is_not_a_time(text: str) -> None:
    assert epoch_seconds(text) is None
