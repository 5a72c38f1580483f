"""The live-session hooks as Claude Code runs them: processes, real stdin JSON (docs/adr/0029-live-sessions.md)."""

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import start_payload


@pytest.fixture
def claude(claudes: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    return claudes()


def _edit(session_id: str, project: Path, path: str, mode: str = "default", event: str = "PreToolUse") -> dict:
    return {
        "session_id": session_id,
        "cwd": str(project),
        "hook_event_name": event,
        "permission_mode": mode,
        "tool_name": "Edit",
        "tool_input": {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"},
        "tool_use_id": "toolu_01",
    }


@pytest.fixture
def a_edited(run_hook, project: Path, claude: subprocess.Popen, claudes: Callable[[], subprocess.Popen]) -> Path:
    """Sessions a1 and b2 live in the checkout, each in a Claude Code process of its own; a1 asked for
    something and edited util.py."""
    env = {"CLAUDE_PID": str(claude.pid)}
    (project / "util.py").write_text("x = 1\n")
    assert run_hook("SessionStart", start_payload("a1", project), env=env).returncode == 0
    other = {"CLAUDE_PID": str(claudes().pid)}
    assert run_hook("SessionStart", start_payload("b2", project), env=other).returncode == 0
    prompt = {"session_id": "a1", "cwd": str(project), "hook_event_name": "UserPromptSubmit"}
    run_hook("UserPromptSubmit", {**prompt, "prompt": "make util.py return 2, password=hunter2xyz"}, env=env)
    assert (
        run_hook("PostToolUse", _edit("a1", project, str(project / "util.py"), event="PostToolUse"), env=env).stdout
        == b""
    )
    return project


def _decision(result) -> dict:  # type: ignore[no-untyped-def]
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    return json.loads(result.stdout)


def test_the_pretooluse_hook_asks_about_a_file_a_live_session_edited(run_hook, a_edited: Path) -> None:
    answer = _decision(run_hook("PreToolUse", _edit("b2", a_edited, str(a_edited / "util.py"))))
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "PreToolUse" and output["permissionDecision"] == "ask"
    assert "session a1" in output["permissionDecisionReason"]
    assert "make util.py return 2" in output["permissionDecisionReason"]
    assert "hunter2xyz" not in answer["systemMessage"] + output["permissionDecisionReason"]  # redacted when typed
    assert answer["systemMessage"] == output["permissionDecisionReason"]  # the person sees it too


@pytest.mark.parametrize(
    ("mode", "env"),
    [("bypassPermissions", {}), ("dontAsk", {}), ("acceptEdits", {"CLAUDE_CODE_SESSION_ATTENDED": "0"})],
    ids=["bypass", "dont-ask", "headless"],
)
def test_where_no_one_can_be_asked_the_hook_denies(run_hook, a_edited: Path, mode: str, env: dict) -> None:
    output = _decision(run_hook("PreToolUse", _edit("b2", a_edited, str(a_edited / "util.py"), mode), env=env))
    assert output["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "systemMessage" not in output


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("{top}/other.py", id="another-file"),
        pytest.param("{top}/../outside/util.py", id="outside-the-checkout"),
        pytest.param("util.py", id="relative"),
        pytest.param("{top}/util.py\u0000", id="nul"),
        pytest.param("{top}/\ud800.py", id="lone-surrogate"),
        pytest.param("{top}/" + "d/" * 3000 + "util.py", id="very-deep"),
    ],
)
def test_anything_else_gets_no_decision_and_no_output(run_hook, a_edited: Path, path: str) -> None:
    result = run_hook("PreToolUse", _edit("b2", a_edited, path.format(top=a_edited)))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param({"tool_input": "not an object"}, id="input-a-string"),
        pytest.param({"tool_input": {"file_path": ["a", "list"]}}, id="path-a-list"),
        pytest.param({"session_id": "../../etc"}, id="hostile-session"),
        pytest.param({"session_id": None}, id="no-session"),
        pytest.param({"tool_name": "Write", "session_id": "a1"}, id="its-own-file"),
    ],
)
def test_hostile_or_own_payloads_cost_nothing(run_hook, a_edited: Path, payload: dict) -> None:
    result = run_hook("PreToolUse", {**_edit("b2", a_edited, str(a_edited / "util.py")), **payload})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_once_the_session_ended_its_file_is_free(run_hook, a_edited: Path) -> None:
    run_hook("SessionEnd", {"session_id": "a1", "cwd": str(a_edited), "reason": "other"})
    result = run_hook("PreToolUse", _edit("b2", a_edited, str(a_edited / "util.py")))
    assert (result.returncode, result.stdout) == (0, b"")


def test_a_new_session_is_told_who_is_here(run_hook, a_edited: Path, claudes: Callable[[], subprocess.Popen]) -> None:
    started = run_hook("SessionStart", start_payload("c3", a_edited), env={"CLAUDE_PID": str(claudes().pid)})
    assert started.returncode == 0 and started.stderr == b""
    context = started.context
    assert "Other live sessions of this project" in context
    assert '- a1: this checkout, branch "main"' in context and "- b2: this checkout" in context
    assert 'asks: "make util.py return 2' in context and "hunter2xyz" not in context
    assert 'edited: "util.py" (' in context
    assert "2 other live sessions in this project" in json.loads(started.stdout)["systemMessage"]


def test_the_next_prompt_is_told_when_another_session_moved_the_branch(
    run_hook, a_edited: Path, claude: subprocess.Popen
) -> None:
    git = ["git", "-C", str(a_edited), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "util.py"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "util"], check=True)
    stop = {"session_id": "b2", "cwd": str(a_edited), "hook_event_name": "Stop", "last_assistant_message": "ok"}
    assert run_hook("Stop", stop).returncode == 0  # b2's turn ends on main
    subprocess.run([*git, "checkout", "-q", "-b", "feature"], check=True)
    prompt = {"session_id": "b2", "cwd": str(a_edited), "hook_event_name": "UserPromptSubmit", "prompt": "go on"}

    told = run_hook("UserPromptSubmit", prompt)

    assert told.returncode == 0 and told.stderr == b""
    output = json.loads(told.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert 'from branch "main"' in output["additionalContext"]
    assert 'to branch "feature"' in output["additionalContext"]
    assert "session a1, whose latest request (data) is" in output["additionalContext"]
    assert run_hook("UserPromptSubmit", prompt).stdout == b""  # once
