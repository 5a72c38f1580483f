"""Cleanup while sessions start, end and resume in the same project, all real processes."""

import json
import os
import signal
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from blackboard import registry
from blackboard.meta import new_meta, read_meta, write_meta
from blackboard.paths import PathResolver
from helpers import REPO, as_from_a_terminal, end_payload, spawn_hook, start_payload


def _old_sessions(resolver: PathResolver, count: int) -> None:
    when = (datetime.now(timezone.utc) - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    os.makedirs(resolver.get_handoff_dir())
    for i in range(count):
        board = Path(resolver.get_session_blackboard_dir(f"old-{i:03d}"))
        board.mkdir(parents=True)
        (board / "session-notes.md").write_text("old\n")
        meta = new_meta(f"old-{i:03d}", "acme", "widget", when)
        meta.update(status="ended", ended=when, last_activity=when)
        write_meta(str(board / "_meta.json"), meta)
        Path(resolver.handoff_path(f"old-{i:03d}")).write_text("old handoff\n")


def _cleaner(project: Path, hook_venv: Path, **popen: Any) -> "subprocess.Popen[str]":
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), CLAUDE_PLUGIN_ROOT=str(REPO))
    return subprocess.Popen(
        [str(REPO / "bin" / "blackboard"), "cleanup", "--keep", "0", "--yes", "--json"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def test_cleanup_during_session_starts_and_a_resume(hook_venv: Path, resolver: PathResolver, project: Path) -> None:
    _old_sessions(resolver, 300)

    def hook(event: str, payload: dict) -> subprocess.Popen:
        proc = spawn_hook(event, payload, hook_venv)
        proc.stdin.close()  # type: ignore[union-attr]
        return proc

    cleaner = _cleaner(project, hook_venv)
    starts = [hook("SessionStart", start_payload(f"new-{i}", project)) for i in range(6)]
    resumed = hook("SessionStart", start_payload("old-150", project, "resume"))
    ended = [hook("SessionEnd", end_payload(f"new-{i}", project)) for i in range(3)]
    out, err = cleaner.communicate(timeout=120)
    assert cleaner.returncode == 0, err
    for proc in [*starts, resumed, *ended]:
        with proc:
            proc.wait(60)
            err = proc.stderr.read()  # type: ignore[union-attr]
            assert proc.returncode == 0, err
            assert err == b""

    metas = {e.session_id: e.meta for e in registry.list_sessions(resolver)}
    assert all(metas[f"new-{i}"] is not None for i in range(6))
    assert metas["old-150"] is not None
    assert metas["old-150"]["status"] == "active"  # kept or started afresh
    assert not [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".removing-")]
    removed = {s["session_id"] for s in json.loads(out)["sessions"]}
    assert len(removed) >= 299
    assert not any(i.startswith("new-") for i in removed)
    assert not any(os.path.exists(resolver.handoff_path(i)) for i in removed)
    assert not (Path(resolver.root) / "logs").exists()


def test_sessions_resumed_while_cleanup_runs_stay_whole(hook_venv: Path, resolver: PathResolver, project: Path) -> None:
    """Each resumed session is either left as it was or removed and started afresh, never half gone."""
    _old_sessions(resolver, 1000)
    resumed = [f"old-{i:03d}" for i in range(0, 1000, 50)]  # spread out: some are reached before their hook, some after
    waiting = [spawn_hook("SessionStart", start_payload(i, project, "resume"), hook_venv) for i in resumed]
    cleaner = _cleaner(project, hook_venv)
    deadline = time.monotonic() + 60
    while len(os.listdir(resolver.sessions_dir)) == 1000 and time.monotonic() < deadline:
        time.sleep(0.005)  # until the removing has begun, so the plan saw every resumed session ended
    for proc in waiting:
        proc.stdin.close()  # type: ignore[union-attr]
    out, err = cleaner.communicate(timeout=120)
    assert cleaner.returncode == 0, err
    for proc in waiting:
        with proc:
            proc.wait(60)
            err = proc.stderr.read()  # type: ignore[union-attr]
            assert proc.returncode == 0, err
            assert err == b""

    removed = {s["session_id"] for s in json.loads(out)["sessions"]}
    left = os.listdir(resolver.sessions_dir)
    assert sorted(left) == sorted(resumed)
    assert removed >= {f"old-{i:03d}" for i in range(1000)} - set(resumed)
    for session_id in resumed:
        board = Path(resolver.get_session_blackboard_dir(session_id))
        assert read_meta(str(board / "_meta.json"))["status"] == "active"  # type: ignore[index]
        if session_id in removed:  # its hook came after the removal: a fresh board
            fresh = (board / "session-notes.md").read_text()
            assert fresh.startswith("# Session notes") and "\n## " not in fresh  # a fresh board: its header only
            # the handoff goes with it, unless the fresh board was there first: then cleanup keeps it whole
            handoff = Path(resolver.handoff_path(session_id))
            assert not handoff.exists() or handoff.read_text() == "old handoff\n"
        else:  # its hook came first: left (or put back) as it was
            assert (board / "session-notes.md").read_text() == "old\n"
            assert Path(resolver.handoff_path(session_id)).read_text() == "old handoff\n"


def test_ctrl_c_during_cleanup_leaves_every_session_whole_and_the_next_run_finishes(
    hook_venv: Path, resolver: PathResolver, project: Path
) -> None:
    _old_sessions(resolver, 2000)
    # its own process group, like a terminal's, and Ctrl+C reaches it as from one
    cleaner = _cleaner(project, hook_venv, start_new_session=True, preexec_fn=as_from_a_terminal)
    deadline = time.monotonic() + 60
    while len(os.listdir(resolver.sessions_dir)) > 1500 and time.monotonic() < deadline:
        time.sleep(0.002)
    os.killpg(cleaner.pid, signal.SIGSTOP)  # held mid-way, however long a loaded machine takes to say so
    os.killpg(cleaner.pid, signal.SIGINT)  # what Ctrl+C does: the whole process group gets it
    os.killpg(cleaner.pid, signal.SIGCONT)
    cleaner.communicate(timeout=60)
    assert cleaner.returncode == 130
    left = os.listdir(resolver.sessions_dir)
    assert 0 < len(left) < 2000
    for name in left:  # never half a board: a session is whole, or set aside with its metadata still there
        files = set(os.listdir(os.path.join(resolver.sessions_dir, name)))
        if name.startswith(".removing-"):
            assert "_meta.json" in files, name
        else:
            assert files == {"_meta.json", "session-notes.md"}, name
            assert os.path.exists(resolver.handoff_path(name))

    finish = _cleaner(project, hook_venv)
    out, err = finish.communicate(timeout=120)
    assert finish.returncode == 0, err
    assert os.listdir(resolver.sessions_dir) == []
    assert [n for n in os.listdir(resolver.get_handoff_dir()) if n.startswith("handoff-")] == []
