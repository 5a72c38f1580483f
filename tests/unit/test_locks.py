"""Locks through filelock (ADR 26), and the digest's appends that take none."""

from __future__ import annotations

import errno
import fcntl
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import filelock
import pytest

from blackboard import digest, locks
from blackboard.errors import BlackboardError


def _hold(path: str, seconds: float) -> None:
    """Hold the lock until the test lets go (``_let_go``), at most ``seconds``."""
    deadline = time.monotonic() + seconds
    with locks.file_lock(path):
        Path(path + ".held").write_text("")
        while not os.path.exists(path + ".go") and time.monotonic() < deadline:
            time.sleep(0.01)


def _let_go(holder: multiprocessing.process.BaseProcess, path: str) -> None:
    Path(path + ".go").write_text("")
    holder.join(30)


def _start_holder(path: str, seconds: float) -> multiprocessing.process.BaseProcess:
    holder = multiprocessing.get_context("spawn").Process(target=_hold, args=(path, seconds))
    holder.start()
    deadline = time.monotonic() + 20
    while not os.path.exists(path + ".held"):
        assert time.monotonic() < deadline, "the holder never took the lock"
        time.sleep(0.02)
    return holder


def test_a_lock_another_process_holds_times_out_with_a_fix_and_is_free_once_it_ends(tmp_path: Path) -> None:
    path = str(tmp_path / "board.md")
    holder = _start_holder(path, 30.0)
    assert locks.try_lock(path) is None
    started = time.monotonic()
    with (
        pytest.raises(BlackboardError, match=r"timed out after 0s waiting for .*board\.md\.lock: another"),
        locks.file_lock(path, timeout=0.3),
    ):
        pass
    assert time.monotonic() - started >= 0.3
    _let_go(holder, path)
    with locks.file_lock(path, timeout=5):  # free again; and it is the kernel's lock on the same file
        fd = os.open(path + ".lock", os.O_RDONLY)
        with pytest.raises(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(fd)
    assert oct(os.stat(path + ".lock").st_mode & 0o777) == "0o600"


def test_a_killed_holder_leaves_no_lock_behind(tmp_path: Path) -> None:
    path = str(tmp_path / "board.md")
    holder = _start_holder(path, 60.0)
    holder.kill()
    holder.join(10)
    release = locks.try_lock(path)
    assert release is not None
    release()


def test_a_file_system_without_flock_gets_filelocks_soft_lock(tmp_path: Path, monkeypatch) -> None:
    """NFS, SMB and FUSE mounts that answer ENOSYS: the soft lock, not a raw OSError."""

    def no_flock(fd: int, operation: int) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    path = str(tmp_path / "board.md")
    with locks.file_lock(path):
        assert os.path.exists(path + ".soft.lock")
        assert locks.try_lock(path) is None  # held: the soft lock excludes as well
    assert not os.path.exists(path + ".soft.lock")
    release = locks.try_lock(path)
    assert release is not None
    release()


def test_a_lock_file_replaced_by_a_link_is_refused_and_its_target_left_whole(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    path = str(tmp_path / "board.md")
    os.symlink(target, path + ".lock")
    with pytest.raises(BlackboardError, match=r"cannot use .*board\.md\.lock: it is a link"), locks.file_lock(path):
        pass
    with pytest.raises(BlackboardError, match="it is a link"):
        locks.try_lock(path)
    assert target.read_text() == "keep me"


def test_a_lock_is_taken_where_its_file_cannot_be_stamped(tmp_path: Path, monkeypatch) -> None:
    def refuse(*args: object) -> None:
        raise PermissionError(1, "utime refused")

    monkeypatch.setattr(os, "utime", refuse)
    with locks.file_lock(str(tmp_path / "board.md")):
        assert locks.try_lock(str(tmp_path / "board.md")) is None  # held


def test_held_for_tells_a_held_lock_from_a_free_one_without_taking_it(tmp_path: Path) -> None:
    path = str(tmp_path / "board.md")
    assert locks.held_for(path + ".lock") is None  # none yet
    holder = _start_holder(path, 30.0)
    try:
        os.utime(path + ".lock", (time.time() - 3600, time.time() - 3600))
        assert locks.held_for(path + ".lock") >= 3500
        assert locks.held_for(path + ".lock") >= 3500  # asking changed nothing
    finally:
        _let_go(holder, path)
    assert locks.held_for(path + ".lock") is None


def test_the_hooks_after_every_turn_never_import_filelock(tmp_path: Path) -> None:
    """filelock is imported where a lock is taken; the digest's appends take none."""
    code = (
        "import sys; from blackboard import digest, session, hook; "
        f"digest.record_stop({str(tmp_path / 'd.jsonl')!r}, 'done'); "
        "print('filelock' in sys.modules)"
    )
    import subprocess

    lib = str(Path(digest.__file__).parent.parent)
    out = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": lib}, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def _text(writer: int, i: int) -> str:
    return f"writer {writer} prompt {i} " + "x" * (writer * 100 + 1)


def _append_many(path: str, writer: int) -> None:
    for i in range(200):
        digest.record_prompt(path, _text(writer, i))


def test_digest_appends_of_many_processes_are_each_whole_and_there_once(tmp_path: Path) -> None:
    path = str(tmp_path / "_digest.jsonl")
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_append_many, args=(path, w)) for w in range(8)]
    for p in writers:
        p.start()
    for p in writers:
        p.join(60)
        assert p.exitcode == 0
    lines = Path(path).read_text().split("\n")
    records = digest.parse_lines(lines)
    assert sorted(r["text"] for r in records) == sorted(_text(w, i) for w in range(8) for i in range(200))
    assert all(line == "" or json.loads(line) for line in lines)  # nothing torn: at most an empty line


def test_a_line_a_full_disk_cut_short_costs_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "_digest.jsonl"
    digest.record_prompt(str(path), "first")
    with open(path, "a") as handle:
        handle.write('{"kind": "prompt", "text": "cut sh')  # a write the disk cut short
    digest.record_prompt(str(path), "after")
    records = digest.parse_lines(path.read_text().split("\n"))
    assert [r["text"] for r in records] == ["first", "after"]


def test_filelock_is_the_card_package_at_the_pinned_version() -> None:
    pinned = [
        line
        for line in Path(__file__).parents[2].joinpath("requirements.txt").read_text().splitlines()
        if line.startswith("filelock==")
    ]
    wanted = "3.19.1" if sys.version_info < (3, 10) else "3.20.3"
    assert any(line.startswith(f"filelock=={wanted};") for line in pinned)
    assert filelock.__version__ == wanted
