import multiprocessing
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blackboard import fsutil
from blackboard.errors import BlackboardError
from helpers import settings_now


def test_atomic_write_replaces_whole_files(tmp_path: Path) -> None:
    tmp_path = tmp_path / "dir"
    tmp_path.mkdir()
    path = tmp_path / "f.txt"
    fsutil.atomic_write(str(path), "one")
    fsutil.atomic_write(str(path), b"two")
    assert path.read_text() == "two"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_only_a_write_that_can_be_derived_again_skips_the_fsync(tmp_path: Path, monkeypatch) -> None:
    """Stop's draft handoff is rendered from the board after every turn; everything else is fsynced."""
    from blackboard import session
    from blackboard.paths import PathResolver
    from blackboard.project import Project

    synced: list = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    path = tmp_path / "f.txt"
    fsutil.atomic_write(str(path), "durable")
    assert len(synced) == 1
    fsutil.atomic_write(str(path), "draft", durable=False)
    assert path.read_text() == "draft"
    assert len(synced) == 1

    resolver = PathResolver(str(tmp_path / "root"), Project("acme", "widget", None, "test"))
    session.start(resolver, "s1", "startup", {}, settings_now())
    synced.clear()
    session.checkpoint(resolver, "s1", settings_now())  # what Stop does
    assert synced == []
    assert "Handoff from session s1" in Path(resolver.handoff_path("s1")).read_text()
    session.end(resolver, "s1", "other", settings_now())
    assert synced  # the final handoff and the metadata are durable


def test_atomic_write_leaves_the_old_file_and_no_temp_when_it_fails(tmp_path: Path, monkeypatch) -> None:
    tmp_path = tmp_path / "dir"
    tmp_path.mkdir()
    path = tmp_path / "f.txt"
    path.write_text("old")

    def broken_replace(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        fsutil.atomic_write(str(path), "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_create_exclusive_never_overwrites(tmp_path: Path) -> None:
    path = str(tmp_path / "f")
    assert fsutil.create_exclusive(path, "first")
    assert not fsutil.create_exclusive(path, "second")
    assert Path(path).read_text() == "first"


def test_read_tail_skips_the_partial_first_line_and_never_splits_a_character(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("ééééé\n" * 1000 + "last line\n")
    text, cut = fsutil.read_tail(str(path), 100)
    assert cut
    assert text.endswith("last line\n")
    assert "\ufffd" not in text
    assert all(line in ("ééééé", "last line", "") for line in text.split("\n"))
    assert fsutil.read_tail(str(path), 10**9) == (path.read_text(), False)
    assert fsutil.read_tail(str(tmp_path / "missing"), 10) == ("", False)


def _append_notes(path: str, tag: int, n: int) -> None:
    from blackboard import entries

    for i in range(n):
        entries.append(path, "n", {"author": f"w{tag}"}, f"{tag}:{i}:" + "x" * 5000)


def test_entry_appends_from_many_processes_are_whole_and_numbered_once(tmp_path: Path) -> None:
    from blackboard import entries

    path = str(tmp_path / "session-notes.md")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_notes, args=(path, tag, 40)) for tag in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    notes, problems = entries.parse(Path(path).read_text())
    assert problems == []
    assert len(notes) == 240
    assert sorted(n.body.split(":x")[0] for n in notes) == sorted(f"{t}:{i}" for t in range(6) for i in range(40))
    assert sorted(int(n.id[1:]) for n in notes) == list(range(1, 241))


@given(st.binary(max_size=200))
def test_any_bytes_read_as_a_json_object_give_a_dict(data: bytes) -> None:
    assert isinstance(fsutil.json_object(data), dict)


def test_a_json_object_file_is_read_only_whole_and_only_when_it_is_an_object(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    assert fsutil.read_json_object(str(path), 100) == {}  # missing
    path.write_text('{"a": [1, 2]}')
    assert fsutil.read_json_object(str(path), 100) == {"a": [1, 2]}
    assert fsutil.read_json_object(str(path), 5) == {}  # over the cap: never a part for the whole
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert fsutil.read_json_object(str(path), 1 << 20) == {}  # nesting too deep for the parser
    path.write_text('"a string"')
    assert fsutil.read_json_object(str(path), 100) == {}
    path.unlink()
    path.mkdir()
    assert fsutil.read_json_object(str(path), 100) == {}  # no regular file
    link = tmp_path / "link.json"
    target = tmp_path / "target.json"
    target.write_text('{"b": 1}')
    link.symlink_to(target)
    assert fsutil.read_json_object(str(link), 100) == {}
    assert fsutil.read_json_object(str(link), 100, follow=True) == {"b": 1}


WRITES = {
    "atomic_write": lambda path: fsutil.atomic_write(path, "new"),
    "create_exclusive": lambda path: fsutil.create_exclusive(path, "new"),
    "append_text": lambda path: fsutil.append_text(path, "new"),
    "append_line": lambda path: fsutil.append_line(path, "new"),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_no_write_helper_writes_into_a_folder_that_is_a_link(tmp_path: Path, write) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "board").symlink_to(elsewhere)  # swapped in for a session's folder

    with pytest.raises(BlackboardError, match=r"board is a symbolic link"):
        write(str(tmp_path / "board" / "session-notes.md"))
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_no_write_helper_writes_through_or_over_a_file_that_is_a_link(tmp_path: Path, write) -> None:
    target = tmp_path / "target"
    target.write_text("kept")
    (tmp_path / "session-notes.md").symlink_to(target)

    with pytest.raises(BlackboardError, match=r"session-notes.md is a symbolic link"):
        write(str(tmp_path / "session-notes.md"))
    assert target.read_text() == "kept"
    assert (tmp_path / "session-notes.md").is_symlink()


def test_make_dirs_refuses_a_link_where_the_folder_should_be_but_not_above_it(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked-home").symlink_to(real)  # a home whose .claude links to a dotfiles checkout
    fsutil.make_dirs(str(tmp_path / "linked-home" / "root" / "sessions"))
    assert (real / "root" / "sessions").is_dir()

    with pytest.raises(BlackboardError, match="symbolic link"):
        fsutil.make_dirs(str(tmp_path / "linked-home"))


@pytest.mark.parametrize("size", [0, 1, fsutil.READ_CHUNK - 1, fsutil.READ_CHUNK, fsutil.READ_CHUNK + 1, 200_001])
@pytest.mark.parametrize("bound", [1, fsutil.READ_CHUNK, fsutil.READ_CHUNK + 7, 150_000, 1 << 20])
def test_a_bounded_read_gives_the_files_start_up_to_its_bound(tmp_path: Path, size: int, bound: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    assert fsutil.read_bounded(str(tmp_path / "f"), bound) == data[:bound]
