"""Writers killed with SIGKILL at random moments: every file still parses, nothing acknowledged is lost."""

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

from blackboard import entries, session
from blackboard.meta import read_meta
from blackboard.paths import PathResolver
from helpers import REPO, settings_now

WRITER = """
import sys
sys.path.insert(0, sys.argv[1])
from blackboard import board, entries, paths, project
from blackboard.meta import update_meta
resolver = paths.PathResolver(sys.argv[2], project.identify_project(sys.argv[3]))
b = board.Board(resolver, "s1")
tag = sys.argv[4]
for i in range(100000):
    note = b.note(f"{tag}-{i} " + "x" * 2000, tag)
    print("note", note, f"{tag}-{i}", flush=True)
    task = b.add_task(f"{tag} task {i}", tag)
    b.claim_task(task, tag)
    print("claimed", task, flush=True)
    b.post(f"k_{tag}", f"{tag} value {i}", tag, replace=True)
    update_meta(resolver.meta_path("s1"), lambda m: m.update(crash_counter=i))
"""


def test_killed_writers_leave_every_file_whole(resolver: PathResolver, project: Path, hook_venv: Path) -> None:
    session.start(resolver, "s1", "startup", {"cwd": str(project)}, settings_now())
    board = Path(resolver.get_session_blackboard_dir("s1"))
    acknowledged_notes, claimed = {}, set()
    rng = random.Random(7)
    python = str(hook_venv / "bin" / "python")
    for round_ in range(12):
        writers = [
            subprocess.Popen(
                [python, "-I", "-c", WRITER, str(REPO / "lib"), resolver.root, str(project), f"w{round_}{n}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(3)
        ]
        # past the writers' start (their first note written, however loaded the machine), within their work
        started = [writer.stdout.readline() if writer.stdout else "" for writer in writers]
        time.sleep(rng.uniform(0.0, 0.4))
        for writer in writers:
            writer.send_signal(signal.SIGKILL)
        for first, writer in zip(started, writers):
            out, _ = writer.communicate(timeout=30)
            for line in (first + out).splitlines():
                kind, *rest = line.split()
                if kind == "note" and len(rest) == 2:
                    acknowledged_notes[rest[1]] = rest[0]
                elif kind == "claimed" and rest:
                    claimed.add(rest[0])
        # after every round: all files parse, nothing acknowledged is missing
        meta = read_meta(str(board / "_meta.json"))
        assert meta is not None
        assert meta["status"] == "active"
        notes, problems = entries.parse((board / "session-notes.md").read_text())
        assert problems == []
        bodies = {n.body.split(" ")[0] for n in notes}
        assert set(acknowledged_notes) <= bodies
        assert len({n.id for n in notes}) == len(notes)  # ids stay unique across kills
        tasks, problems = entries.parse((board / "active-tasks.md").read_text())
        assert problems == []
        by_id = {t.id: t for t in tasks}
        assert all(by_id[t].fields.get("claimed_by") for t in claimed)
        assert entries.parse((board / "shared-context.md").read_text())[1] == []
    assert len(acknowledged_notes) > 12  # the writers really got work done between kills
    # a kill between writing a temporary file and renaming it may leave the temporary file
    # (doctor removes old ones); it never replaces a real file with half of one

    # no lock is left that blocks the next writer, and the session still ends cleanly
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv), CLAUDE_PLUGIN_ROOT=str(REPO))
    payload = {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionEnd", "reason": "other"}
    started = time.monotonic()
    ended = subprocess.run(
        [str(REPO / "hooks" / "run"), "session-end"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert ended.returncode == 0
    assert ended.stderr == b""
    assert time.monotonic() - started < 5
    assert (read_meta(str(board / "_meta.json")) or {})["status"] == "ended"
