"""Open work outlives its session: real hooks and real `blackboard` processes across several sessions."""

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Optional

import pytest

from blackboard.claude_tasks import MAX_TASKS
from helpers import REPO, end_payload, open_work_section, start_payload

LAUNCHER = str(REPO / "bin" / "blackboard")


@pytest.fixture
def bb(hook_venv: Path, project: Path):
    """``bb(session, *args)``: the `blackboard` command as an agent of that session runs it."""

    def run(session_id: str, *args: str, env: Optional[dict[str, str]] = None) -> str:
        full = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), BLACKBOARD_SESSION_ID=session_id, **(env or {}))
        result = subprocess.run([LAUNCHER, *args], env=full, cwd=project, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout

    return run


@pytest.fixture
def lifecycle(run_hook, project: Path):
    def start(session_id: str, source: str = "startup") -> str:
        result = run_hook("SessionStart", start_payload(session_id, project, source))
        assert result.returncode == 0 and result.stderr == b"", result.stderr
        return result.context

    def end(session_id: str, reason: str = "prompt_input_exit") -> None:
        assert run_hook("SessionEnd", end_payload(session_id, project, reason)).returncode == 0

    return start, end


def test_open_tasks_survive_an_idle_session(lifecycle, bb) -> None:
    start, end = lifecycle
    start("a")
    bb("a", "task", "add", "write the lexer")
    bb("a", "task", "add", "write the parser")
    bb("a", "task", "add", "write the docs")
    bb("a", "task", "done", "t3")
    end("a")
    start("b")  # does nothing at all
    end("b")

    told = start("c")

    assert "write the lexer" in open_work_section(told) and "write the parser" in open_work_section(told)
    assert "write the docs" not in open_work_section(told)  # done is done
    assert re.search(r"From session a\b", told)  # b did nothing: a's handoff is still the latest (issue 38, point 5)


def test_done_or_dropped_in_a_later_session_leaves_every_handoff(lifecycle, bb, root: Path) -> None:
    start, end = lifecycle
    start("a")
    bb("a", "task", "add", "write the lexer")
    bb("a", "task", "add", "write the parser")
    end("a")
    start("b")
    listed = json.loads(bb("b", "task", "list", "--json"))
    assert [item["key"] for item in listed["carried"]] == ["a/t1", "a/t2"]
    bb("b", "task", "done", "a/t1")
    bb("b", "task", "drop", "a/t2", "--reason", "the grammar is LL(1) now")
    end("b")

    told = start("c")

    assert open_work_section(told) == ""
    assert "— dropped: the grammar is LL(1) now" in told  # said where it was closed
    latest = (root / "acme" / "widget" / ".blackboard" / "handoff" / "latest-handoff.md").read_text()
    assert "\nopen_work: []\n" in latest


def test_parallel_sessions_carry_the_same_task_and_one_finishing_it_finishes_it_for_both(lifecycle, bb) -> None:
    start, end = lifecycle
    start("a")
    bb("a", "task", "add", "write the lexer")
    bb("a", "task", "add", "write the parser")
    end("a")
    start("b")
    start("c")  # b and c run side by side, both told of a's two tasks
    bb("b", "task", "done", "a/t1")
    bb("c", "task", "add", "write the tests")
    end("b")
    end("c")  # ends last: its own board still knows nothing of b's finishing

    told = start("d")

    assert "write the lexer" not in open_work_section(told)
    assert "write the parser" in open_work_section(told) and "write the tests" in open_work_section(told)


def test_parallel_sessions_ending_in_either_order_keep_each_others_new_tasks(lifecycle, bb) -> None:
    start, end = lifecycle
    start("a")
    start("b")
    bb("a", "task", "add", "only a knows this")
    bb("b", "task", "add", "only b knows this")
    end("b")
    end("a")

    told = start("c")

    assert "only a knows this" in open_work_section(told) and "only b knows this" in open_work_section(told)


def test_clear_carries_theopen_work_section(lifecycle, bb) -> None:
    start, end = lifecycle
    start("a")
    bb("a", "task", "add", "write the lexer")
    end("a", reason="clear")
    start("b", source="clear")
    end("b", reason="clear")

    told = start("c", source="clear")

    assert "write the lexer" in open_work_section(told)


def test_a_claim_on_carried_work_succeeds_once(lifecycle, bb, hook_venv: Path, project: Path) -> None:
    start, end = lifecycle
    start("a")
    bb("a", "task", "add", "write the lexer")
    end("a")
    start("b")
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), BLACKBOARD_SESSION_ID="b")
    procs = [
        subprocess.Popen(
            [LAUNCHER, "--author", f"w{i}", "task", "claim", "a/t1"],
            env=env,
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    codes = [proc.wait(timeout=120) for proc in procs]
    for proc in procs:
        proc.communicate()
    assert sorted(codes) == [0, 1, 1, 1, 1, 1]
    tasks = json.loads(bb("b", "task", "list", "--json"))
    assert [t["origin"] for t in tasks["tasks"]] == ["a/t1"]
    assert tasks["carried"] == []


def _claude_task(home: Path, session_id: str, number: int, subject: str, config: str = ".claude") -> None:
    folder = home / config / "tasks" / session_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{number}.json").write_text(json.dumps({"id": str(number), "subject": subject, "status": "pending"}))


def _ledger(root: Path) -> dict:
    from blackboard.handoff import split_front_matter

    latest = (root / "acme" / "widget" / ".blackboard" / "handoff" / "latest-handoff.md").read_text()
    return split_front_matter(latest)[0]


def _open_keys(root: Path) -> list:
    return [item["key"] for item in _ledger(root)["open_work"]]


def test_a_session_closes_only_the_claude_code_tasks_it_read_as_closed(
    run_hook, project: Path, root: Path, isolated_home: Path
) -> None:
    """Issue 32, point 11: a run with the digest off, a list past the files read, a recovery from another folder."""
    _claude_task(isolated_home, "a", 1, "handle quotes")
    assert run_hook("SessionStart", start_payload("a", project)).returncode == 0
    assert run_hook("SessionEnd", end_payload("a", project)).returncode == 0
    assert _open_keys(root) == ["a/cc1"]

    off = {"BLACKBOARD_DIGEST": "0"}  # the list is not read: nothing of it is closed
    assert run_hook("SessionStart", start_payload("a", project, "resume"), env=off).returncode == 0
    assert run_hook("SessionEnd", end_payload("a", project), env=off).returncode == 0
    assert _open_keys(root) == ["a/cc1"]

    for number in range(2, MAX_TASKS + 3):  # past the files read: the oldest, cc1, is not read, nor closed either
        _claude_task(isolated_home, "a", number, f"step {number}")
    assert run_hook("SessionStart", start_payload("a", project, "resume")).returncode == 0
    assert run_hook("SessionEnd", end_payload("a", project)).returncode == 0
    assert "a/cc1" not in _ledger(root)["closed_work"]


def test_a_recovery_from_another_claude_config_folder_keeps_the_dead_sessions_open_tasks(
    run_hook, project: Path, root: Path, isolated_home: Path
) -> None:
    own = {"CLAUDE_CONFIG_DIR": str(isolated_home / "config-a"), "CLAUDE_PID": "999999"}
    _claude_task(isolated_home, "a", 1, "handle quotes", config="config-a")
    assert run_hook("SessionStart", start_payload("a", project), env=own).returncode == 0
    stop = {"session_id": "a", "cwd": str(project), "hook_event_name": "Stop", "last_assistant_message": "half"}
    assert run_hook("Stop", stop, env=own).returncode == 0  # its draft names a/cc1; then it is killed
    other = {"CLAUDE_CONFIG_DIR": str(isolated_home / "config-b")}
    assert run_hook("SessionStart", start_payload("b", project), env=other).returncode == 0  # recovers a
    assert _open_keys(root) == ["a/cc1"]


def test_past_a_hundred_open_items_none_is_lost_and_the_oldest_are_the_ones_hidden(
    lifecycle, bb, resolver, root: Path
) -> None:
    """Issue 32, point 9: with 150 tasks the newest 50 were cut yet called older, could not be closed by key, and
    every task a later session added pushed one more carried item out, silently."""
    from blackboard.board import Board

    start, end = lifecycle
    start("a")
    tasks = Board(resolver, "a")  # what 150 `task add` commands write
    for n in range(1, 151):
        tasks.add_task(f"task number {n}", "main")
    end("a")

    told = start("b")

    section = open_work_section(told)
    assert "50 older open items not shown here" in section
    assert "task number 150 " in section and "task number 51 " in section and "task number 50 " not in section
    assert len(told) <= 8000  # BLACKBOARD_CONTEXT_CHARS' default
    listed = json.loads(bb("b", "task", "list", "--json"))["carried"]
    assert [item["key"] for item in listed] == [f"a/t{n}" for n in range(1, 151)]  # every one, oldest first
    bb("b", "task", "done", "a/t1")  # one of the hidden ones, closed by its key
    for text in ("new x", "new y", "new z"):
        bb("b", "task", "add", text)
    end("b")

    told = start("c")

    fields = _ledger(root)
    keys = [item["key"] for item in fields["open_work"]]
    assert keys == ["b/t4", "b/t3", "b/t2"] + [f"a/t{n}" for n in range(150, 1, -1)]  # newest first, none pushed out
    assert fields["open_tasks"] == 152 and "open_work_cut" not in fields
    assert "52 older open items not shown here" in open_work_section(told)
    assert '"task number 1"' not in json.dumps(fields["open_work"])  # closed


def _body(root: Path) -> str:
    return (root / "acme" / "widget" / ".blackboard" / "handoff" / "latest-handoff.md").read_text()


@pytest.mark.parametrize("count", [250, 1000])
def test_every_claude_code_task_is_carried_and_counted(
    lifecycle, bb, root: Path, isolated_home: Path, count: int
) -> None:
    """Issue 39, point 7: with 250 tasks the handoff said 200, with 1 000 800 were gone, and the handoff said
    `task list` listed every one."""
    start, end = lifecycle
    start("a")
    for number in range(1, count + 1):
        _claude_task(isolated_home, "a", number, f"step {number}")
    end("a")

    fields = _ledger(root)
    assert fields["open_tasks"] == count and "open_work_unread" not in fields and "claude_tasks_unread" not in fields
    assert _open_keys(root) == [f"a/cc{n}" for n in range(count, 0, -1)]
    older = count - 100
    told = start("b")
    assert f"{older} older open items not shown here, the newest 100 follow" in open_work_section(told)
    listed = json.loads(bb("b", "task", "list", "--json"))
    assert [item["key"] for item in listed["carried"]] == [f"a/cc{n}" for n in range(1, count + 1)]
    bb("b", "task", "done", "a/cc1")  # the oldest, hidden from the handoff, closed by its key
    end("b")
    assert _ledger(root)["open_tasks"] == count - 1


def test_claude_code_task_files_past_the_bound_are_counted_in_every_later_handoff(
    lifecycle, root: Path, isolated_home: Path
) -> None:
    start, end = lifecycle
    start("a")
    for number in range(1, MAX_TASKS + 31):
        _claude_task(isolated_home, "a", number, f"step {number}")
    end("a")

    fields = _ledger(root)
    assert fields["open_tasks"] == MAX_TASKS and fields["claude_tasks_unread"] == ["a:30"]
    assert "30 task files of Claude Code's task list in session a left unread" in _body(root)
    told = start("b")  # an idle session: its handoff carries the count on
    assert "30 task files of Claude Code's task list in session a left unread" in open_work_section(told)
    end("b")
    assert _ledger(root)["claude_tasks_unread"] == ["a:30"]
    assert "30 task files of Claude Code's task list in session a left unread" in _body(root)
