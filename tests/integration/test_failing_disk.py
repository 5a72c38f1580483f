"""A failed operation changes nothing, and a reported success is stored: full disks and damaged files.

The full-disk cases run on a tmpfs of a few hundred KiB; where mounting is not allowed they skip.
"""

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from blackboard import entries
from helpers import REPO, end_payload, start_payload

LAUNCHER = str(REPO / "bin" / "blackboard")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 384 KiB tmpfs, unmounted afterwards."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, leave: int) -> None:
    """Fill ``disk`` until about ``leave`` bytes are free."""
    stats = os.statvfs(disk)
    free = stats.f_bavail * stats.f_frsize
    with open(disk / "filler", "wb") as filler:
        filler.write(b"\0" * max(free - leave, 0))


def _cli(env: dict, project: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([LAUNCHER, *args], cwd=project, env=env, capture_output=True, text=True, timeout=60)


def test_a_note_on_a_full_disk_is_stored_whole_or_not_at_all(
    small_disk: Path, hook_venv: Path, project: Path, run_hook
) -> None:
    env = dict(os.environ, BLACKBOARD_ROOT=str(small_disk / "root"), BLACKBOARD_VENV=str(hook_venv))
    run_hook("SessionStart", start_payload("s1", project), env={"BLACKBOARD_ROOT": env["BLACKBOARD_ROOT"]})
    env["BLACKBOARD_SESSION_ID"] = "s1"
    assert _cli(env, project, "note", "before the disk filled").returncode == 0
    notes = small_disk / "root" / "acme" / "widget" / ".blackboard" / "sessions" / "s1" / "session-notes.md"
    before = notes.read_bytes()
    _fill(small_disk, leave=2048)

    results = [_cli(env, project, "note", f"{i}: " + "x" * 9000) for i in range(3)]

    failed = [r for r in results if r.returncode != 0]
    assert failed, "the disk never filled"
    for result in failed:
        assert result.returncode == 1
        assert result.stderr.count("\n") == 1, result.stderr
    stored, problems = entries.parse(notes.read_text())
    assert problems == []  # no entry cut short
    reported = [r.stdout.strip() for r in results if r.returncode == 0]
    assert [n.id for n in stored] == ["n1", *reported]  # every reported success is there, nothing else
    assert notes.read_bytes().startswith(before)


def test_a_handoff_that_could_not_be_published_is_reported_and_published_next_time(
    run_hook, project: Path, root: Path, hook_venv: Path
) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    latest = root / "acme" / "widget" / ".blackboard" / "handoff" / "latest-handoff.md"
    latest.mkdir(parents=True)  # damaged: a folder where the file goes

    ended = run_hook("SessionEnd", end_payload("s1", project))

    assert ended.returncode == 0
    assert ended.stderr.count(b"\n") == 1  # the failure is said, in one line
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv))
    doctor = _cli(env, project, "doctor", "--json")
    assert doctor.stdout, doctor.stderr
    problems = [f["problem"] for f in json.loads(doctor.stdout)["findings"] if not f["fixed"]]
    assert any("s1 ended, but its handoff was not published" in p for p in problems), problems

    latest.rmdir()  # the person repairs it, or the disk frees up
    run_hook("SessionStart", start_payload("s2", project))

    text = latest.read_text()
    assert 'session_id: "s1"' in text
    doctor = _cli(env, project, "doctor", "--json")
    assert not any("not published" in f["problem"] for f in json.loads(doctor.stdout)["findings"])
