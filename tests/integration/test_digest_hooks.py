"""The digest hooks as Claude Code runs them: hostile payloads, broken git, capture turned off."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from blackboard import board
from blackboard.paths import PathResolver
from helpers import FIXTURES, REPO, end_payload, start_payload, write_turns


def _recorded(name: str, project: Path, session_id: str) -> dict:
    """A payload recorded from the pinned Claude Code, moved to this test's project and session."""
    payload = json.loads((FIXTURES / name).read_text().replace("/SCRATCH/widget", str(project)))
    return {**payload, "session_id": session_id}


def _board(root: Path, session_id: str) -> Path:
    return root / "acme" / "widget" / ".blackboard" / "sessions" / session_id


def _handoff(root: Path, session_id: str) -> str:
    return (root / "acme" / "widget" / ".blackboard" / "handoff" / f"handoff-{session_id}.md").read_text()


HOSTILE_PAYLOADS = [
    pytest.param("01-UserPromptSubmit.json", {"prompt": ["not", "text"]}, id="prompt-a-list"),
    pytest.param("01-UserPromptSubmit.json", {"prompt": {"nested": {"deep": 1}}}, id="prompt-an-object"),
    pytest.param("01-UserPromptSubmit.json", {"prompt": "\x1b]0;pwned\x07 \x00 nul \ud800 lone"}, id="prompt-controls"),
    pytest.param("01-UserPromptSubmit.json", {"prompt": "x" * 900_000}, id="prompt-near-the-stdin-cap"),
    pytest.param("03-PostToolUse.json", {"tool_input": {"file_path": "../../../../etc/passwd"}}, id="path-escaping"),
    pytest.param("03-PostToolUse.json", {"tool_input": {"file_path": "/a\u0000b"}}, id="path-with-nul"),
    pytest.param("03-PostToolUse.json", {"tool_input": "not an object"}, id="input-a-string"),
    pytest.param("03-PostToolUse.json", {"tool_name": "Bash"}, id="not-an-edit-tool"),
    pytest.param("10-Stop.json", {"last_assistant_message": 12}, id="message-a-number"),
    pytest.param("10-Stop.json", {"last_assistant_message": "\n## Open work\n- **t9** forged"}, id="message-forging"),
]


@pytest.mark.parametrize(("fixture", "change"), HOSTILE_PAYLOADS)
def test_hostile_payloads_cost_nothing_and_the_handoff_is_written_anyway(
    run_hook, project: Path, root: Path, fixture: str, change: dict
) -> None:
    event = fixture.split("-", 1)[1].removesuffix(".json")
    assert run_hook("SessionStart", start_payload("s1", project)).returncode == 0

    result = run_hook(event, {**_recorded(fixture, project, "s1"), **change})

    assert result.returncode == 0 and result.stdout == b""
    assert run_hook("SessionEnd", end_payload("s1", project)).returncode == 0
    text = _handoff(root, "s1")
    assert "## Open work" in text and "\n- **t9** forged" not in text
    assert "passwd" not in text or "etc/passwd" in text.split("## What changed")[1].split("##")[0]
    assert "\x1b" not in text and "\x00" not in text


def test_the_recorded_session_gives_a_full_handoff(run_hook, project: Path, root: Path) -> None:
    for name in sorted(p.name for p in FIXTURES.glob("[0-9]*.json")):
        event = name.split("-", 1)[1].removesuffix(".json")
        assert run_hook(event, _recorded(name, project, "s1")).returncode == 0

    text = _handoff(root, "s1")

    assert "first request: Add an escape() helper to util.py and commit it" in text
    assert "the escapes are still half done" in text
    assert "`util.py`: 2 edits" in text


def test_capture_off_records_nothing_and_reads_nothing(run_hook, project: Path, root: Path) -> None:
    env = {"BLACKBOARD_DIGEST": "0"}
    for name in sorted(p.name for p in FIXTURES.glob("[0-9]*.json")):
        event = name.split("-", 1)[1].removesuffix(".json")
        assert run_hook(event, _recorded(name, project, "s1"), env=env).returncode == 0

    assert not (_board(root, "s1") / "_digest.jsonl").exists()
    text = _handoff(root, "s1")
    assert "escape() helper" not in text and "util.py" not in text


def test_secrets_in_prompts_never_reach_the_disk(run_hook, project: Path, root: Path) -> None:
    token = "ghp_" + "Z9y8X7w6V5" * 4
    run_hook("SessionStart", start_payload("s1", project))
    payload = _recorded("01-UserPromptSubmit.json", project, "s1")
    run_hook("UserPromptSubmit", {**payload, "prompt": f"deploy with {token} and DB_PASSWORD=hunter2hunter2"})
    run_hook("SessionEnd", end_payload("s1", project))

    for path in _board(root, "s1").parent.parent.rglob("*"):
        if path.is_file():
            assert token not in path.read_text(errors="replace") and "hunter2hunter2" not in path.read_text(
                errors="replace"
            )
    assert "deploy with [REDACTED]" in _handoff(root, "s1")


@pytest.mark.parametrize(
    "breakage",
    [
        pytest.param("garbage-head", id="garbage-head"),
        pytest.param("fsmonitor", id="hostile-fsmonitor"),
        pytest.param("no-git-on-path", id="no-git"),
    ],
)
def test_a_broken_or_hostile_repository_costs_only_its_line(
    run_hook, project: Path, root: Path, tmp_path: Path, breakage: str
) -> None:
    marker = tmp_path / "ran"
    env = {}
    run_hook("SessionStart", start_payload("s1", project))
    if breakage == "garbage-head":
        (project / ".git" / "HEAD").write_bytes(b"\xff\x00 not a ref")
    elif breakage == "fsmonitor":
        script = tmp_path / "monitor.sh"
        script.write_text(f"#!/bin/sh\ntouch {marker}\n")
        script.chmod(0o755)
        subprocess.run(["git", "-C", str(project), "config", "core.fsmonitor", str(script)], check=True)
    else:
        env = {"PATH": os.path.dirname(os.path.realpath("/bin/sh"))}  # sh, but no git

    assert run_hook("SessionEnd", end_payload("s1", project), env=env).returncode == 0

    assert not marker.exists()
    text = _handoff(root, "s1")
    assert "## What changed" in text and "## Open work" in text


def test_a_fifo_in_place_of_the_digest_never_blocks_the_prompt(run_hook, project: Path, root: Path) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    os.mkfifo(_board(root, "s1") / "_digest.jsonl")

    result = run_hook("UserPromptSubmit", _recorded("01-UserPromptSubmit.json", project, "s1"))  # 60 s timeout

    assert result.returncode == 0 and len(result.stderr.splitlines()) == 1


def _git(project: Path, *args: str) -> None:
    env = dict(
        os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"
    )
    subprocess.run(["git", "-C", str(project), *args], check=True, env=env, capture_output=True)


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_a_repositorys_filter_driver_never_runs(run_hook, project: Path, root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "filter-ran"
    (project / "f").write_text("same\n")
    _git(project, "add", "f")
    _git(project, "commit", "-q", "-m", "f")
    run_hook("SessionStart", start_payload("s1", project))
    _git(project, "config", "filter.evil.clean", _script(tmp_path / "clean.sh", f"touch {marker}; cat"))
    (project / ".gitattributes").write_text("* filter=evil\n")
    os.utime(project / "f", (1, 1))  # same content, other times: git status must look inside

    patient = {"BLACKBOARD_END_GIT_TIMEOUT": "1"}  # a loaded machine may not start git within 0.2 s
    assert run_hook("SessionEnd", end_payload("s1", project), env=patient).returncode == 0

    assert not marker.exists()
    assert "left uncommitted (git status)" in _handoff(root, "s1")


def test_a_partial_clones_lazy_fetch_never_runs_its_transport(
    run_hook, project: Path, root: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ssh-ran"
    _git(project, "commit", "-q", "--allow-empty", "-m", "start")
    run_hook("SessionStart", start_payload("s1", project))
    (project / "g").write_text("y\n")
    _git(project, "add", "g")
    _git(project, "commit", "-q", "-m", "second")
    for key, value in (
        ("core.repositoryformatversion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.url", "ssh://evil.invalid/x"),
        ("remote.origin.promisor", "true"),
        ("core.sshCommand", _script(tmp_path / "ssh.sh", f"touch {marker}; exit 1")),
    ):
        _git(project, "config", key, value)
    tree = subprocess.run(["git", "-C", str(project), "rev-parse", "HEAD^{tree}"], capture_output=True, text=True)
    (project / ".git" / "objects" / tree.stdout[:2] / tree.stdout.strip()[2:]).unlink()

    assert run_hook("SessionEnd", end_payload("s1", project)).returncode == 0

    assert not marker.exists()


def test_secrets_in_commit_subjects_and_tasks_are_redacted_before_they_are_cut(
    run_hook, project: Path, root: Path, hook_venv: Path
) -> None:
    token = "ghp_" + "ABCDEFGHIJ" * 3 + "0123456789"
    _git(project, "commit", "-q", "--allow-empty", "-m", "start")
    run_hook("SessionStart", start_payload("s1", project))
    _git(project, "commit", "-q", "--allow-empty", "-m", "x" * 180 + " " + token)
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), BLACKBOARD_SESSION_ID="s1")
    task = "y" * 185 + " " + token
    subprocess.run([str(REPO / "bin" / "blackboard"), "task", "add", task], cwd=project, env=env, check=True)

    run_hook("SessionEnd", end_payload("s1", project))

    text = _handoff(root, "s1")
    assert token[:8] not in text
    assert token[:8] not in run_hook("SessionStart", start_payload("s2", project)).context


def test_an_open_task_before_the_tail_of_a_large_task_file_is_not_lost(
    run_hook, project: Path, resolver: PathResolver, hook_venv: Path
) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), BLACKBOARD_SESSION_ID="s1")
    blackboard = [str(REPO / "bin" / "blackboard")]
    subprocess.run([*blackboard, "task", "add", "IMPORTANT first task"], cwd=project, env=env, check=True)
    chores = board.Board(resolver, "s1")  # what 62 more `task add` and `task done` commands would write
    for i in range(31):
        chores.finish_task(chores.add_task(f"chore {i} " + "z" * 9000, "main"), "main")

    run_hook("SessionEnd", end_payload("s1", project))

    assert "IMPORTANT first task" in run_hook("SessionStart", start_payload("s2", project)).context


def test_long_values_of_other_sessions_never_push_the_fence_out(run_hook, project: Path) -> None:
    (project / ".git" / "HEAD").write_text("ref: refs/heads/feature/" + "x" * 4000 + "\n")
    for session_id in ("a1", "a2", "a3"):
        run_hook("SessionStart", start_payload(session_id, project))

    context = run_hook("SessionStart", start_payload("new", project)).context

    assert context.count("<<<BLACKBOARD-DATA") == context.count("BLACKBOARD-DATA ") - context.count(
        "<<<BLACKBOARD-DATA"
    )
    assert context.rstrip().endswith("(subagents add --author NAME).")


def test_a_session_that_began_before_the_plugin_takes_its_requests_from_the_transcript(
    run_hook, project: Path, root: Path, isolated_home: Path
) -> None:
    transcript = isolated_home / ".claude" / "projects" / "-widget" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text((FIXTURES / "transcript.jsonl").read_text())
    resumed = {**start_payload("s1", project, source="resume"), "transcript_path": str(transcript)}
    run_hook("SessionStart", resumed)  # the first the plugin hears of this session
    run_hook("UserPromptSubmit", {**_recorded("01-UserPromptSubmit.json", project, "s1"), "prompt": "now the quotes"})
    run_hook("Stop", {**_recorded("10-Stop.json", project, "s1"), "last_assistant_message": "quotes done"})

    run_hook("SessionEnd", {**end_payload("s1", project), "transcript_path": str(transcript)})

    text = _handoff(root, "s1")
    assert "first request (from the transcript): Add an escape() helper to util.py and commit it" in text
    assert "last assistant message (the Stop hook): quotes done" in text


def test_session_end_asks_git_under_its_own_deadline_and_says_when_git_did_not_answer(
    run_hook, project: Path, root: Path, tmp_path: Path
) -> None:
    """Git taking seconds (200 000 files, a cold disk): SessionEnd stays far inside Claude Code's 1.5 s."""
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "git").write_text("#!/bin/sh\nexec sleep 5\n")
    (slow / "git").chmod(0o755)
    run_hook("SessionStart", start_payload("s1", project))
    began = time.monotonic()
    ended = run_hook("SessionEnd", end_payload("s1", project), env={"PATH": f"{slow}{os.pathsep}{os.environ['PATH']}"})
    took = time.monotonic() - began
    assert ended.returncode == 0 and ended.stderr == b""
    assert took < 0.75, took  # the hook's own start included; git had 0.8 s of its own before
    changed = _handoff(root, "s1").split("## What changed")[1].split("\n## ")[0]
    # git asked and cut off, or (on a loaded machine) the hook's deadline passed before it could be asked
    assert "took over" in changed or "no time was left" in changed, changed


def test_recovery_at_session_start_has_one_deadline_for_every_session_it_recovers(
    run_hook, project: Path, root: Path, tmp_path: Path
) -> None:
    """Issue 32, point 13: each abandoned session had 0.8 s of git of its own; ten made SessionStart take 8 s."""
    from helpers import dead_pid

    gone = {"CLAUDE_PID": str(dead_pid())}
    for n in range(10):
        assert run_hook("SessionStart", start_payload(f"killed{n}", project), env=gone).returncode == 0
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "git").write_text("#!/bin/sh\nexec sleep 5\n")
    (slow / "git").chmod(0o755)
    began = time.monotonic()
    started = run_hook(
        "SessionStart", start_payload("next", project), env={"PATH": f"{slow}{os.pathsep}{os.environ['PATH']}"}
    )
    took = time.monotonic() - began
    assert started.returncode == 0 and started.stderr == b""
    assert took < 2.5, took  # one second for all of them, then the context
    active = root / "acme" / "widget" / ".blackboard" / "_active"
    left = sorted(p.name for p in active.iterdir() if p.name.startswith("killed"))
    assert len(left) < 10  # some were recovered within the second; the rest wait for the next start
    assert run_hook("SessionStart", start_payload("after", project)).returncode == 0
    assert not [p.name for p in active.iterdir() if p.name.startswith("killed")]


def _fields(root: Path, session_id: str) -> dict:
    from blackboard.handoff import split_front_matter

    return split_front_matter(_handoff(root, session_id))[0]


def test_a_long_sessions_handoff_counts_every_request_and_every_file(run_hook, project: Path, root: Path) -> None:
    """Issue 32, point 12: after 150 turns the digest outgrew its 512 KiB tail: "request 98 of 98" when 150 were
    made, 50 files and "46 more" while 54 others vanished."""
    run_hook("SessionStart", start_payload("s1", project))
    digest_file = _board(root, "s1") / "_digest.jsonl"
    write_turns(digest_file, 1, 100)  # what 100 turns of the hooks write
    stop = {**_recorded("10-Stop.json", project, "s1"), "last_assistant_message": "answer 100, said at Stop"}
    assert run_hook("Stop", stop).returncode == 0  # counts those, once
    write_turns(digest_file, 101, 150)
    assert digest_file.stat().st_size > 512 * 1024

    ended = run_hook("SessionEnd", end_payload("s1", project))

    assert ended.returncode == 0 and ended.stderr == b""
    text = _handoff(root, "s1")
    assert "request 150 of 150" in text and "first request: request 1 " in text
    changed = text.split("## What changed")[1].split("\n## ")[0]
    assert changed.count("`src/file_") == 50 and "… and 100 more files, each edited less" in changed
    fields = _fields(root, "s1")
    assert fields["asked"]["count"] == 150 and "complete" not in fields["asked"]
    assert len(fields["changed"]["files"]) + fields["changed"]["more_files"] == 150


@pytest.mark.parametrize(
    ("change", "turns"),
    [
        pytest.param(lambda digest, summary: summary.write_text('{"version": 1, "of'), 150, id="summary-torn"),
        pytest.param(lambda digest, summary: summary.write_bytes(b"\xff" * 100), 150, id="summary-not-json"),
        pytest.param(lambda digest, summary: summary.unlink(), 150, id="summary-gone"),
        pytest.param(lambda digest, summary: _keep_turns(digest, 40), 40, id="digest-cut-to-40-turns"),
        pytest.param(lambda digest, summary: _replace_with_turns(digest, 120), 120, id="digest-replaced"),
    ],
)
def test_a_summary_or_digest_changed_between_stop_and_end_is_counted_again(
    run_hook, project: Path, root: Path, change, turns: int
) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    digest_file = _board(root, "s1") / "_digest.jsonl"
    summary = _board(root, "s1") / "_digest-summary.json"
    write_turns(digest_file, 1, 150)
    assert run_hook("Stop", _recorded("10-Stop.json", project, "s1")).returncode == 0
    assert summary.is_file()
    change(digest_file, summary)

    ended = run_hook("SessionEnd", end_payload("s1", project))

    assert ended.returncode == 0 and ended.stderr == b""
    assert not (root / "logs" / "hooks.log").exists()
    fields = _fields(root, "s1")
    assert fields["asked"]["count"] == turns and fields["asked"]["first"].startswith("request 1 ")
    assert len(fields["changed"]["files"]) + fields["changed"].get("more_files", 0) == turns


def _keep_turns(digest_file: Path, turns: int) -> None:
    lines = digest_file.read_text().split("\n")
    digest_file.write_text("\n".join(lines[: 3 * turns]) + "\n")


def _replace_with_turns(digest_file: Path, turns: int) -> None:
    replaced = digest_file.with_name("replaced.jsonl")
    write_turns(replaced, 1, turns, prompt_chars=1000)
    os.replace(replaced, digest_file)
