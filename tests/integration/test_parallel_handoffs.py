"""Handoffs stay true with parallel sessions (issue 38, point 5; docs/adr/0034-handoffs-with-parallel-sessions.md).

Real hooks as processes, each live session with a stand-in Claude Code process of its own
(one process runs one conversation), in a real git checkout.
"""

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from blackboard.handoff import split_front_matter
from helpers import REPO, end_payload, start_payload

LAUNCHER = str(REPO / "bin" / "blackboard")
PATIENT = {"BLACKBOARD_END_GIT_TIMEOUT": "1"}  # a loaded machine may not start git within 0.2 s
IDENTITY = {
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.invalid",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.invalid",
}


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], env={**os.environ, **IDENTITY}, check=True, capture_output=True)


class Session:
    """One Claude Code session of the project, driven through the plugin's hooks as processes."""

    def __init__(self, run_hook, project: Path, session_id: str, pid: int) -> None:  # type: ignore[no-untyped-def]
        self.run_hook, self.project, self.id = run_hook, project, session_id
        self.env = {"CLAUDE_PID": str(pid), **PATIENT}

    def hook(self, event: str, payload: dict) -> None:
        full = {"session_id": self.id, "cwd": str(self.project), "hook_event_name": event, **payload}
        result = self.run_hook(event, full, env=self.env)
        assert result.returncode == 0 and result.stderr == b"", result.stderr

    def start(self) -> "Session":
        result = self.run_hook("SessionStart", start_payload(self.id, self.project), env=self.env)
        assert result.returncode == 0 and result.stderr == b"", result.stderr
        return self

    def ask(self, prompt: str, answer: str = "done") -> None:
        self.hook("UserPromptSubmit", {"prompt": prompt})
        self.hook("Stop", {"last_assistant_message": answer, "stop_hook_active": False})

    def edit(self, name: str, text: str = "x = 2\n") -> None:
        (self.project / name).write_text(text)
        tool_input = {"file_path": str(self.project / name), "content": text}
        self.hook("PostToolUse", {"tool_name": "Write", "tool_input": tool_input, "tool_use_id": "toolu_01"})

    def shell(self, command: str) -> None:
        subprocess.run(command, shell=True, cwd=self.project, env={**os.environ, **IDENTITY}, check=True)
        tool_input = {"command": command}
        self.hook("PostToolUse", {"tool_name": "Bash", "tool_input": tool_input, "tool_use_id": "toolu_02"})

    def bb(self, *args: str) -> None:
        env = dict(os.environ, BLACKBOARD_SESSION_ID=self.id, **self.env)
        result = subprocess.run([LAUNCHER, *args], env=env, cwd=self.project, capture_output=True, timeout=60)
        assert result.returncode == 0, result.stderr

    def end(self) -> None:
        result = self.run_hook("SessionEnd", end_payload(self.id, self.project), env=self.env)
        assert result.returncode == 0 and result.stderr == b"", result.stderr


@pytest.fixture
def session(run_hook, project: Path, claudes: Callable[[], subprocess.Popen], hook_venv: Path):  # type: ignore[no-untyped-def]
    os.environ["BLACKBOARD_VENV"] = str(hook_venv)  # the `blackboard` launcher's; isolated_home undoes BLACKBOARD_*

    def make(session_id: str) -> Session:
        return Session(run_hook, project, session_id, claudes().pid).start()

    return make


@pytest.fixture
def a_at_work(session, project: Path) -> Session:  # type: ignore[no-untyped-def]
    """p1 did some work and ended; a1 is live and has edited util.py, uncommitted."""
    (project / "util.py").write_text("x = 1\n")
    (project / "README.md").write_text("widget\n")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "first")
    earlier = session("p1")
    earlier.ask("write the README")
    earlier.edit("README.md", "widget, documented\n")
    earlier.bb("task", "add", "write the changelog")
    git(project, "commit", "-q", "-am", "document")
    earlier.end()
    a = session("a1")
    a.ask("make util.py return 2")
    a.edit("util.py")
    return a


def handoff(root: Path, name: str) -> tuple[dict, str]:
    text = (root / "acme" / "widget" / ".blackboard" / "handoff" / name).read_text()
    return split_front_matter(text)


def test_a_session_that_did_nothing_leaves_the_latest_handoff_as_it_was(
    session, a_at_work: Session, root: Path
) -> None:
    before = handoff(root, "latest-handoff.md")
    who = session("c3")
    who.ask("/blackboard:who", "one other live session: a1, editing util.py")
    who.shell("true")  # what the slash command runs changes nothing
    a_at_work.shell("git commit -q --allow-empty -m 'checkpoint'")  # a commit while it ran: a1's, not its own
    who.end()

    fields, _ = handoff(root, "latest-handoff.md")
    assert fields["session_id"] == "p1"
    assert handoff(root, "latest-handoff.md") == before  # not even rewritten
    assert [item["key"] for item in fields["open_work"]] == ["p1/t1"]  # the open work it carries, whole
    own, body = handoff(root, "handoff-c3.md")  # its own handoff is still written
    assert own["nothing_done"] is True and own["status"] == "ended"
    assert "/blackboard:who" in body


def _claude_code_task(s: "Session", home: Path) -> None:
    folder = home / ".claude" / "tasks" / s.id
    folder.mkdir(parents=True)
    (folder / "1.json").write_text(json.dumps({"id": "1", "subject": "ship it", "status": "pending"}))


def _close_carried(s: "Session", home: Path) -> None:
    s.bb("task", "done", "p1/t1")


@pytest.mark.parametrize(
    "work",
    [
        pytest.param(lambda s, home: s.edit("notes.txt", "a new file\n"), id="an-edit"),
        pytest.param(lambda s, home: s.bb("note", "the parser is LL(1)"), id="a-note"),
        pytest.param(lambda s, home: s.bb("task", "add", "write the lexer"), id="a-task"),
        pytest.param(lambda s, home: s.bb("post", "api", "v2"), id="a-post"),
        pytest.param(_close_carried, id="closing-carried-work"),
        pytest.param(lambda s, home: s.shell("git commit -q --allow-empty -m 'release 1.0'"), id="a-commit"),
        pytest.param(_claude_code_task, id="a-claude-code-task"),
    ],
)
def test_a_session_that_did_something_replaces_it_and_the_quiet_ones_stay_out_of_its_chain(
    session, a_at_work: Session, root: Path, isolated_home: Path, work: Callable[[Session, Path], None]
) -> None:
    quiet = session("c3")
    quiet.ask("what does util.py do?", "it returns 1")
    quiet.end()
    busy = session("d4")
    busy.ask("do something")
    work(busy, isolated_home)
    busy.end()

    fields, _ = handoff(root, "latest-handoff.md")
    assert fields["session_id"] == "d4" and "nothing_done" not in fields
    assert fields["previous_sessions"] == ["p1"]  # the chain names sessions that did something
    closed = "p1/t1" in fields["closed_work"]
    assert closed == (work is _close_carried)  # the carried task stays open until a session closes it
    assert ("p1/t1" in [item["key"] for item in fields["open_work"]]) != closed


def test_a_handoff_says_whose_uncommitted_files_are_whose(session, a_at_work: Session, root: Path) -> None:
    b = session("b2")
    b.ask("add a parser")
    b.edit("parser.py", "def parse(): ...\n")
    (a_at_work.project / "scratch.txt").write_text("no session wrote this\n")
    b.end()

    fields, body = handoff(root, "handoff-b2.md")
    changed = fields["changed"]
    assert changed["uncommitted"] == 2  # its parser.py, and scratch.txt that no live session claims
    assert changed["uncommitted_others"] == [{"session": "a1", "files": 1, "paths": ["util.py"]}]
    assert "- 2 files left uncommitted by this session (git status); 1 more is live session a1's (`util.py`)" in body
    latest, _ = handoff(root, "latest-handoff.md")
    assert latest["session_id"] == "b2"


def test_once_the_other_session_ended_its_files_count_as_left_uncommitted(
    session, a_at_work: Session, root: Path
) -> None:
    a_at_work.end()
    b = session("b2")
    b.ask("look around")
    b.edit("parser.py", "def parse(): ...\n")
    b.end()

    fields, body = handoff(root, "handoff-b2.md")
    assert fields["changed"]["uncommitted"] == 2 and "uncommitted_others" not in fields["changed"]
    assert "- 2 files left uncommitted (git status)" in body


def test_an_abandoned_session_that_did_nothing_leaves_the_latest_as_it_was(
    run_hook, project: Path, session, a_at_work: Session, root: Path
) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    quiet = Session(run_hook, project, "c3", gone.pid).start()  # its Claude Code process is already gone
    quiet.ask("what does util.py do?", "it returns 1")
    session("e5")  # its start finds c3 abandoned and hands it off

    own, _ = handoff(root, "handoff-c3.md")
    assert own["status"] == "abandoned" and own["nothing_done"] is True
    fields, _ = handoff(root, "latest-handoff.md")
    assert fields["session_id"] == "p1"
