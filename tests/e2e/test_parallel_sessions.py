"""Two live Claude Code processes in one checkout: whose file it is, and whose branch moved (ADR 29).

Session A edits util.py and stays alive, its model still thinking (a held reply); session B,
started meanwhile, is refused the same file with a reason naming A, and edits another file
freely. Once A has exited, B edits util.py. Both run `claude -p` in `acceptEdits`, the mode
people use to let edits through: no one can be asked in `-p`, so the guard denies.
"""

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Optional

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, bash, held, text, tool_use

pytestmark = pytest.mark.e2e

EDITS = ["--permission-mode", "acceptEdits"]


def _sessions(root: Path) -> Path:
    return root / "acme" / "widget" / ".blackboard" / "sessions"


def _wait_for(what: str, check, process: "subprocess.Popen[str]", timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"{what}: session A exited first ({process.returncode}): {err[-2000:]}")
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.05)


def _edited(root: Path, name: str) -> Optional[str]:
    """The session whose presence says it edited ``name``."""
    for live in _sessions(root).glob("*/_live.jsonl"):
        for line in live.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == "edit" and record.get("path") == name:
                return live.parent.name
    return None


def _edit(project: Path, name: str, old: str, new: str):  # type: ignore[no-untyped-def]
    return tool_use("Edit", {"file_path": str(project / name), "old_string": old, "new_string": new})


def test_a_file_a_live_session_edited_is_refused_to_another_and_free_once_it_exits(
    run_claude: ClaudeRunner, project: Path, root: Path
) -> None:
    (project / "util.py").write_text("x = 1\n")
    (project / "other.py").write_text("y = 1\n")
    thinking = threading.Event()
    with ModelServer() as model_a, ModelServer() as model_b:
        model_a.add(_edit(project, "util.py", "x = 1", "x = 2"), held(thinking, text("A is done")))
        a = run_claude.start(["-p", "A: make util.py return 2", *EDITS], project, model_a)
        try:
            _wait_for("A's edit of util.py", lambda: _edited(root, "util.py") is not None, a)
            first = _edited(root, "util.py")
            assert first is not None
            model_b.add(
                _edit(project, "util.py", "x = 2", "x = 3"),
                _edit(project, "other.py", "y = 1", "y = 2"),
                text("B is done"),
            )
            b = run_claude(["-p", "B: tidy the helpers", *EDITS], project, model_b)
            assert b.returncode == 0, b.stderr
            refused, allowed = (result["text"] for result in model_b.tool_results()[:2])
            assert f"session {first[:8]}" in refused, refused
            assert "A: make util.py return 2" in refused  # its request, as data
            assert "util.py" in refused and "ago" in refused
            assert (project / "util.py").read_text() == "x = 2\n"  # A's work is untouched
            assert "blackboard" not in allowed and (project / "other.py").read_text() == "y = 2\n"
            assert a.poll() is None, "A was alive throughout"
        finally:
            thinking.set()
            a.communicate(timeout=120)
        assert a.returncode == 0

        model_b.add(_edit(project, "util.py", "x = 2", "x = 3"), text("B is done again"))
        again = run_claude(["-p", "B: now util.py", *EDITS], project, model_b)
        assert again.returncode == 0, again.stderr
        assert (project / "util.py").read_text() == "x = 3\n", model_b.tool_results()[-1]


def test_a_session_is_told_at_its_next_prompt_of_the_branch_another_session_switched(
    run_claude: ClaudeRunner, project: Path, root: Path
) -> None:
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    (project / "README.md").write_text("widget\n")
    subprocess.run([*git, "add", "README.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    thinking = threading.Event()
    with ModelServer() as model_a, ModelServer() as model_b:
        model_b.add(text("B looked around"))
        b = run_claude(["-p", "B: look around"], project, model_b)
        assert b.returncode == 0, b.stderr
        (b_id,) = [p.name for p in _sessions(root).iterdir()]

        # A runs git itself: the person's own settings allow that one command, in the default permission mode
        (project / ".claude").mkdir(exist_ok=True)
        allow = {"permissions": {"allow": ["Bash(git checkout:*)"]}}
        (project / ".claude" / "settings.local.json").write_text(json.dumps(allow))
        model_a.add(bash("git checkout -q -b feature"), held(thinking, text("A is done")))
        a = run_claude.start(["-p", "A: start the feature"], project, model_a)
        try:
            head = project / ".git" / "HEAD"
            _wait_for("A's branch switch", lambda: "feature" in head.read_text(), a)
            a_id = next(p.name for p in _sessions(root).iterdir() if p.name != b_id)
            model_b.add(text("B noticed"))
            resumed = run_claude(["-p", "B: go on", "--resume", b_id], project, model_b)
            assert resumed.returncode == 0, resumed.stderr
            told = model_b.main_requests[-1].all_text()
            assert "moved, and this session did not move it" in told, told[-3000:]
            assert 'branch "main"' in told and 'branch "feature"' in told
            assert f'it was moved by session {a_id[:8]}, whose latest request (data) is "A: start the feature"' in told
        finally:
            thinking.set()
            a.communicate(timeout=120)

        model_b.add(text("B again"))
        quiet = run_claude(["-p", "B: once more", "--resume", b_id], project, model_b)
        assert quiet.returncode == 0
        history = model_b.main_requests[-1].all_text()  # the whole conversation, the earlier notice in it
        assert history.count("moved, and this session did not move it") == 1  # told once
