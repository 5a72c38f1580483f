"""One project, every way in: the real hooks in two worktrees and a link of a repository without a remote
(SPEC §15a, issue 37 points 5 and 6, docs/adr/0031-one-project-every-way-in.md)."""

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from blackboard import session
from blackboard.paths import PathResolver
from blackboard.project import Project, former_local_name
from helpers import make_git_project, settings_now, spawn_hook, start_payload

GIT_IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


@pytest.fixture
def claude() -> Iterator[Callable[[], str]]:
    """Start a process standing in for one session's Claude Code (one process runs one conversation): its pid."""
    procs: list[subprocess.Popen] = []

    def start() -> str:
        procs.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"]))
        return str(procs[-1].pid)

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


@pytest.fixture
def ways_in(tmp_path: Path) -> dict[str, Path]:
    """``git init``, a commit, ``git worktree add ../widget-review``, and ``current -> widget``: no origin."""
    repo = make_git_project(tmp_path / "widget", remote=None)
    (repo / "util.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(repo), "add", "util.py"], check=True)
    subprocess.run(["git", "-C", str(repo), *GIT_IDENTITY, "commit", "-q", "-m", "util"], check=True)
    review = tmp_path / "widget-review"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(review)], check=True, capture_output=True)
    (tmp_path / "current").symlink_to(repo)
    return {"widget": repo, "widget-review": review, "current": tmp_path / "current"}


def _started(run_hook, session_id: str, cwd: Path, pid: str):  # type: ignore[no-untyped-def]
    result = run_hook("SessionStart", start_payload(session_id, cwd), env={"CLAUDE_PID": pid})
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    return result


def _edit(session_id: str, cwd: Path, path: Path, event: str, mode: str = "default") -> dict:
    return {
        "session_id": session_id,
        "cwd": str(cwd),
        "hook_event_name": event,
        "permission_mode": mode,
        "tool_name": "Edit",
        "tool_input": {"file_path": str(path), "old_string": "x = 1", "new_string": "x = 2"},
        "tool_use_id": "toolu_01",
    }


def test_sessions_in_two_worktrees_and_a_link_share_one_board(
    run_hook, ways_in: dict[str, Path], root: Path, claude: Callable[[], str]
) -> None:
    _started(run_hook, "a1", ways_in["widget"], claude())

    in_review = _started(run_hook, "b2", ways_in["widget-review"], claude()).context
    assert "Other live sessions of this project" in in_review
    assert "- a1: " in in_review

    through_link = _started(run_hook, "c3", ways_in["current"], claude()).context
    assert "- a1: this checkout" in through_link and "- b2: " in through_link
    assert os.listdir(root / "local") == [former_local_name(str(ways_in["widget"]))]  # the main checkout's board


def test_the_guard_sees_an_edit_made_through_a_link(
    run_hook, ways_in: dict[str, Path], claude: Callable[[], str]
) -> None:
    """a1 works in ``current`` (a link to the checkout), b2 in the checkout itself: one file, one guard."""
    env = {"CLAUDE_PID": claude()}
    current, widget = ways_in["current"], ways_in["widget"]
    _started(run_hook, "a1", current, env["CLAUDE_PID"])
    _started(run_hook, "b2", widget, claude())
    (current / "util.py").write_text("changed through the link, not committed\n")  # held while uncommitted
    assert run_hook("PostToolUse", _edit("a1", current, current / "util.py", "PostToolUse"), env=env).returncode == 0

    asked = run_hook("PreToolUse", _edit("b2", widget, widget / "util.py", "PreToolUse", "bypassPermissions"))

    assert asked.returncode == 0 and asked.stderr == b""
    output = json.loads(asked.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and "session a1" in output["permissionDecisionReason"]
    review = ways_in["widget-review"]
    warned = run_hook("PreToolUse", _edit("b2", review, review / "util.py", "PreToolUse", "bypassPermissions"))
    assert "permissionDecision" not in warned.stdout.decode()  # the same file in another worktree: a warning only
    assert "a1" in json.loads(warned.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_live_session_on_a_former_board_is_seen_once_its_board_moves(
    run_hook, ways_in: dict[str, Path], root: Path, claude: Callable[[], str]
) -> None:
    """Upgrading with a session at work in the worktree: the next start there brings its board along."""
    review = ways_in["widget-review"]
    former = PathResolver(str(root), Project("local", former_local_name(str(review)), None, "before ADR 31"))
    pid = claude()
    session.start(former, "old1", "startup", {"cwd": str(review)}, settings_now(CLAUDE_PID=pid))

    context = _started(run_hook, "new2", review, claude()).context

    assert "- old1: this checkout" in context
    assert not os.path.lexists(os.path.dirname(former.project_dir))
    prompt = {"session_id": "old1", "cwd": str(review), "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    assert run_hook("UserPromptSubmit", prompt, env={"CLAUDE_PID": pid}).returncode == 0
    assert not os.path.lexists(former.project_dir)  # the session goes on in its board's new place


def test_a_start_in_the_main_checkout_sees_a_worktrees_session_on_its_former_board(
    run_hook, ways_in: dict[str, Path], root: Path, claude: Callable[[], str]
) -> None:
    review = ways_in["widget-review"]
    former = PathResolver(str(root), Project("local", former_local_name(str(review)), None, "before ADR 31"))
    session.start(former, "old1", "startup", {"cwd": str(review)}, settings_now(CLAUDE_PID=claude()))

    context = _started(run_hook, "new2", ways_in["widget"], claude()).context

    (line,) = [line for line in context.splitlines() if line.startswith("- old1: ")]
    assert "widget-review" in line, line  # named by its worktree
    assert not os.path.lexists(former.project_dir)


def test_sessions_starting_at_once_move_a_former_board_exactly_once(
    hook_venv: Path, ways_in: dict[str, Path], root: Path
) -> None:
    review = ways_in["widget-review"]
    former = PathResolver(str(root), Project("local", former_local_name(str(review)), None, "before ADR 31"))
    for n in range(5):
        session.start(former, f"old{n}", "startup", {"cwd": str(review)}, settings_now())
    Path(former.get_legacy_dir()).mkdir()
    (Path(former.get_legacy_dir()) / "decisions.md").write_bytes(os.urandom(64 * 1024))
    before = {
        str(p.relative_to(former.project_dir)): p.read_bytes()
        for p in Path(former.project_dir).rglob("*")
        if p.is_file() and not p.name.endswith(".lock")  # locks the starts above took and let go
    }

    procs = [spawn_hook("SessionStart", start_payload(f"s{i}", review), hook_venv) for i in range(6)]
    for proc in procs:
        proc.stdin.close()  # all at once
    results = [(proc.wait(60), proc.stdout.read(), proc.stderr.read()) for proc in procs]

    assert [(code, err) for code, _, err in results] == [(0, b"")] * 6
    assert os.listdir(root / "local") == [former_local_name(str(ways_in["widget"]))]
    board = root / "local" / former_local_name(str(ways_in["widget"])) / ".blackboard"
    aside = f"_legacy/board-{former.project.name}/"
    for relative, data in before.items():
        moved = board / relative if relative.split("/")[0] in ("sessions", "_active") else board / (aside + relative)
        assert moved.read_bytes() == data, relative
    manifest = json.loads((board / "_legacy" / "_migration.json").read_text())
    assert len([run for run in manifest["migrations"] if run.get("board")]) == 1
    expected = [f"old{n}" for n in range(5)] + [f"s{i}" for i in range(6)]
    assert sorted(os.listdir(board / "sessions")) == sorted(expected)
    for proc in procs:
        proc.stdout.close()
        proc.stderr.close()
