import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import pytest

from blackboard import board, cleanup, registry, session
from blackboard.meta import read_meta, update_meta
from blackboard.paths import PathResolver
from helpers import REPO, run_cli, settings_now

DAY = 86400


def _iso(days_ago: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _session(resolver: PathResolver, session_id: str, status: str, days_ago: float) -> None:
    quiet = settings_now(BLACKBOARD_DIGEST="0")  # what git says of the checkout is no concern of cleanup's
    session.start(resolver, session_id, "startup", {}, quiet)
    board.Board(resolver, session_id).note("some work", "main")
    if status != "active":
        session.end(resolver, session_id, "other", quiet)
    update_meta(
        resolver.meta_path(session_id),
        lambda m: m.update({"status": status, "ended": _iso(days_ago), "last_activity": _iso(days_ago)}),
    )


def _ids(candidates) -> list:
    return sorted(c.session_id for c in candidates)


def test_age_and_status_rules(resolver: PathResolver) -> None:
    _session(resolver, "old-ended", "ended", 40)
    _session(resolver, "old-abandoned", "abandoned", 40)
    _session(resolver, "young-ended", "ended", 5)
    _session(resolver, "old-active", "active", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == ["old-abandoned", "old-ended"]


def test_keep_the_newest_n_finished_sessions(resolver: PathResolver) -> None:
    for i in range(6):
        _session(resolver, f"s{i}", "ended", 40 + i)  # s0 is the newest
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=2)
    assert _ids(doomed) == ["s2", "s3", "s4", "s5"]


def test_remove_deletes_sessions_and_their_handoffs_but_not_the_latest(resolver: PathResolver) -> None:
    _session(resolver, "gone", "ended", 40)
    _session(resolver, "kept", "ended", 1)
    latest_before = Path(resolver.latest_handoff_path()).read_text()
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(cleanup.remove(doomed).removed) == ["gone"]
    assert not os.path.exists(resolver.get_session_blackboard_dir("gone"))
    assert not os.path.exists(resolver.handoff_path("gone"))
    assert os.path.exists(resolver.handoff_path("kept"))
    assert Path(resolver.latest_handoff_path()).read_text() == latest_before
    assert [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".")] == []


def _tree(directory: str) -> dict:
    return {p.name: p.read_bytes() for p in sorted(Path(directory).iterdir())}


def test_a_session_resumed_after_the_plan_is_left_untouched(resolver: PathResolver) -> None:
    _session(resolver, "s1", "ended", 40)
    _session(resolver, "s2", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    session.start(resolver, "s1", "resume", {}, settings_now())
    before = _tree(resolver.get_session_blackboard_dir("s1"))
    steps = []
    assert _ids(cleanup.remove(doomed, steps.append).removed) == ["s2"]
    assert _tree(resolver.get_session_blackboard_dir("s1")) == before
    assert os.path.exists(resolver.handoff_path("s1"))
    assert not os.path.exists(resolver.handoff_path("s2"))
    assert steps == [1, 1]  # the progress advances for the kept session too
    assert [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".")] == []


def test_each_result_goes_to_its_own_session_across_many_batches(
    resolver: PathResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cleanup, "CHUNK", 8)
    for i in range(30):  # several batches of cleanup.CHUNK, removed at the same time
        _session(resolver, f"s{i:03d}", "ended", 40)
        Path(resolver.get_session_blackboard_dir(f"s{i:03d}"), "extra.bin").write_bytes(b"x" * i)  # a size of its own
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    resumed = [f"s{i:03d}" for i in range(0, 30, 7)]
    for session_id in resumed:
        session.start(resolver, session_id, "resume", {}, settings_now())
    steps: list[int] = []
    removed, problems = cleanup.remove(doomed, steps.append)
    assert problems == []
    assert [(c.session_id, c.size) for c in removed] == [
        (c.session_id, c.size) for c in doomed if c.session_id not in resumed
    ]
    assert steps == [1] * 30
    assert sorted(os.listdir(resolver.sessions_dir)) == resumed


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fingerprint metadata written just now too, as if it were older than ``SETTLED_NS``."""
    monkeypatch.setattr(cleanup, "SETTLED_NS", 0)


def test_a_meta_rewritten_in_place_after_the_plan_is_noticed(resolver: PathResolver, settled: None) -> None:
    _session(resolver, "s1", "ended", 40)
    path = Path(resolver.meta_path("s1"))
    os.utime(path, (1e9, 1e9))  # times long past, so that the rewrite changes them
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert doomed[0].seen is not None
    inode, size = path.stat().st_ino, path.stat().st_size
    path.write_text(path.read_text().replace('"status": "ended"', '"status":"active"', 1))
    assert (path.stat().st_ino, path.stat().st_size) == (inode, size)  # only the times differ
    assert cleanup.remove(doomed).removed == []
    assert json.loads(path.read_text())["status"] == "active"


def test_a_meta_written_moments_ago_is_not_fingerprinted(resolver: PathResolver) -> None:
    _session(resolver, "s1", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert doomed[0].seen is None  # its inode and coarse times could come back with the next write


def test_an_unchanged_meta_is_trusted_without_reading_it_again(
    resolver: PathResolver, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    _session(resolver, "s1", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert doomed[0].seen is not None

    def read_again(path: str) -> None:
        raise AssertionError(f"read {path} again")

    monkeypatch.setattr(cleanup, "read_meta_or_none", read_again)
    assert _ids(cleanup.remove(doomed).removed) == ["s1"]


def test_a_session_swapped_for_a_symlink_after_the_plan_is_not_followed(resolver: PathResolver, tmp_path: Path) -> None:
    _session(resolver, "s1", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    moved = tmp_path / "elsewhere"
    os.rename(resolver.get_session_blackboard_dir("s1"), moved)
    os.symlink(moved, resolver.get_session_blackboard_dir("s1"))
    before = _tree(str(moved))
    assert cleanup.remove(doomed).removed == []
    assert _tree(str(moved)) == before
    assert os.path.islink(resolver.get_session_blackboard_dir("s1"))


def test_handoffs_are_not_pruned_through_a_handoff_folder_linked_outside_the_root(
    resolver: PathResolver, tmp_path: Path
) -> None:
    _session(resolver, "old", "ended", 40)
    outside = tmp_path / "outside-handoffs"
    os.rename(resolver.get_handoff_dir(), outside)
    os.symlink(outside, resolver.get_handoff_dir())
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(cleanup.remove(doomed).removed) == ["old"]
    assert (outside / "handoff-old.md").exists()


def test_a_session_left_set_aside_by_an_interrupted_cleanup_goes_next_time(resolver: PathResolver) -> None:
    _session(resolver, "old", "ended", 40)
    _session(resolver, "kept", "ended", 1)
    os.rename(resolver.get_session_blackboard_dir("old"), os.path.join(resolver.sessions_dir, ".removing-old-99"))
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert os.path.exists(resolver.handoff_path("old"))
    assert _ids(cleanup.remove(doomed).removed) == [".removing-old-99"]
    assert os.listdir(resolver.sessions_dir) == ["kept"]
    assert not os.path.exists(resolver.handoff_path("old"))
    assert os.path.exists(resolver.handoff_path("kept"))


def _racing_the_move(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[str], None], after: Callable[[str], None]
) -> None:
    """Run ``before(board)`` just before cleanup moves a board aside and ``after(board)`` just after.

    The moments between its two checks, where a hook can win the race only by a hair.
    """
    rename = os.rename

    def racing(source: str, destination: str) -> None:
        moving_aside = os.path.basename(destination).startswith(".removing-")
        if moving_aside:
            before(source)
        rename(source, destination)
        if moving_aside:
            after(source)

    monkeypatch.setattr(os, "rename", racing)


def test_a_session_resumed_just_before_it_is_moved_aside_is_put_back_whole(
    resolver: PathResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    _session(resolver, "s1", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    resumed: list[dict] = []

    def resume(board: str) -> None:
        session.start(resolver, "s1", "resume", {}, settings_now())
        resumed.append(_tree(board))

    _racing_the_move(monkeypatch, before=resume, after=lambda board: None)
    assert cleanup.remove(doomed) == ([], [])
    assert len(resumed) == 1  # the first check passed and the board was moved
    assert _tree(resolver.get_session_blackboard_dir("s1")) == resumed[0]
    assert read_meta(resolver.meta_path("s1"))["status"] == "active"  # type: ignore[index]
    assert os.path.exists(resolver.handoff_path("s1"))
    assert [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".")] == []


def test_a_board_that_cannot_be_put_back_is_kept_aside_whole_and_reported(
    resolver: PathResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    _session(resolver, "s1", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    resumed: list[dict] = []

    def resume(board: str) -> None:
        session.start(resolver, "s1", "resume", {}, settings_now())
        resumed.append(_tree(board))

    def lock_taken_on_the_resumed_board(board: str) -> None:
        os.mkdir(board)  # taking a lock makes the folder of its lock file
        Path(board, "_meta.json.lock").touch()

    _racing_the_move(monkeypatch, before=resume, after=lock_taken_on_the_resumed_board)
    removed, problems = cleanup.remove(doomed)
    [aside] = [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".removing-s1-")]
    assert removed == []
    assert len(problems) == 1
    assert problems[0].startswith("s1: resumed while being removed")
    assert aside in problems[0]
    assert _tree(os.path.join(resolver.sessions_dir, aside)) == resumed[0]
    assert os.path.exists(resolver.handoff_path("s1"))


def test_a_session_that_fails_to_delete_is_reported_and_taken_by_the_next_cleanup(
    resolver: PathResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("bad", "good"):
        _session(resolver, name, "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    unlink = os.unlink

    def refuse(path: str) -> None:  # a file left by a `sudo claude` session, say
        if f"{os.sep}.removing-bad-" in path and path.endswith("session-notes.md"):
            raise PermissionError(13, "Permission denied", path)
        unlink(path)

    monkeypatch.setattr(os, "unlink", refuse)
    removed, problems = cleanup.remove(doomed)
    assert _ids(removed) == ["good"]
    assert len(problems) == 1
    assert problems[0].startswith("bad: [Errno 13] Permission denied")
    [aside] = [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".removing-bad-")]
    assert os.path.exists(os.path.join(resolver.sessions_dir, aside, "_meta.json"))  # deleted last, so still known
    monkeypatch.setattr(os, "unlink", unlink)
    doomed, skipped = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == [aside]
    assert skipped == []
    assert _ids(cleanup.remove(doomed).removed) == [aside]
    assert os.listdir(resolver.sessions_dir) == []


NO_CHILDREN = """
import sys
sys.path.insert(0, sys.argv[1])

def no_children(event, args):
    if event in ("os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system", "subprocess.Popen"):
        print("refused", event, file=sys.stderr, flush=True)
        raise BlockingIOError(11, "Resource temporarily unavailable")

sys.addaudithook(no_children)
from blackboard.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("count", [pytest.param(3, id="a-few"), pytest.param(100, id="many")])
def test_cleanup_starts_no_process_and_works_where_none_can_be_started(
    resolver: PathResolver, project: Path, count: int
) -> None:
    """A sandbox at its process limit, say: every fork fails, and cleanup never needs one."""
    for i in range(count):
        _session(resolver, f"s{i:03d}", "ended", 40)
    argv = [sys.executable, "-c", NO_CHILDREN, str(REPO / "lib"), "cleanup", "--keep", "0", "--yes", "--json"]
    pipe = subprocess.PIPE
    with subprocess.Popen(argv, cwd=project, stdout=pipe, stderr=pipe, text=True, start_new_session=True) as proc:
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "refused" not in err
    assert len(json.loads(out)["sessions"]) == count
    assert os.listdir(resolver.sessions_dir) == []
    with pytest.raises(ProcessLookupError):  # nothing it started is left running in its process group
        os.killpg(proc.pid, 0)


def test_remove_reports_the_bytes_freed(resolver: PathResolver) -> None:
    _session(resolver, "old", "ended", 40)
    (Path(resolver.get_session_blackboard_dir("old")) / "extra").mkdir()
    (Path(resolver.get_session_blackboard_dir("old")) / "extra" / "data.bin").write_bytes(b"x" * 5000)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    measured = doomed[0].size
    assert measured > 5000
    assert [c.size for c in cleanup.remove(doomed).removed] == [measured]


def test_symlinks_are_never_followed(resolver: PathResolver, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    _session(resolver, "old", "ended", 40)
    os.symlink(outside, Path(resolver.get_session_blackboard_dir("old")) / "link-out")
    os.symlink(outside / "precious.txt", Path(resolver.get_session_blackboard_dir("old")) / "file-link")
    # a whole session directory that is a symlink to somewhere else
    (outside / "fake").mkdir()
    (outside / "fake" / "_meta.json").write_text(Path(resolver.meta_path("old")).read_text().replace('"old"', '"fake"'))
    os.symlink(outside / "fake", resolver.get_session_blackboard_dir("fake"))
    doomed, skipped = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == ["old"]
    assert "fake" in registry.strays(resolver)  # a link is no session: doctor names it, cleanup never enters it
    cleanup.remove(doomed)
    assert (outside / "precious.txt").read_text() == "keep me"
    assert (outside / "fake" / "_meta.json").exists()


def test_corrupt_sessions_are_reported_not_removed(resolver: PathResolver) -> None:
    _session(resolver, "ok", "ended", 40)
    broken = Path(resolver.get_session_blackboard_dir("broken"))
    broken.mkdir()
    (broken / "_meta.json").write_text("{")
    doomed, skipped = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == ["ok"]
    assert any("broken" in s for s in skipped)


@pytest.fixture
def in_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(project)
    return project


def _cli(*args: str, stdin: str = ""):
    return run_cli(*args, stdin=stdin)


def test_cli_dry_run_lists_and_removes_nothing(resolver: PathResolver, in_project: Path) -> None:
    _session(resolver, "old", "ended", 40)
    code, out, _ = _cli("cleanup", "--dry-run", "--keep", "0")
    assert code == 0
    assert "would remove acme/widget old" in out
    assert "would remove 1 sessions" in out
    assert os.path.exists(resolver.meta_path("old"))
    data = json.loads(_cli("cleanup", "--dry-run", "--keep", "0", "--json")[1])
    assert data["dry_run"] is True
    assert [s["session_id"] for s in data["sessions"]] == ["old"]
    assert data["bytes"] > 0


def test_cli_without_yes_and_without_a_terminal_only_previews(resolver: PathResolver, in_project: Path) -> None:
    _session(resolver, "old", "ended", 40)
    code, out, err = _cli("cleanup", "--keep", "0")
    assert code == 0
    assert "would remove" in out
    assert "--yes" in err
    assert os.path.exists(resolver.meta_path("old"))


def test_cli_yes_removes(resolver: PathResolver, in_project: Path) -> None:
    _session(resolver, "old", "ended", 40)
    code, out, _ = _cli("cleanup", "--keep", "0", "--yes")
    assert code == 0
    assert "removed 1 sessions" in out
    assert not os.path.exists(resolver.get_session_blackboard_dir("old"))


@pytest.mark.parametrize(("age", "expected"), [("30d", []), ("12h", ["old"]), ("2w", [])])
def test_cli_older_than(resolver: PathResolver, in_project: Path, age: str, expected: list) -> None:
    _session(resolver, "old", "ended", 1)
    data = json.loads(_cli("cleanup", "--older-than", age, "--keep", "0", "--dry-run", "--json")[1])
    assert [s["session_id"] for s in data["sessions"]] == expected


def test_cli_bad_age_is_one_line(in_project: Path) -> None:
    code, out, err = _cli("cleanup", "--older-than", "soon")
    assert code == 1
    assert "is not an age" in err
    assert err.count("\n") == 1


def test_cli_all_projects(resolver: PathResolver, root: Path, in_project: Path) -> None:
    from blackboard.project import Project

    other = PathResolver(str(root), Project("acme", "gadget", None, "test"))
    _session(resolver, "w-old", "ended", 40)
    _session(other, "g-old", "ended", 40)
    mine = json.loads(_cli("cleanup", "--keep", "0", "--dry-run", "--json")[1])
    every = json.loads(_cli("cleanup", "--keep", "0", "--dry-run", "--json", "--all-projects")[1])
    assert [s["session_id"] for s in mine["sessions"]] == ["w-old"]
    assert sorted(s["session_id"] for s in every["sessions"]) == ["g-old", "w-old"]
