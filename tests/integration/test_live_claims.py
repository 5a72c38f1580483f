"""Claims across the project's live sessions, with real command processes (docs/adr/0029-live-sessions.md).

Every live session's open tasks are visible to the others by key (``{session8}/tN``); one
claim wins across live sessions, whether the task is on a live board or carried from an
ended one; a claim whose session ended or died is free again; ``task list`` says who holds
what since when.
"""

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from blackboard import entries, session
from blackboard.paths import PathResolver
from helpers import REPO, settings_now

LAUNCHER = str(REPO / "bin" / "blackboard")
AT_ONCE = (
    "import os, sys, time; time.sleep(max(0.0, float(sys.argv[1]) - time.time())); os.execv(sys.argv[2], sys.argv[2:])"
)


@pytest.fixture
def claude() -> Iterator[subprocess.Popen]:
    """Stands in for the Claude Code processes of the live sessions."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def env(hook_venv: Path) -> dict:
    return dict(os.environ, BLACKBOARD_VENV=str(hook_venv))


def _start(resolver: PathResolver, session_id: str, pid: int) -> None:
    payload = {"cwd": resolver.project.toplevel}
    session.start(resolver, session_id, "startup", payload, settings_now(CLAUDE_PID=str(pid)))


def _run(env: dict, project: Path, session_id: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LAUNCHER, "--session", session_id, *args], env=env, cwd=project, capture_output=True, text=True, timeout=60
    )


def _at_once(env: dict, project: Path, commands: list[tuple[str, list[str]]]) -> list[subprocess.CompletedProcess]:
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AT_ONCE, str(start), LAUNCHER, "--session", session_id, *args],
            env=env,
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for session_id, args in commands
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


@pytest.fixture
def three(resolver: PathResolver, claude: subprocess.Popen) -> PathResolver:
    """Live sessions aaaa1111, bbbb2222 and cccc3333; aaaa1111 has a task t1, 'write the parser'."""
    for session_id in ("aaaa1111", "bbbb2222", "cccc3333"):
        _start(resolver, session_id, claude.pid)
    board = resolver.board_file("aaaa1111", "tasks")
    entries.append(
        board, "t", {"status": "open", "author": "main"}, "write the parser", entries.initial_text("tasks", "aaaa1111")
    )
    return resolver


def test_a_live_sessions_open_task_is_listed_for_the_others_by_key(
    three: PathResolver, env: dict, project: Path
) -> None:
    listed = _run(env, project, "bbbb2222", "task", "list")
    assert listed.returncode == 0, listed.stderr
    assert "aaaa1111/t1 open     write the parser (on live session aaaa1111)" in listed.stdout
    data = json.loads(_run(env, project, "bbbb2222", "task", "list", "--json").stdout)
    assert [(t["key"], t["session_id"], t["text"]) for t in data["live"]] == [
        ("aaaa1111/t1", "aaaa1111", "write the parser")
    ]


def test_one_claim_wins_across_live_sessions_and_the_list_says_who_since_when(
    three: PathResolver, env: dict, project: Path
) -> None:
    commands = [
        (sid, ["--author", f"{sid[:4]}-{i}", "task", "claim", "aaaa1111/t1"])
        for sid in ("bbbb2222", "cccc3333")
        for i in range(4)
    ]
    commands += [("aaaa1111", ["--author", f"own-{i}", "task", "claim", "t1"]) for i in range(4)]
    results = _at_once(env, project, commands)
    winners = [r for r in results if r.returncode == 0]
    assert len(winners) == 1, [r.stderr for r in results]
    losers = [r for r in results if r.returncode != 0]
    assert all(
        r.returncode == 1 and "already claimed by" in r.stderr and len(r.stderr.splitlines()) == 1 for r in losers
    )
    winner = winners[0].args[winners[0].args.index("--author") + 1]
    (task,), _ = entries.parse(Path(three.board_file("aaaa1111", "tasks")).read_text())
    assert task.fields["claimed_by"] == winner
    held_in = task.fields["claimed_in"]
    listed = _run(env, project, "aaaa1111", "task", "list").stdout
    assert f"claimed  write the parser [{winner}" in listed and f"since {task.fields['claimed_at']}]" in listed
    if held_in != "aaaa1111":
        assert f"in session {held_in[:8]}" in listed


def test_a_claim_whose_session_died_is_free_again(
    three: PathResolver, env: dict, project: Path, tmp_path: Path
) -> None:
    mortal = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    _start(three, "dddd4444", mortal.pid)
    first = _run(env, project, "dddd4444", "--author", "doomed", "task", "claim", "aaaa1111/t1")
    assert first.returncode == 0, first.stderr
    refused = _run(env, project, "bbbb2222", "--author", "late", "task", "claim", "aaaa1111/t1")
    assert refused.returncode == 1 and "already claimed by doomed in session dddd4444" in refused.stderr
    mortal.kill()
    mortal.wait()
    taken = _run(env, project, "bbbb2222", "--author", "late", "task", "claim", "aaaa1111/t1")
    assert taken.returncode == 0, taken.stderr
    (task,), _ = entries.parse(Path(three.board_file("aaaa1111", "tasks")).read_text())
    assert (task.fields["claimed_by"], task.fields["claimed_in"]) == ("late", "bbbb2222")


def test_a_claim_whose_session_ended_is_free_again(three: PathResolver, env: dict, project: Path) -> None:
    assert _run(env, project, "cccc3333", "--author", "c", "task", "claim", "aaaa1111/t1").returncode == 0
    session.end(three, "cccc3333", "other", settings_now(BLACKBOARD_DIGEST="0"))
    taken = _run(env, project, "bbbb2222", "--author", "b", "task", "claim", "aaaa1111/t1")
    assert taken.returncode == 0, taken.stderr


def test_another_session_can_finish_or_drop_a_live_sessions_task(three: PathResolver, env: dict, project: Path) -> None:
    entries.append(three.board_file("aaaa1111", "tasks"), "t", {"status": "open", "author": "main"}, "second")
    assert _run(env, project, "bbbb2222", "task", "done", "aaaa1111/t1").returncode == 0
    assert _run(env, project, "cccc3333", "task", "drop", "aaaa1111/t2", "--reason", "not needed").returncode == 0
    tasks, _ = entries.parse(Path(three.board_file("aaaa1111", "tasks")).read_text())
    assert [t.fields["status"] for t in tasks] == ["done", "dropped"]
    assert "(no tasks)" in _run(env, project, "bbbb2222", "task", "list").stdout


def test_carried_work_claimed_by_two_live_sessions_at_once_has_one_holder(
    resolver: PathResolver, claude: subprocess.Popen, env: dict, project: Path
) -> None:
    """ADR 22 left this open: two sessions taking up one carried task were both told they held it."""
    quiet = settings_now(BLACKBOARD_DIGEST="0")
    session.start(resolver, "eeee5555", "startup", {}, quiet)
    entries.append(resolver.board_file("eeee5555", "tasks"), "t", {"status": "open", "author": "main"}, "carried work")
    session.end(resolver, "eeee5555", "other", quiet)
    for session_id in ("bbbb2222", "cccc3333"):
        _start(resolver, session_id, claude.pid)

    commands = [
        (sid, ["--author", f"{sid[:4]}-{i}", "task", "claim", "eeee5555/t1"])
        for sid in ("bbbb2222", "cccc3333")
        for i in range(5)
    ]
    results = _at_once(env, project, commands)

    winners = [r for r in results if r.returncode == 0]
    assert len(winners) == 1, [r.stderr for r in results]
    assert all("already claimed by" in r.stderr for r in results if r.returncode)
    holder = winners[0].args[winners[0].args.index("--session") + 1]
    other = "cccc3333" if holder == "bbbb2222" else "bbbb2222"
    boards = {sid: entries.parse(Path(resolver.board_file(sid, "tasks")).read_text())[0] for sid in (holder, other)}
    assert [t.fields.get("status") for t in boards[holder]] == ["claimed"]
    assert boards[other] == []  # never taken up where the claim was refused
    listed = _run(env, project, other, "task", "list").stdout
    assert "eeee5555/t1 claimed" in listed and f"in session {holder[:8]}" in listed


def test_who_names_each_live_session_with_its_request_files_and_claims(
    three: PathResolver, env: dict, project: Path
) -> None:
    from blackboard import live

    (project / "src").mkdir()
    live.record_request(three.live_path("aaaa1111"), "write the parser for the config format")
    live.record_edit(three.live_path("aaaa1111"), str(project), "src/parser.py")
    assert _run(env, project, "aaaa1111", "--author", "main", "task", "claim", "t1").returncode == 0
    shown = _run(env, project, "bbbb2222", "who")
    assert shown.returncode == 0, shown.stderr
    assert '- aaaa1111: this checkout, branch "main"' in shown.stdout
    assert 'asks: "write the parser for the config format"' in shown.stdout
    assert 'edited: "src/parser.py" (' in shown.stdout
    assert 'claims: aaaa1111/t1 "write the parser" (since ' in shown.stdout
    assert "- cccc3333: this checkout" in shown.stdout
    assert "bbbb2222" not in shown.stdout  # not the one asking
    data = json.loads(_run(env, project, "bbbb2222", "who", "--json").stdout)
    assert [s["session_id"] for s in data["sessions"]] == ["cccc3333", "aaaa1111"]  # newest start first


def _task(resolver: PathResolver, session_id: str, number: int = 0) -> entries.Entry:
    return entries.parse(Path(resolver.board_file(session_id, "tasks")).read_text())[0][number]


def _refused(result: subprocess.CompletedProcess, holder: str, since: str) -> None:
    """Exit 1 with one line naming the holder's session (short id), since when, and the way past it."""
    assert result.returncode == 1, result.stdout
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"in live session {holder[:8]} since {since}" in result.stderr and "--force" in result.stderr


@pytest.mark.parametrize("holder", ["aaaa1111", "cccc3333"], ids=["held-by-its-board", "held-by-a-third-session"])
def test_a_live_sessions_claimed_task_is_closed_by_its_claimant_only(
    three: PathResolver, env: dict, project: Path, holder: str
) -> None:
    """Issue 39, point 6: another session finished or dropped a claimed task with no word."""
    entries.append(three.board_file("aaaa1111", "tasks"), "t", {"status": "open", "author": "main"}, "second")
    for number in ("t1", "t2"):
        claimed = _run(env, project, holder, "--author", "parser-dev", "task", "claim", f"aaaa1111/{number}")
        assert claimed.returncode == 0, claimed.stderr
    since = _task(three, "aaaa1111").fields["claimed_at"]

    _refused(_run(env, project, "bbbb2222", "task", "done", "aaaa1111/t1"), holder, since)
    _refused(_run(env, project, "bbbb2222", "task", "drop", "aaaa1111/t1", "--reason", "mine now"), holder, since)
    if holder != "aaaa1111":  # the board's own session is not the claimant either
        _refused(_run(env, project, "aaaa1111", "task", "done", "t1"), holder, since)
    assert _task(three, "aaaa1111").fields["status"] == "claimed"  # nothing changed

    done = _run(env, project, holder, "--author", "parser-dev", "task", "done", "aaaa1111/t1")
    assert done.returncode == 0, done.stderr
    dropped = _run(env, project, holder, "task", "drop", "aaaa1111/t2", "--reason", "not needed")
    assert dropped.returncode == 0, dropped.stderr
    assert [t.fields["status"] for t in entries.parse(Path(three.board_file("aaaa1111", "tasks")).read_text())[0]] == [
        "done",
        "dropped",
    ]


def test_force_closes_a_claimed_task_and_names_and_records_the_holder(
    three: PathResolver, env: dict, project: Path
) -> None:
    entries.append(three.board_file("aaaa1111", "tasks"), "t", {"status": "open", "author": "main"}, "second")
    for number in ("t1", "t2"):
        assert _run(env, project, "cccc3333", "--author", "dev", "task", "claim", f"aaaa1111/{number}").returncode == 0
    since = _task(three, "aaaa1111").fields["claimed_at"]
    holder = f"dev in live session cccc3333 since {since}"

    done = _run(env, project, "bbbb2222", "task", "done", "aaaa1111/t1", "--force")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"done aaaa1111/t1 (forced: claimed by {holder}): write the parser")
    dropped = _run(env, project, "bbbb2222", "task", "drop", "aaaa1111/t2", "--reason", "obsolete", "--force", "--json")
    assert dropped.returncode == 0, dropped.stderr
    assert json.loads(dropped.stdout)["overrode_claim"] == holder.replace(
        since, _task(three, "aaaa1111", 1).fields["claimed_at"]
    )
    first, second = entries.parse(Path(three.board_file("aaaa1111", "tasks")).read_text())[0]
    assert (first.fields["status"], first.fields["overrode_claim"]) == ("done", holder)
    assert second.fields["status"] == "dropped" and "cccc3333" in second.fields["overrode_claim"]
    listed = _run(env, project, "aaaa1111", "task", "list", "--all").stdout
    assert f"(forced: claimed by {holder})" in listed


def test_a_claim_whose_session_died_does_not_stop_another_closing_it(
    three: PathResolver, env: dict, project: Path
) -> None:
    mortal = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    _start(three, "dddd4444", mortal.pid)
    assert _run(env, project, "dddd4444", "task", "claim", "aaaa1111/t1").returncode == 0
    assert _run(env, project, "bbbb2222", "task", "done", "aaaa1111/t1").returncode == 1
    mortal.kill()
    mortal.wait()
    done = _run(env, project, "bbbb2222", "task", "done", "aaaa1111/t1")
    assert done.returncode == 0, done.stderr
    assert "forced" not in done.stdout and "overrode_claim" not in _task(three, "aaaa1111").fields


def _ended_with_a_task(resolver: PathResolver) -> None:
    quiet = settings_now(BLACKBOARD_DIGEST="0")
    session.start(resolver, "eeee5555", "startup", {}, quiet)
    entries.append(resolver.board_file("eeee5555", "tasks"), "t", {"status": "open", "author": "main"}, "carried work")
    session.end(resolver, "eeee5555", "other", quiet)


def test_carried_work_claimed_by_a_live_session_is_closed_by_it_only(
    three: PathResolver, env: dict, project: Path
) -> None:
    _ended_with_a_task(three)
    claimed = _run(env, project, "cccc3333", "--author", "dev", "task", "claim", "eeee5555/t1")
    assert claimed.returncode == 0, claimed.stderr
    since = _task(three, "cccc3333").fields["claimed_at"]
    _refused(_run(env, project, "bbbb2222", "task", "done", "eeee5555/t1"), "cccc3333", since)
    assert entries.parse(Path(three.board_file("bbbb2222", "tasks")).read_text())[0] == []  # not taken up
    done = _run(env, project, "cccc3333", "task", "done", "eeee5555/t1")
    assert done.returncode == 0 and done.stdout.startswith("done t1 (carried: eeee5555/t1): carried work")


def test_a_recorded_claim_of_carried_work_stops_another_closing_it_before_anything_is_taken_up(
    three: PathResolver, env: dict, project: Path
) -> None:
    """A claimant killed between recording its claim and taking the task onto its board still holds it."""
    from blackboard import claims

    _ended_with_a_task(three)
    claims.hold(three, "eeee5555/t1", "cccc3333", "dev", lambda _: True)
    since = claims.holder(three, "eeee5555/t1").at
    _refused(_run(env, project, "bbbb2222", "task", "drop", "eeee5555/t1", "--reason", "x"), "cccc3333", since)
    assert entries.parse(Path(three.board_file("bbbb2222", "tasks")).read_text())[0] == []  # nothing taken up
    forced = _run(env, project, "bbbb2222", "task", "drop", "eeee5555/t1", "--reason", "x", "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"(forced: claimed by dev in live session cccc3333 since {since})" in forced.stdout
    assert claims.holder(three, "eeee5555/t1") is None  # dropped: no one's to claim


def test_a_claim_answers_with_the_key_of_a_task_on_another_board(three: PathResolver, env: dict, project: Path) -> None:
    """Issue 37, point 14: a claim of another session's task answered `claimed t1`, which reads as one's own t1."""
    _ended_with_a_task(three)
    entries.append(three.board_file("bbbb2222", "tasks"), "t", {"status": "open", "author": "main"}, "own work")
    other = _run(env, project, "bbbb2222", "task", "claim", "aaaa1111/t1")
    assert other.stdout == "claimed aaaa1111/t1: write the parser\n", other.stderr
    assert json.loads(_run(env, project, "bbbb2222", "task", "done", "aaaa1111/t1", "--json").stdout)["key"] == (
        "aaaa1111/t1"
    )
    own = _run(env, project, "bbbb2222", "task", "claim", "t1")
    assert own.stdout == "claimed t1: own work\n", own.stderr
    carried = _run(env, project, "bbbb2222", "task", "claim", "eeee5555/t1")
    assert carried.stdout == "claimed t2 (carried: eeee5555/t1): carried work\n", carried.stderr


GHP = "ghp_" + "Zq8sW2mKx7Rt4Yv9Lb3Nc6Pd1Hf5Jg0Ae8Ub"


def test_other_sessions_task_text_is_redacted_whole_before_it_is_cut(
    three: PathResolver, env: dict, project: Path
) -> None:
    """Issue 39, points 3 and 4: `task list` and `who` print another session's words; a token that crossed the
    old cut at 100 characters showed its first 19 characters, and one in a later line its whole."""
    text = "x" * 86 + f" push with {GHP}\n.pgpass line:\nlocalhost:5432:orders:admin:Pr0d-Passw0rd-2026"
    board = three.board_file("aaaa1111", "tasks")
    entries.append(board, "t", {"status": "open", "author": "main"}, text, entries.initial_text("tasks", "aaaa1111"))
    assert _run(env, project, "aaaa1111", "task", "claim", "t2").returncode == 0

    listed = _run(env, project, "bbbb2222", "task", "list")
    data = _run(env, project, "bbbb2222", "task", "list", "--json").stdout
    shown = _run(env, project, "bbbb2222", "who")
    shown_json = _run(env, project, "bbbb2222", "who", "--json").stdout

    for output in (listed.stdout, data, shown.stdout, shown_json):
        assert GHP[:12] not in output and "Pr0d-Passw0rd" not in output
    assert "aaaa1111/t2" in listed.stdout and "claims: aaaa1111/t2" in shown.stdout
