"""Nothing is read or written through a symbolic link inside the root (docs/architecture.md, its rules)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from helpers import REPO, end_payload, start_payload

LAUNCHER = str(REPO / "bin" / "blackboard")


def _board(root: Path) -> Path:
    return root / "acme" / "widget" / ".blackboard"


def _untouched(outside: Path) -> bool:
    return sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    return folder


@pytest.mark.parametrize("linked", ["sessions/s1", "handoff", "_active"])
def test_a_linked_folder_is_never_written_through(
    run_hook, project: Path, root: Path, outside: Path, linked: str
) -> None:
    target = _board(root) / linked
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside)

    started = run_hook("SessionStart", start_payload("s1", project))
    ended = run_hook("SessionEnd", end_payload("s1", project))

    assert started.returncode == 0
    assert ended.returncode == 0
    assert _untouched(outside)


def test_a_linked_board_file_is_never_appended_to(
    run_hook, project: Path, root: Path, outside: Path, hook_venv: Path
) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    notes = _board(root) / "sessions" / "s1" / "session-notes.md"
    notes.unlink()  # created with the session (ADR 25); replaced by a link
    notes.symlink_to(outside / "keep.txt")
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), BLACKBOARD_SESSION_ID="s1")

    note = subprocess.run([LAUNCHER, "note", "hello"], cwd=project, env=env, capture_output=True, text=True)

    assert note.returncode == 1
    assert note.stderr.count("\n") == 1
    assert (outside / "keep.txt").read_text() == "mine"


def test_a_linked_latest_handoff_is_never_injected(run_hook, project: Path, root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "private.md"
    secret.write_text('---\nsession_id: "x"\n---\nthe content of some other file\n')
    (_board(root) / "handoff").mkdir(parents=True)
    (_board(root) / "handoff" / "latest-handoff.md").symlink_to(secret)

    started = run_hook("SessionStart", start_payload("s1", project))

    assert started.returncode == 0
    assert "the content of some other file" not in started.context


def test_a_linked_legacy_folder_is_never_migrated_into(run_hook, project: Path, root: Path, outside: Path) -> None:
    board = _board(root)
    board.mkdir(parents=True)
    (board / "session-notes.md").write_text("old notes\n")
    (board / "_legacy").symlink_to(outside)

    started = run_hook("SessionStart", start_payload("s1", project))

    assert started.returncode == 0
    assert _untouched(outside)
    assert (board / "session-notes.md").read_text() == "old notes\n"  # left where it was


def test_a_linked_log_folder_is_never_logged_into(run_hook, root: Path, tmp_path: Path, outside: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "logs").symlink_to(outside)

    run_hook("SessionStart", start_payload("../refused", tmp_path))  # a failure to log

    assert _untouched(outside)
    assert (root / "logs" / "hooks.log").is_file()


def test_doctor_names_every_link(run_hook, project: Path, root: Path, outside: Path, hook_venv: Path) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    (_board(root) / "sessions" / "s1" / "extra").symlink_to(outside)
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv))

    doctor = subprocess.run([LAUNCHER, "doctor", "--json"], cwd=project, env=env, capture_output=True, text=True)

    problems = [f["problem"] for f in json.loads(doctor.stdout)["findings"]]
    assert any("extra is a symbolic link" in p for p in problems), problems


@pytest.mark.parametrize("marker", ["_active", "_unpublished"])
def test_a_session_linked_away_is_neither_recovered_nor_published_through_the_link(
    run_hook, project: Path, root: Path, outside: Path, marker: str
) -> None:
    """A stuck session (an active marker) or an unfinished end (an unpublished one) whose folder is a link."""
    run_hook("SessionStart", start_payload("s1", project))
    meta = json.loads((_board(root) / "sessions" / "s1" / "_meta.json").read_text())
    meta.update(session_id="s9", claude_pid=2**22 + 7, last_activity="2020-01-01T00:00:00Z")
    meta.update(status="ended" if marker == "_unpublished" else "active", ended="2020-01-01T00:00:00Z")
    (outside / "_meta.json").write_text(json.dumps(meta))
    (_board(root) / "sessions" / "s9").symlink_to(outside)
    (_board(root) / marker).mkdir(exist_ok=True)
    (_board(root) / marker / "s9").write_text("")
    before = sorted(p.name for p in outside.iterdir()), (outside / "_meta.json").read_text()

    started = run_hook("SessionStart", start_payload("s2", project))

    assert started.returncode == 0
    assert (sorted(p.name for p in outside.iterdir()), (outside / "_meta.json").read_text()) == before
    assert not (_board(root) / "handoff" / "handoff-s9.md").exists()
