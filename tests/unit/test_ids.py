import re

import pytest

from blackboard.errors import BlackboardError
from blackboard.ids import resolve_session_id, validate_session_id

HOSTILE = [
    pytest.param("..", id="dot-dot"),
    pytest.param(".", id="dot"),
    pytest.param("a/../b", id="traversal"),
    pytest.param("/etc/passwd", id="absolute"),
    pytest.param("a/b", id="slash"),
    pytest.param("a\\b", id="backslash"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("", id="empty"),
    pytest.param("x" * 10_000, id="ten-thousand-chars"),
    pytest.param("x" * 129, id="129-chars"),
    pytest.param("-rf", id="leading-dash"),
    pytest.param(".hidden", id="leading-dot"),
    pytest.param("a b", id="space"),
    pytest.param("a\nb", id="newline"),
    pytest.param("séance", id="non-ascii"),
    pytest.param(123, id="not-a-string"),
    pytest.param(["a"], id="list"),
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
    assert resolve_session_id("stdin1", env) == "stdin1"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"BLACKBOARD_SESSION_ID": "a", "CLAUDE_CODE_SESSION_ID": "b", "CLAUDE_SESSION_ID": "c"}, "a"),
        ({"CLAUDE_CODE_SESSION_ID": "b", "CLAUDE_SESSION_ID": "c"}, "b"),
        ({"CLAUDE_SESSION_ID": "c"}, "c"),
    ],
)
def test_environment_order(env: dict, expected: str) -> None:
    assert resolve_session_id(None, env) == expected


def test_fallback_is_timestamp_and_pid() -> None:
    session_id = resolve_session_id(None, {})
    assert re.fullmatch(r"\d{8}T\d{6}Z-\d+", session_id)
    validate_session_id(session_id)


def test_hostile_stdin_id_is_refused_not_replaced() -> None:
    with pytest.raises(BlackboardError):
        resolve_session_id("../../etc", {"CLAUDE_CODE_SESSION_ID": "fine"})
