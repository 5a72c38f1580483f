"""Cleanup while sessions start, end and resume in the same project, all real processes."""

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from blackboard.meta import new_meta, write_meta
from blackboard.paths import PathResolver
from helpers import REPO, end_payload, spawn_hook, start_payload


def _old_sessions(resolver: PathResolver, count: int) -> None:
    when = (datetime.now(timezone.utc) - timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for i in range(count):
        board = Path(resolver.get_session_blackboard_dir(f"old-{i:03d}"))
        board.mkdir(parents=True)
        (board / "session-notes.md").write_text("old\n")
        meta = new_meta(f"old-{i:03d}", "acme", "widget", when)
        meta.update(status="ended", ended=when, last_activity=when)
        write_meta(str(board / "_meta.json"), meta)


def test_cleanup_during_session_starts_and_a_resume(hook_venv: Path, resolver: PathResolver, project: Path) -> None:
    _old_sessions(resolver, 300)
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), CLAUDE_PLUGIN_ROOT=str(REPO))

    def hook(event: str, payload: dict) -> subprocess.Popen:
        proc = spawn_hook(event, payload, hook_venv)
        proc.stdin.close()  # type: ignore[union-attr]
        return proc

    cleaner = subprocess.Popen(
        [str(REPO / "bin" / "blackboard"), "cleanup", "--keep", "0", "--yes", "--json"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    starts = [hook("SessionStart", start_payload(f"new-{i}", project)) for i in range(6)]
    resumed = hook("SessionStart", start_payload("old-150", project, "resume"))
    ended = [hook("SessionEnd", end_payload(f"new-{i}", project)) for i in range(3)]
    out, err = cleaner.communicate(timeout=120)
    assert cleaner.returncode == 0, err
    for proc in [*starts, resumed, *ended]:
        with proc:
            proc.wait(60)
            assert proc.returncode == 0 and proc.stderr.read() == b""  # type: ignore[union-attr]

    metas = {e.session_id: e.meta for e in resolver.list_session_blackboards()}
    assert all(metas[f"new-{i}"] is not None for i in range(6))
    assert metas["old-150"] is not None and metas["old-150"]["status"] == "active"  # kept or started afresh
    assert not [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".removing-")]
    removed = {s["session_id"] for s in json.loads(out)["sessions"]}
    assert len(removed) >= 299 and not any(i.startswith("new-") for i in removed)
    assert not (Path(resolver.root) / "logs").exists()
