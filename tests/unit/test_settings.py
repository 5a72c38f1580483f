import os
import pwd
from pathlib import Path
from unittest import mock

import pytest

from blackboard.errors import BlackboardError
from blackboard.settings import Settings


def test_root_order(tmp_path: Path) -> None:
    assert Settings({"BLACKBOARD_ROOT": "/a", "MNEMONIC_ROOT": "/b"}).root == "/a"
    assert Settings({"MNEMONIC_ROOT": "/b"}).root == "/b"
    assert Settings({"HOME": str(tmp_path)}).root == str(tmp_path / ".claude" / "blackboard")
    assert Settings({"HOME": str(tmp_path), "BLACKBOARD_ROOT": "~/boards"}).root == str(tmp_path / "boards")


def test_the_home_is_the_one_of_the_environment_given_never_the_processs(tmp_path: Path) -> None:
    """The autouse fixture moved this process's HOME into tmp_path: an environment without one is not told it."""
    assert str(tmp_path) in Settings(os.environ).root
    assert str(tmp_path) not in Settings({}).root
    assert Settings({"HOME": "/elsewhere"}).claude_dir == "/elsewhere/.claude"


def test_a_relative_root_is_an_error_where_the_root_is_needed_only() -> None:
    settings = Settings({"BLACKBOARD_ROOT": "boards"})
    assert settings.host  # the rest is read: `blackboard --version` still answers
    with pytest.raises(BlackboardError, match="BLACKBOARD_ROOT='boards' is a relative path"):
        _ = settings.root


def test_settings_are_frozen_and_keep_the_environment_they_were_built_from() -> None:
    source = {"BLACKBOARD_HOST": "alpha", "PATH": "/bin"}
    settings = Settings(source)
    source["BLACKBOARD_HOST"] = "beta"
    assert settings.host == "alpha"
    assert settings.environ["BLACKBOARD_HOST"] == "alpha"
    with pytest.raises(AttributeError):
        settings.host = "beta"  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.environ["PATH"] = "/tmp"  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 10_000), ("500", 500), ("1", 1), ("0", 10_000), ("1000001", 10_000), ("lots", 10_000)],
)
def test_max_value_chars_is_bounded(value: str, expected: int) -> None:
    assert Settings({} if value is None else {"BLACKBOARD_MAX_VALUE_CHARS": value}).max_value_chars == expected


@pytest.mark.parametrize(("value", "expected"), [(None, 86400.0), ("6h", 21600.0), ("2d", 172800.0), ("soon", 86400.0)])
def test_abandon_after_reads_durations(value: str, expected: float) -> None:
    assert Settings({} if value is None else {"BLACKBOARD_ABANDON_AFTER": value}).abandon_after == expected


@pytest.mark.parametrize(("value", "on"), [(None, True), ("1", True), ("0", False), (" Off ", False), ("no", False)])
def test_switches_are_on_unless_turned_off(value: str, on: bool) -> None:
    environ = {} if value is None else {"BLACKBOARD_AUTO_ALLOW": value, "BLACKBOARD_DIGEST": value}
    assert (Settings(environ).auto_allow, Settings(environ).digest) == (on, on)


def test_the_session_named_by_the_environment_is_the_first_variable_set() -> None:
    assert Settings({"CLAUDE_SESSION_ID": "c", "CLAUDE_CODE_SESSION_ID": "b"}).named_session == (
        "CLAUDE_CODE_SESSION_ID",
        "b",
    )
    assert Settings({"BLACKBOARD_SESSION_ID": ""}).named_session is None


def test_the_author_is_the_option_then_the_agent_then_main() -> None:
    assert Settings({"BLACKBOARD_AGENT": "tester"}).author("reviewer") == "reviewer"
    assert Settings({"BLACKBOARD_AGENT": "tester"}).author(None) == "tester"
    assert Settings({}).author(None) == "main"


def test_without_any_home_a_tilde_is_an_error_and_claude_codes_folder_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """No HOME and a uid the system does not know: `~` is never read as the root of the file system."""
    monkeypatch.setattr(pwd, "getpwuid", mock.Mock(side_effect=KeyError))
    for environ in ({"BLACKBOARD_ROOT": "~/boards"}, {}):
        with pytest.raises(BlackboardError, match="no home folder to find ~/.*; set HOME"):
            _ = Settings(environ).root
    assert Settings({}).claude_dir == Settings({"CLAUDE_CONFIG_DIR": "~/claude"}).claude_dir == ""
    assert Settings({"CLAUDE_CONFIG_DIR": "/opt/claude"}).claude_dir == "/opt/claude"


def test_a_relative_home_is_not_taken_for_one() -> None:
    assert Settings({"HOME": "relative/home"}).home == pwd.getpwuid(os.getuid()).pw_dir


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 0.2), ("1", 1.0), ("0", 0.0), ("0.5", 0.5), ("1.5", 0.2), ("-1", 0.2), ("nan", 0.2), ("soon", 0.2)],
)
def test_the_time_session_end_gives_git_stays_within_what_claude_code_allows(value: str, expected: float) -> None:
    environ = {} if value is None else {"BLACKBOARD_END_GIT_TIMEOUT": value}
    assert Settings(environ).end_git_timeout == expected
