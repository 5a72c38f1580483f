"""Whose file, whose branch: the verdicts one live session gets about the others (docs/adr/0029-live-sessions.md)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from blackboard import branch, guard, live, session
from blackboard.meta import update_meta
from blackboard.paths import PathResolver
from blackboard.project import identify_project
from helpers import make_git_project, settings_now


@pytest.fixture
def claude() -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def util(project: Path) -> Path:
    (project / "src").mkdir()
    path = project / "src" / "util.py"
    path.write_text("x = 1\n")
    return path


def _live_session(resolver: PathResolver, session_id: str, pid: int, request: str = "") -> None:
    session.start(
        resolver, session_id, "startup", {"cwd": resolver.project.toplevel}, settings_now(CLAUDE_PID=str(pid))
    )
    if request:
        live.record_request(resolver.live_path(session_id), request)


def _edits(resolver: PathResolver, session_id: str, path: Path) -> None:
    where = live.locate(str(path))
    assert where is not None
    live.record_edit(resolver.live_path(session_id), *where)


def _verdict(session_id: str, path: Path, mode: object = "default", **env: str) -> guard.Verdict | None:
    return guard.edit_verdict(session_id, str(path), mode, settings_now(**env))


@pytest.fixture
def a_edited(resolver: PathResolver, util: Path, claude: subprocess.Popen) -> PathResolver:
    """Session a1 (live) edited src/util.py; b2 (live too) is about to."""
    _live_session(resolver, "a1", claude.pid, "refactor the auth module")
    _live_session(resolver, "b2", claude.pid)
    _edits(resolver, "a1", util)
    return resolver


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "auto", "plan", None])
def test_a_file_another_live_session_edited_asks_naming_it_its_request_and_when(
    a_edited: PathResolver, util: Path, mode: object
) -> None:
    verdict = _verdict("b2", util, mode)
    assert verdict is not None and verdict.decision == "ask"
    assert "session a1" in verdict.reason
    assert '"refactor the auth module"' in verdict.reason
    assert "src/util.py" in verdict.reason and "ago" in verdict.reason


@pytest.mark.parametrize(
    ("mode", "env"),
    [
        pytest.param("bypassPermissions", {}, id="bypass"),
        pytest.param("dontAsk", {}, id="dont-ask"),
        pytest.param("default", {"CLAUDE_CODE_SESSION_ATTENDED": "0"}, id="headless"),
        pytest.param("acceptEdits", {"CLAUDE_CODE_SESSION_ATTENDED": "0"}, id="headless-accept-edits"),
    ],
)
def test_where_no_one_can_be_asked_the_edit_is_denied_saying_how_to_go_on(
    a_edited: PathResolver, util: Path, mode: str, env: dict
) -> None:
    verdict = _verdict("b2", util, mode, **env)
    assert verdict is not None and verdict.decision == "deny"
    assert "session a1" in verdict.reason and "To go on" in verdict.reason


def test_the_verdict_is_never_allow(a_edited: PathResolver, util: Path, tmp_path: Path) -> None:
    verdicts = [_verdict("b2", util, mode) for mode in ("default", "bypassPermissions", "dontAsk", "acceptEdits")]
    assert all(v is not None and v.decision in ("ask", "deny") for v in verdicts)


def test_the_sessions_own_files_and_its_subagents_get_nothing(a_edited: PathResolver, util: Path) -> None:
    assert _verdict("a1", util) is None


def test_an_ended_or_dead_session_or_an_old_edit_gets_nothing(
    a_edited: PathResolver, util: Path, claude: subprocess.Popen
) -> None:
    assert _verdict("b2", util, BLACKBOARD_EDIT_WINDOW="0") is None  # the guard off
    time.sleep(0.01)
    assert _verdict("b2", util, BLACKBOARD_EDIT_WINDOW="0.001") is None  # edited before the window
    session.end(a_edited, "a1", "other", settings_now(BLACKBOARD_DIGEST="0"))
    assert _verdict("b2", util) is None


def test_a_session_whose_process_died_gets_nothing(
    a_edited: PathResolver, util: Path, claude: subprocess.Popen
) -> None:
    claude.kill()
    claude.wait()
    assert _verdict("b2", util) is None


def test_a_session_this_plugin_never_started_gets_nothing(a_edited: PathResolver, util: Path) -> None:
    assert _verdict("never-started", util) is None
    assert _verdict("../../etc", util) is None


def test_the_same_file_in_another_worktree_is_a_warning_of_the_merge_to_come(
    resolver: PathResolver, util: Path, claude: subprocess.Popen, tmp_path: Path
) -> None:
    git = ["git", "-C", str(resolver.project.toplevel), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    worktree = tmp_path / "widget-feature"
    subprocess.run([*git, "worktree", "add", "-q", "-b", "feature", str(worktree)], check=True)
    there = PathResolver(resolver.root, identify_project(str(worktree)))
    assert there.project_dir == resolver.project_dir  # one board for every worktree
    _live_session(resolver, "a1", claude.pid, "refactor the auth module")
    _live_session(there, "b2", claude.pid)
    _edits(resolver, "a1", util)

    verdict = _verdict("b2", worktree / "src" / "util.py")

    assert verdict is not None and verdict.decision is None and verdict.reason == ""
    assert "another checkout" in verdict.context and "merge conflict" in verdict.context
    assert "session a1" in verdict.context and str(resolver.project.toplevel) in verdict.context
    assert _verdict("b2", worktree / "src" / "other.py") is None


def test_nothing_crosses_into_another_project(
    resolver: PathResolver, util: Path, claude: subprocess.Popen, tmp_path: Path
) -> None:
    gadget = make_git_project(tmp_path / "gadget", remote="git@github.com:acme/gadget.git")
    (gadget / "src").mkdir()
    (gadget / "src" / "util.py").write_text("")
    other = PathResolver(resolver.root, identify_project(str(gadget)))
    _live_session(resolver, "a1", claude.pid)
    _live_session(other, "b2", claude.pid)
    _edits(resolver, "a1", util)
    assert _verdict("b2", gadget / "src" / "util.py") is None


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("{tmp}/outside.py", id="outside-the-checkout"),
        pytest.param("{top}/../outside.py", id="dot-dot-out"),
        pytest.param("relative.py", id="relative"),
        pytest.param("{top}/src/util.py\0evil", id="nul"),
        pytest.param("{top}/.git/config", id="git-internals"),
    ],
)
def test_hostile_paths_cost_nothing(a_edited: PathResolver, tmp_path: Path, name: str) -> None:
    path = name.format(tmp=tmp_path, top=a_edited.project.toplevel)
    assert guard.edit_verdict("b2", path, "default", settings_now()) is None


def test_a_hostile_pid_in_the_metadata_is_not_a_live_session(a_edited: PathResolver, util: Path) -> None:
    for pid in (1, 0, -5, "1"):
        update_meta(a_edited.meta_path("a1"), lambda m, pid=pid: m.update({"claude_pid": pid}))
        assert _verdict("b2", util) is None


# --- the branch moved under a session -------------------------------------------------------------


def _commit(project: Path) -> None:
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    (project / "README.md").write_text("x\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)


def test_a_session_is_told_once_of_the_branch_another_session_moved(
    resolver: PathResolver, project: Path, claude: subprocess.Popen
) -> None:
    _commit(project)
    _live_session(resolver, "a1", claude.pid, "start the feature")
    _live_session(resolver, "b2", claude.pid)
    for session_id in ("a1", "b2"):
        branch.see_head(resolver, session_id, str(project))
    assert branch.head_notice(resolver, "b2", str(project), settings_now()) is None
    subprocess.run(["git", "-C", str(project), "checkout", "-q", "-b", "feature"], check=True)
    branch.record_own_move(resolver, "a1", str(project))  # a1 moved it, with a git command of its own

    notice = branch.head_notice(resolver, "b2", str(project), settings_now())

    assert notice is not None
    assert 'from branch "main"' in notice and 'to branch "feature"' in notice
    assert 'it was moved by session a1, whose latest request (data) is "start the feature"' in notice
    assert branch.head_notice(resolver, "b2", str(project), settings_now()) is None  # once
    assert branch.head_notice(resolver, "a1", str(project), settings_now()) is None  # it moved it itself


def test_a_commit_by_another_session_moves_head_too(
    resolver: PathResolver, project: Path, claude: subprocess.Popen
) -> None:
    _commit(project)
    _live_session(resolver, "b2", claude.pid)
    branch.see_head(resolver, "b2", str(project))
    (project / "README.md").write_text("y\n")
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "commit", "-q", "-am", "second"], check=True)
    notice = branch.head_notice(resolver, "b2", str(project), settings_now())
    assert notice is not None and "none now" in notice  # no live session in this checkout moved it


def test_a_checkout_without_git_or_with_a_broken_head_says_nothing(resolver: PathResolver, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert branch.head_notice(resolver, "b2", str(plain), settings_now()) is None
    broken = make_git_project(tmp_path / "broken")
    (broken / ".git" / "HEAD").write_bytes(b"\xff\x00 not a ref\n")
    session.start(resolver, "b2", "startup", {}, settings_now())
    branch.see_head(resolver, "b2", str(broken))
    (broken / ".git" / "HEAD").write_bytes(b"ref: refs/heads/../../../etc/passwd\n")
    notice = branch.head_notice(resolver, "b2", str(broken), settings_now())
    assert notice is not None and "\n" not in notice  # what HEAD says, on one line: nothing is read through it
    assert 'from a detached HEAD (no commit yet) to branch "../../../etc/passwd" (no commit yet)' in notice
