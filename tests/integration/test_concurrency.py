"""Many real hook processes at once: one migration, no lost bytes, the newest handoff wins."""

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from helpers import end_payload, spawn_hook, start_payload


def _release(procs: list) -> list:
    """Close every stdin at once, so the hooks start their work together."""
    for proc in procs:
        proc.stdin.close()
    results = []
    for proc in procs:
        with proc:  # closes the pipes
            out, err = proc.stdout.read(), proc.stderr.read()  # a hook writes at most one line to stderr
            results.append((proc.wait(60), out, err))
    return results


def test_eight_sessions_starting_at_once_migrate_exactly_once(hook_venv: Path, project: Path, root: Path) -> None:
    board = root / "acme" / "widget" / ".blackboard"
    board.mkdir(parents=True)
    originals = {
        "session-notes.md": b"---\n**Session:** old\n**Time:** 2026-01-01T00:00:00Z\n\nold note\n" * 2000,
        "active-tasks.md": os.urandom(256 * 1024),
        "shared-context.md": "contexte partagé ✓\n".encode() * 500,
        "decisions.md": b"custom topic\n",
    }
    for name, data in originals.items():
        (board / name).write_bytes(data)

    procs = [spawn_hook("SessionStart", start_payload(f"s{i}", project), hook_venv) for i in range(8)]
    results = _release(procs)

    assert [code for code, _, _ in results] == [0] * 8
    assert all(err == b"" for _, _, err in results), [err for _, _, err in results]
    assert all(json.loads(out)["hookSpecificOutput"]["additionalContext"] for _, out, _ in results)
    manifest = json.loads((board / "_legacy" / "_migration.json").read_text())
    assert len(manifest["migrations"]) == 1
    for name, data in originals.items():
        assert (board / "_legacy" / name).read_bytes() == data
        assert not (board / name).exists()
    recorded = {r["file"]: r["sha256"] for r in manifest["migrations"][0]["files"]}
    assert recorded == {name: hashlib.sha256(data).hexdigest() for name, data in originals.items()}
    assert sorted(os.listdir(board / "sessions")) == sorted(f"s{i}" for i in range(8))
    assert not (root / "logs").exists()


@pytest.mark.parametrize("attempt", range(3))
def test_two_sessions_ending_at_once_leave_the_newer_handoff(
    hook_venv: Path, project: Path, root: Path, attempt: int
) -> None:
    ids = [f"a{attempt}", f"b{attempt}"]
    _release([spawn_hook("SessionStart", start_payload(i, project), hook_venv) for i in ids])
    results = _release([spawn_hook("SessionEnd", end_payload(i, project), hook_venv) for i in ids])
    assert [code for code, _, _ in results] == [0, 0]
    assert all(err == b"" for _, _, err in results)

    board = root / "acme" / "widget" / ".blackboard"
    metas = [json.loads((board / "sessions" / i / "_meta.json").read_text()) for i in ids]
    # newer as handoffs order (ADR 19): by generation (one that ended after the other was published
    # comes after it, even within the same second), then by end, then by id
    newer, older = sorted(metas, key=lambda m: (m["generation"], m["ended"], m["session_id"]), reverse=True)
    latest = (board / "handoff" / "latest-handoff.md").read_text()
    fields = dict(line.split(": ", 1) for line in latest.split("---\n")[1].strip().splitlines())
    assert json.loads(fields["session_id"]) == newer["session_id"]
    assert older["session_id"] in json.loads(fields["previous_sessions"])
    for i in ids:
        assert (board / "handoff" / f"handoff-{i}.md").exists()


@pytest.mark.parametrize("attempt", range(3))
def test_stops_racing_the_end_never_leave_a_draft_over_the_final_handoff(
    hook_venv: Path, project: Path, root: Path, attempt: int
) -> None:
    """Stop takes no lock: whatever the interleaving, the final handoff is the one left."""
    session_id = f"r{attempt}"
    _release([spawn_hook("SessionStart", start_payload(session_id, project), hook_venv)])
    board = root / "acme" / "widget" / ".blackboard" / "sessions" / session_id
    with open(board / "session-notes.md", "w") as notes:  # enough to make each draft take a while
        notes.write("".join(f"\n## n{i}\n- author: main\n\n{'x' * 300}\n" for i in range(1, 3000)))
    stop = {"session_id": session_id, "cwd": str(project), "hook_event_name": "Stop"}
    end = spawn_hook("SessionEnd", end_payload(session_id, project), hook_venv)
    stops = [spawn_hook("Stop", stop, hook_venv) for _ in range(24)]
    end.stdin.close()  # type: ignore[union-attr]
    for proc in stops:  # spread over SessionEnd's own run, so some Stops straddle its writes
        time.sleep(0.006)
        proc.stdin.close()  # type: ignore[union-attr]
    for proc in [end, *stops]:
        with proc:
            assert proc.wait(60) == 0
            assert proc.stderr.read() == b""  # type: ignore[union-attr]
    handoff = root / "acme" / "widget" / ".blackboard" / "handoff" / f"handoff-{session_id}.md"
    assert '\nstatus: "ended"\n' in handoff.read_text()


def test_eight_sessions_starting_at_once_copy_a_mnemonic_store_exactly_once(
    hook_venv: Path, project: Path, root: Path, isolated_home: Path
) -> None:
    """No MNEMONIC_ROOT and no config: the default store is found, copied once, and left as it was."""
    store = isolated_home / ".claude" / "mnemonic" / "acme" / "widge" / ".blackboard"  # mnemonic's own naming
    store.mkdir(parents=True)
    originals = {
        "session-notes.md": b"---\n**Session:** m-old\n**Time:** 2026-01-01T00:00:00Z\n\nkept by mnemonic\n" * 500,
        "active-tasks.md": os.urandom(64 * 1024),
    }
    for name, data in originals.items():
        (store / name).write_bytes(data)

    results = _release([spawn_hook("SessionStart", start_payload(f"m{i}", project), hook_venv) for i in range(8)])

    assert [code for code, _, _ in results] == [0] * 8
    assert all(err == b"" for _, _, err in results), [err for _, _, err in results]
    legacy = root / "acme" / "widget" / ".blackboard" / "_legacy"
    (run,) = json.loads((legacy / "_migration.json").read_text())["migrations"]
    assert run["source"] == str(store)
    recorded = {r["file"]: r["sha256"] for r in run["files"]}
    assert recorded == {name: hashlib.sha256(data).hexdigest() for name, data in originals.items()}
    (copy_dir,) = [p for p in legacy.iterdir() if p.is_dir()]
    assert {p.name: p.read_bytes() for p in copy_dir.iterdir()} == originals
    assert {p.name: p.read_bytes() for p in store.iterdir()} == originals  # mnemonic keeps its files
    ((code, out, err),) = _release([spawn_hook("SessionStart", start_payload("next", project), hook_venv)])
    assert "kept by mnemonic" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert not (root / "logs").exists()
