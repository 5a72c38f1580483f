import re

import pytest

from blackboard.errors import BlackboardError
from blackboard.ids import resolve_session_id, validate_session_id
from blackboard.settings import Settings
from helpers import HOSTILE_SESSION_IDS

HOSTILE = [pytest.param(value, id=name) for name, value in HOSTILE_SESSION_IDS.items()] + [
    pytest.param("", id="empty"),
    pytest.param(123, id="not-a-string"),
    pytest.param(["a"], id="list"),
    pytest.param(None, id="none"),
    pytest.param(b"abc", id="bytes"),
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_are_refused(value: object) -> None:
    with pytest.raises(BlackboardError, match="refusing session id"):
        validate_session_id(value)


@pytest.mark.parametrize("value", ["a", "abc-123", "5f1c8a2e-9b7d-4c1e-8f00-123456789abc", "A.b_c-d", "x" * 128])
def test_good_ids_pass(value: str) -> None:
    assert validate_session_id(value) == value


def test_stdin_id_wins() -> None:
    env = {"BLACKBOARD_SESSION_ID": "env1", "CLAUDE_CODE_SESSION_ID": "env2"}
    assert resolve_session_id("stdin1", Settings(env).named_session) == "stdin1"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"BLACKBOARD_SESSION_ID": "a", "CLAUDE_CODE_SESSION_ID": "b", "CLAUDE_SESSION_ID": "c"}, "a"),
        ({"CLAUDE_CODE_SESSION_ID": "b", "CLAUDE_SESSION_ID": "c"}, "b"),
        ({"CLAUDE_SESSION_ID": "c"}, "c"),
    ],
)
def test_environment_order(env: dict, expected: str) -> None:
    assert resolve_session_id(None, Settings(env).named_session) == expected


def test_fallback_is_timestamp_and_pid() -> None:
    session_id = resolve_session_id(None, Settings({}).named_session)
    assert re.fullmatch(r"\d{8}T\d{6}Z-\d+", session_id)
    validate_session_id(session_id)


HOSTILE_STRINGS = [pytest.param(value, id=name) for name, value in HOSTILE_SESSION_IDS.items()]


@pytest.mark.parametrize("value", HOSTILE_STRINGS)
def test_hostile_stdin_id_is_refused_not_replaced(value: str) -> None:
    with pytest.raises(BlackboardError, match="refusing session id"):
        resolve_session_id(value, Settings({"CLAUDE_CODE_SESSION_ID": "fine"}).named_session)


@pytest.mark.parametrize("variable", ["BLACKBOARD_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID"])
@pytest.mark.parametrize("value", HOSTILE_STRINGS)
def test_hostile_environment_id_is_refused_not_skipped(variable: str, value: str) -> None:
    env = {"CLAUDE_SESSION_ID": "fine", variable: value}  # a good id further down does not rescue it
    with pytest.raises(BlackboardError, match="refusing session id"):
        resolve_session_id(None, Settings(env).named_session)


def test_an_empty_stdin_id_means_not_given() -> None:
    assert resolve_session_id("", Settings({"CLAUDE_CODE_SESSION_ID": "from-env"}).named_session) == "from-env"
