from __future__ import annotations

import json
import multiprocessing
import os
import stat
import time
from pathlib import Path

from blackboard import board, doctor, registry, session
from blackboard.meta import read_meta
from blackboard.paths import PathResolver
from helpers import dead_pid, run_cli, settings_now


def _problems(root: Path, repair: bool = False, modes: bool = False) -> list:
    """Doctor's findings, but for the test's environment and (unless ``modes``) the modes of files the test made."""
    return [
        f
        for f in doctor.examine(settings_now(BLACKBOARD_ROOT=str(root)), repair)
        if "environment" not in f.problem
        and "running on" not in f.problem
        and (modes or "other users" not in f.problem)
    ]


def test_a_healthy_board_has_no_problems(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now(CLAUDE_PID=str(os.getpid())))
    session.start(resolver, "s2", "startup", {}, settings_now())
    session.end(resolver, "s2", "other", settings_now())
    assert _problems(root) == []


def test_corrupt_metadata_is_named_and_set_aside(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "bad", "startup", {}, settings_now())
    Path(resolver.meta_path("bad")).write_text("{torn")
    (finding,) = _problems(root)
    assert "session bad" in finding.problem
    assert "corrupt" in finding.problem
    assert not finding.fixed
    (fixed,) = _problems(root, repair=True)
    assert fixed.fixed
    aside = [n for n in os.listdir(resolver.get_session_blackboard_dir("bad")) if n.startswith("_meta.json.corrupt-")]
    assert len(aside) == 1
    assert (Path(resolver.get_session_blackboard_dir("bad")) / aside[0]).read_text() == "{torn"
    assert (read_meta(resolver.meta_path("bad")) or {})["status"] == "abandoned"
    assert _problems(root) == []


def test_a_session_stuck_active_is_abandoned_by_fix(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "stuck", "startup", {}, settings_now(CLAUDE_PID=str(dead_pid())))
    (finding,) = _problems(root)
    assert "stuck active" in finding.problem
    _problems(root, repair=True)
    assert (read_meta(resolver.meta_path("stuck")) or {})["status"] == "abandoned"


def test_an_unreadable_handoff_is_set_aside(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "other", settings_now())
    Path(resolver.handoff_path("s1")).write_text("---\n: [broken\n---\n")
    (finding,) = _problems(root)
    assert "front matter" in finding.problem
    _problems(root, repair=True)
    assert not os.path.exists(resolver.handoff_path("s1"))
    assert any(n.startswith("handoff-s1.md.corrupt-") for n in os.listdir(resolver.get_handoff_dir()))


def test_old_temp_files_are_reported_and_removed(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    temp = Path(resolver.get_session_blackboard_dir("s1")) / "._meta.json.123.abcd.tmp"
    temp.write_text("half")
    old = time.time() - 2 * 3600
    os.utime(temp, (old, old))
    (finding,) = _problems(root)
    assert "crashed write" in finding.problem
    _problems(root, repair=True)
    assert not temp.exists()


def test_cli_exit_status_and_json(resolver: PathResolver, root: Path, project: Path, monkeypatch) -> None:
    monkeypatch.chdir(project)
    session.start(resolver, "bad", "startup", {}, settings_now())
    Path(resolver.meta_path("bad")).write_text("[]")
    code, out, _ = run_cli("doctor", "--json")
    assert code == 1
    data = json.loads(out)
    assert any("session bad" in f["problem"] for f in data["findings"])


def test_the_environment_and_the_root_are_checked(tmp_path: Path) -> None:
    root_file = tmp_path / "root-is-a-file"
    root_file.write_text("x")
    # the tests run on the development environment, not one the plugin built from requirements.txt
    problems = [f.problem for f in doctor.examine(settings_now(BLACKBOARD_ROOT=str(root_file)), repair=False)]
    assert any("not a directory" in p for p in problems)
    assert any("not the plugin's environment" in p for p in problems)


def _hold(path: str, seconds: float) -> None:
    """Hold the lock until the test lets go (``_let_go``), at most ``seconds``."""
    from blackboard.locks import file_lock

    deadline = time.monotonic() + seconds
    with file_lock(path[: -len(".lock")]):
        while not os.path.exists(path + ".go") and time.monotonic() < deadline:
            time.sleep(0.01)


def _let_go(holder: multiprocessing.process.BaseProcess, lock: str) -> None:
    Path(lock + ".go").write_text("")
    holder.join(30)


def _start_holder(lock: str, since: float | None) -> multiprocessing.process.BaseProcess:
    """A process holding ``lock``; with ``since``, the file is stamped as if taken that long ago."""
    holder = multiprocessing.get_context("spawn").Process(target=_hold, args=(lock, 30.0))
    holder.start()
    deadline = time.time() + 20
    while not _held(lock):
        assert time.time() < deadline, "the holder never took the lock"
        time.sleep(0.05)
    if since is not None:
        os.utime(lock, (time.time() - since, time.time() - since))
    return holder


def _held(lock: str) -> bool:
    """Whether another process holds ``lock``, asked without stamping it as the library's lock does."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_a_lock_held_for_long_is_reported_but_never_removed(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    lock = resolver.meta_path("s1") + ".lock"
    holder = _start_holder(lock, since=3600)
    (finding,) = _problems(root, repair=True)
    assert f"{lock} has been held for 60 minutes" == finding.problem
    assert "fuser" in finding.fix
    assert not finding.fixed
    assert os.path.exists(lock)
    _let_go(holder, lock)
    assert _problems(root) == []  # released: an idle lock file is no problem


def test_an_old_lock_file_taken_just_now_is_no_problem(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    lock = resolver.meta_path("s1") + ".lock"
    Path(lock).touch()
    old = time.time() - 2 * 86400
    os.utime(lock, (old, old))  # created two days ago, when the session last wrote its metadata
    holder = _start_holder(lock, since=None)
    try:
        assert _problems(root) == []
    finally:
        _let_go(holder, lock)


def test_a_session_folder_without_metadata_is_reported(resolver: PathResolver, root: Path) -> None:
    Path(resolver.get_session_blackboard_dir("partial")).mkdir(parents=True)
    (finding,) = _problems(root)
    assert "partial" in finding.problem
    assert "no _meta.json" in finding.problem
    _problems(root, repair=True)
    assert (read_meta(resolver.meta_path("partial")) or {})["status"] == "abandoned"


def test_boards_a_cleanup_set_aside_are_reported_and_never_touched(resolver: PathResolver, root: Path) -> None:
    for name in ("resumed", "ended", "torn"):
        session.start(resolver, name, "startup", {}, settings_now(CLAUDE_PID=str(os.getpid())))
    session.end(resolver, "ended", "other", settings_now())
    aside = {name: os.path.join(resolver.sessions_dir, f".removing-{name}-42") for name in ("resumed", "ended", "torn")}
    for name, path in aside.items():
        os.rename(resolver.get_session_blackboard_dir(name), path)
    os.unlink(os.path.join(aside["torn"], "_meta.json"))
    os.mkdir(resolver.get_session_blackboard_dir("resumed"))  # what a lock on the resumed board leaves
    before = {path: sorted(os.listdir(path)) for path in aside.values()}
    findings = {f.problem: f.fix for f in _problems(root, repair=True) if ".removing-" in f.problem}
    assert findings == {
        f"{aside['resumed']} holds a session that resumed while a cleanup removed it": (
            f"compare it with {resolver.get_session_blackboard_dir('resumed')} "
            "and keep the board you want under that name"
        ),
        f"{aside['ended']} is left by an interrupted cleanup": "blackboard cleanup removes it",
        f"{aside['torn']} is left by an interrupted cleanup and has no readable _meta.json": (
            "look inside, then remove it by hand"
        ),
    }
    assert {path: sorted(os.listdir(path)) for path in aside.values()} == before


def test_stray_entries_are_named_once_and_set_aside(resolver: PathResolver, root: Path, tmp_path: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    sessions = Path(resolver.sessions_dir)
    litter = [".DS_Store", "Thumbs.db", "desktop.ini", "._s1"]  # what Finder and Explorer leave: no damage
    for name in litter:
        (sessions / name).write_bytes(b"\0\0\0\1Bud1")
    (sessions / "notes.txt").write_text("mine")
    (sessions / "my notes").mkdir()
    (sessions / "elsewhere").symlink_to(tmp_path)

    problems = [f.problem for f in _problems(root)]
    assert len([p for p in problems if "is not a session" in p]) == 3
    assert not any(name in p for p in problems for name in litter)
    assert len([p for p in problems if "elsewhere is a symbolic link" in p]) == 1
    assert [e.session_id for e in registry.list_sessions(resolver)] == ["s1"]

    assert all(f.fixed for f in _problems(root, repair=True))
    assert _problems(root) == []
    assert sorted(os.listdir(sessions)) == sorted(["s1", *litter])
    kept = Path(resolver.strays_dir)
    assert (kept / "notes.txt").read_text() == "mine"
    assert (kept / "elsewhere").is_symlink()
    assert tmp_path.exists()  # a link is moved, never followed


def test_an_unreadable_block_is_named_by_doctor_and_the_handoff(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    board.Board(resolver, "s1").add_task("fine", "main")
    tasks = Path(resolver.board_file("s1", "tasks"))
    tasks.write_text(tasks.read_text() + "\n## t2\nnot a field line\n\nlost?\n")

    problems = [f.problem for f in _problems(root)]
    assert any("unreadable block in active-tasks.md line" in p for p in problems), problems
    session.end(resolver, "s1", "other", settings_now())
    text = Path(resolver.handoff_path("s1")).read_text()
    assert "## Unreadable blocks" in text
    assert "active-tasks.md line" in text


def test_a_board_file_replaced_by_a_link_is_named_and_set_aside_and_its_target_kept(
    resolver: PathResolver, root: Path, tmp_path: Path
) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    board.Board(resolver, "s1").note("hi", "main")
    target = tmp_path / "elsewhere.md"
    target.write_text("not the board's")
    notes = Path(resolver.board_file("s1", "notes"))
    notes.unlink()
    notes.symlink_to(target)

    problems = [f.problem for f in _problems(root)]
    assert problems == [f"{notes} is a symbolic link; nothing is read or written through one"]

    assert all(f.fixed for f in _problems(root, repair=True))
    assert _problems(root) == []
    assert not os.path.lexists(notes) and target.read_text() == "not the board's"
    assert (Path(resolver.strays_dir) / "s1-session-notes.md").is_symlink()


def test_files_and_folders_other_users_can_read_are_named_and_tightened(resolver: PathResolver, root: Path) -> None:
    """Boards an older version wrote under the umask (0644, 0755) are named once, and --fix makes them private."""
    session.start(resolver, "s1", "startup", {}, settings_now())
    board.Board(resolver, "s1").note("a private finding", "main")
    notes = Path(resolver.board_file("s1", "notes"))
    notes.chmod(0o644)
    Path(resolver.sessions_dir).chmod(0o755)

    (finding,) = [f for f in _problems(root, modes=True) if "other users" in f.problem]
    assert "2 file(s) and folder(s)" in finding.problem and "mode 0" in finding.problem
    assert not finding.fixed

    (fixed,) = [f for f in _problems(root, repair=True, modes=True) if "other users" in f.problem]
    assert fixed.fixed
    assert stat.S_IMODE(notes.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(resolver.sessions_dir).stat().st_mode) == 0o700
    assert not [f for f in _problems(root, modes=True) if "other users" in f.problem]
    assert "a private finding" in notes.read_text()


def test_a_hard_link_out_of_the_root_keeps_its_mode(resolver: PathResolver, root: Path, tmp_path: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's")
    outside.chmod(0o644)
    os.link(outside, Path(resolver.get_session_blackboard_dir("s1")) / "linked.txt")
    (finding,) = [f for f in _problems(root, repair=True, modes=True) if "other users" in f.problem]
    assert not finding.fixed
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


# --- issue 32, points 6 to 8 -----------------------------------------------------------------------


def test_doctor_looks_at_this_project_only_unless_asked_for_every_one(
    resolver: PathResolver, root: Path, project: Path, tmp_path: Path, monkeypatch
) -> None:
    from blackboard.project import identify_project
    from helpers import make_git_project

    gadget = PathResolver(
        str(root), identify_project(str(make_git_project(tmp_path / "gadget", remote="git@github.com:acme/gadget.git")))
    )
    session.start(gadget, "gadget-secret-session", "startup", {}, settings_now())
    Path(gadget.board_file("gadget-secret-session", "notes")).write_text(
        "## n1\n- broken line that is no field\nsalary of bob\n"
    )
    Path(gadget.meta_path("gadget-secret-session")).write_text("{torn")
    session.start(resolver, "s1", "startup", {}, settings_now())
    monkeypatch.chdir(project)
    code, out, _ = run_cli("doctor", env={"BLACKBOARD_ROOT": str(root)})
    assert "gadget" not in out and "salary" not in out
    code, out, _ = run_cli("doctor", "--all-projects", env={"BLACKBOARD_ROOT": str(root)})
    assert code == 1 and "gadget-secret-session" in out


def test_doctor_never_follows_a_linked_handoff_folder_out_of_the_root(
    resolver: PathResolver, root: Path, tmp_path: Path
) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    outside = tmp_path / "persons-own-files"
    outside.mkdir()
    (outside / "salary-review.md").write_text("private\n")
    handoffs = Path(resolver.get_handoff_dir())
    for child in handoffs.iterdir():
        child.unlink()
    handoffs.rmdir()
    handoffs.symlink_to(outside)
    findings = _problems(root, repair=True)
    assert sorted(p.name for p in outside.iterdir()) == ["salary-review.md"]  # nothing renamed, read or written there
    assert any("symbolic link" in f.problem and "handoff" in f.problem for f in findings)


def test_doctor_reports_everything_it_can_past_what_it_cannot_read(resolver: PathResolver, root: Path) -> None:
    for name in ("fifo", "fine", "torn"):
        session.start(resolver, name, "startup", {}, settings_now())
    notes = Path(resolver.board_file("fifo", "notes"))
    notes.unlink()
    os.mkfifo(notes)
    Path(resolver.meta_path("torn")).write_text("{torn")
    findings = _problems(root, repair=True)  # and it returns: no FIFO is waited on
    assert any("session torn" in f.problem for f in findings)
    assert any("fifo" in f.problem for f in findings)


def test_a_tree_a_thousand_folders_deep_is_walked_without_a_recursion_error(resolver: PathResolver, root: Path) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    deep = Path(resolver.project_dir) / "deep"
    path = str(deep)
    os.mkdir(path)
    for _ in range(1200):  # one at a time: os.makedirs itself recurses
        path = os.path.join(path, "d")
        os.mkdir(path)
    (Path(path) / ".x.tmp").write_text("")
    old = time.time() - 7200
    os.utime(Path(path) / ".x.tmp", (old, old))
    try:
        findings = _problems(root)
        assert any("crashed write" in f.problem for f in findings)
    finally:  # one folder at a time: shutil.rmtree, and so pytest's own clean-up, recurses
        os.unlink(Path(path) / ".x.tmp")
        while path != str(deep.parent):
            os.rmdir(path)
            path = os.path.dirname(path)


def test_a_file_name_with_a_line_break_cannot_forge_a_line_of_the_report(
    resolver: PathResolver, root: Path, project: Path, monkeypatch
) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    forged = Path(resolver.sessions_dir) / "x\nfixed: everything is fine\n  fix: nothing"
    forged.write_text("")
    monkeypatch.chdir(project)
    code, out, _ = run_cli("doctor", env={"BLACKBOARD_ROOT": str(root)})
    assert code == 1
    assert not any(line.startswith("fixed: everything") for line in out.splitlines())
    assert "\\nfixed: everything is fine" in out
