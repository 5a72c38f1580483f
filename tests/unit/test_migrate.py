import hashlib
import json
import os
from pathlib import Path

from blackboard import handoff, migrate
from blackboard.paths import PathResolver
from helpers import settings_now

OLD_NOTES = (
    "# Session notes\n\n---\n**Session:** old-1\n**Time:** 2026-01-01T00:00:00Z\n\nfirst entry\n\n"
    "---\n**Session:** old-2\n**Time:** 2026-02-01T00:00:00Z\n\nnewest entry\n\n"
)


def _where(resolver: PathResolver) -> tuple:
    """The session's folder and the (test's) home: where a mnemonic store would be looked for."""
    return resolver.project.toplevel or os.getcwd(), os.environ["HOME"]


def _legacy(resolver: PathResolver) -> dict:
    board = Path(resolver.project_dir)
    board.mkdir(parents=True, exist_ok=True)
    files = {
        "session-notes.md": OLD_NOTES.encode(),
        "active-tasks.md": b"- [ ] ship it\n",
        "shared-context.md": b"binary \xff\xfe bytes kept as they are\n",
        "blockers.md": b"custom topic\n",
    }
    for name, data in files.items():
        (board / name).write_bytes(data)
    (board / "notes.txt").write_text("not markdown, not ours to move")
    return files


def test_migration_moves_every_file_byte_for_byte_with_a_manifest(resolver: PathResolver) -> None:
    files = _legacy(resolver)
    moved = migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    assert sorted(os.path.basename(m.source) for m in moved) == sorted(files)
    legacy = Path(resolver.get_legacy_dir())
    for name, data in files.items():
        assert (legacy / name).read_bytes() == data
        assert not (Path(resolver.project_dir) / name).exists()
    assert (Path(resolver.project_dir) / "notes.txt").exists()
    manifest = json.loads((legacy / "_migration.json").read_text())
    (run,) = manifest["migrations"]
    recorded = {r["file"]: r for r in run["files"]}
    for name, data in files.items():
        assert recorded[name]["size"] == len(data)
        assert recorded[name]["sha256"] == hashlib.sha256(data).hexdigest()


def test_migration_happens_once(resolver: PathResolver) -> None:
    _legacy(resolver)
    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ) == []
    manifest = json.loads((Path(resolver.get_legacy_dir()) / "_migration.json").read_text())
    assert len(manifest["migrations"]) == 1


def test_newer_flat_files_never_overwrite_migrated_ones(resolver: PathResolver) -> None:
    _legacy(resolver)
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    (Path(resolver.project_dir) / "active-tasks.md").write_text("written later by an old plugin\n")
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    legacy = Path(resolver.get_legacy_dir())
    assert (legacy / "active-tasks.md").read_text() == "- [ ] ship it\n"
    assert (legacy / "active-tasks.2.md").read_text() == "written later by an old plugin\n"


def test_dry_run_plan_moves_nothing(resolver: PathResolver) -> None:
    files = _legacy(resolver)
    planned = migrate.plan(resolver, *_where(resolver), os.environ)
    assert sorted(os.path.basename(p.destination) for p in planned) == sorted(files)
    assert all((Path(resolver.project_dir) / name).exists() for name in files)


def test_newest_legacy_note_seeds_the_latest_handoff(resolver: PathResolver) -> None:
    _legacy(resolver)
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "old-2"
    assert fields["ended"] == "2026-02-01T00:00:00Z"
    assert "newest entry" in body
    assert "first entry" not in body


def test_an_existing_handoff_is_not_replaced_by_the_seed(resolver: PathResolver) -> None:
    fields = {"session_id": "real", "ended": "2026-11-01T00:00:00Z"}
    handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + "real body\n")
    _legacy(resolver)
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "real"


def test_global_flat_files_move_to_the_global_legacy_dir_and_seed_nothing(resolver: PathResolver) -> None:
    global_board = Path(resolver.legacy_locations()[1][0])
    global_board.mkdir(parents=True)
    (global_board / "session-notes.md").write_text(OLD_NOTES)
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    assert (global_board / "_legacy" / "session-notes.md").read_text() == OLD_NOTES
    assert not os.path.exists(resolver.latest_handoff_path())


def test_symlinked_flat_files_are_left_alone(resolver: PathResolver, tmp_path: Path) -> None:
    Path(resolver.project_dir).mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text("not ours")
    (Path(resolver.project_dir) / "link.md").symlink_to(outside)
    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ) == []
    assert outside.read_text() == "not ours"


def test_non_iso_legacy_times_count_as_oldest(resolver: PathResolver) -> None:
    notes = (
        "---\n**Session:** iso\n**Time:** 2026-02-01T00:00:00Z\n\nthe newest\n\n"
        "---\n**Session:** odd\n**Time:** Mon Nov 2 09:05 2026\n\nnot a timestamp\n"
    )
    Path(resolver.project_dir).mkdir(parents=True)
    (Path(resolver.project_dir) / "session-notes.md").write_text(notes)
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "iso"
    assert fields["ended"] == "2026-02-01T00:00:00Z"
    assert "the newest" in body


def test_a_seed_without_a_time_has_no_ended_and_loses_to_any_session(resolver: PathResolver) -> None:
    Path(resolver.project_dir).mkdir(parents=True)
    (Path(resolver.project_dir) / "session-notes.md").write_text("just some old text\n")
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["ended"] is None
    real = {"session_id": "real", "ended": "2026-01-01T00:00:00Z"}
    assert handoff.publish_latest(resolver, handoff.dump_front_matter(real) + "body\n")


def _former_board_with_a_handoff(root: Path, session_id: str, cwd: Path) -> PathResolver:
    """``acme/widget``, as a GitLab checkout was named before hosts counted, with one ended session."""
    from blackboard import board, session
    from blackboard.project import Project

    former = PathResolver(str(root), Project("acme", "widget", "main", "before ADR 18"))
    session.start(former, session_id, "startup", {"cwd": str(cwd)}, settings_now())
    board.Board(former, session_id).note("the gitlab port is half done", "main")
    session.end(former, session_id, "other", settings_now())
    return former


def _gitlab_checkout(path: Path, root: Path) -> PathResolver:
    from blackboard.project import identify_project
    from helpers import make_git_project

    checkout = make_git_project(path, remote="git@gitlab.com:acme/widget.git")
    return PathResolver(str(root), identify_project(str(checkout)))


def test_a_renamed_project_takes_its_former_handoff_when_it_came_from_this_checkout(tmp_path: Path, root: Path) -> None:
    resolver = _gitlab_checkout(tmp_path / "widget", root)
    assert (resolver.project.org, resolver.project.name) == ("gitlab.com+acme", "widget")
    former = _former_board_with_a_handoff(root, "old-1", tmp_path / "widget" / "src")
    before = sorted(p.relative_to(former.project_dir) for p in Path(former.project_dir).rglob("*"))

    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)

    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "old-1"
    assert fields["carried_over_from"] == "acme/widget"
    assert "the gitlab port is half done" in body
    after = sorted(p.relative_to(former.project_dir) for p in Path(former.project_dir).rglob("*"))
    assert after == before  # the former board stays where it is


def test_a_former_handoff_from_another_checkout_stays_behind(tmp_path: Path, root: Path) -> None:
    """The GitHub checkout of acme/widget wrote it: the GitLab one must not see it."""
    resolver = _gitlab_checkout(tmp_path / "widget", root)
    elsewhere = tmp_path / "github-widget"
    elsewhere.mkdir()
    _former_board_with_a_handoff(root, "gh-1", elsewhere)

    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)

    assert not os.path.exists(resolver.latest_handoff_path())


def test_a_former_handoff_is_carried_over_only_to_a_new_board(tmp_path: Path, root: Path) -> None:
    resolver = _gitlab_checkout(tmp_path / "widget", root)
    Path(resolver.sessions_dir).mkdir(parents=True)  # the new board already exists
    _former_board_with_a_handoff(root, "old-1", tmp_path / "widget")

    assert migrate.carry_over_former_handoff(resolver) is False
    assert not os.path.exists(resolver.latest_handoff_path())


# --- files a repository ships are its own (ADR 24) --------------------------------------------------------------


def _board_in_a_checkout(tmp_path: Path) -> PathResolver:
    """A root holding checkouts (``BLACKBOARD_ROOT=~/src``): acme/widget's board is its checkout's ``.blackboard``."""
    from blackboard.project import identify_project
    from helpers import make_git_project

    root = tmp_path / "src"
    checkout = make_git_project(root / "acme" / "widget")
    return PathResolver(str(root), identify_project(str(checkout)))


def _commit(resolver: PathResolver, *names: str) -> None:
    """Commit flat files of the board, as the repository's author did before the user cloned it."""
    import subprocess

    checkout = str(resolver.project.toplevel)
    identity = ["-c", "user.name=Else", "-c", "user.email=else@example.invalid", "-c", "commit.gpgsign=false"]
    paths = [os.path.join(resolver.project_dir, name) for name in names]
    subprocess.run(["git", "-C", checkout, "add", "--", *paths], check=True)
    subprocess.run(["git", "-C", checkout, *identity, "commit", "-q", "-m", "ship the board"], check=True)


def test_flat_files_git_tracks_stay_where_they_are_and_seed_no_handoff(tmp_path: Path) -> None:
    resolver = _board_in_a_checkout(tmp_path)
    files = _legacy(resolver)
    _commit(resolver, "session-notes.md", "active-tasks.md")

    moved = migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)

    assert sorted(os.path.basename(m.source) for m in moved) == ["blockers.md", "shared-context.md"]  # the user's
    board = Path(resolver.project_dir)
    for name in ("session-notes.md", "active-tasks.md"):
        assert (board / name).read_bytes() == files[name]  # the repository's, untouched
        assert not (board / "_legacy" / name).exists()
    assert not os.path.exists(resolver.latest_handoff_path())
    (run,) = json.loads((board / "_legacy" / "_migration.json").read_text())["migrations"]
    assert sorted(r["file"] for r in run["files"] if "left" in r) == ["active-tasks.md", "session-notes.md"]


def test_untracked_flat_files_in_a_checkout_are_the_users_and_seed_as_before(tmp_path: Path) -> None:
    resolver = _board_in_a_checkout(tmp_path)
    _legacy(resolver)
    assert len(migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)) == 4
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "old-2"
    assert "newest entry" in body


def test_files_left_in_place_cost_no_git_until_they_change(tmp_path: Path, monkeypatch) -> None:
    resolver = _board_in_a_checkout(tmp_path)
    notes = Path(resolver.project_dir, "session-notes.md")
    notes.parent.mkdir(parents=True)
    notes.write_text(OLD_NOTES)
    _commit(resolver, "session-notes.md")
    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ) == []
    asked = []
    real = migrate.git_tracks
    monkeypatch.setattr(migrate, "git_tracks", lambda paths, *a: asked.append(paths) or real(paths, *a))

    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ) == []
    assert migrate.plan(resolver, *_where(resolver), os.environ) == []
    assert not any(asked)  # nothing to ask git about: the manifest says the file was left, and it has not changed

    os.utime(notes, (1, 1))  # checked out again, say
    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ) == []
    assert asked[-1] == [str(notes)]
    assert notes.read_text() == OLD_NOTES


def test_while_git_cannot_say_nothing_moves_and_the_next_start_asks_again(tmp_path: Path, monkeypatch) -> None:
    resolver = _board_in_a_checkout(tmp_path)
    files = _legacy(resolver)
    real = migrate.git_tracks
    monkeypatch.setattr(migrate, "git_tracks", lambda *a: None)

    assert migrate.migrate_if_needed(resolver, *_where(resolver), os.environ) == []
    assert migrate.plan(resolver, *_where(resolver), os.environ) == []
    assert all(Path(resolver.project_dir, name).read_bytes() == data for name, data in files.items())
    assert not os.path.exists(resolver.latest_handoff_path())
    assert not os.path.exists(os.path.join(resolver.get_legacy_dir(), "_migration.json"))

    monkeypatch.setattr(migrate, "git_tracks", real)
    assert len(migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)) == 4


def test_dry_run_lists_only_the_users_files(tmp_path: Path) -> None:
    resolver = _board_in_a_checkout(tmp_path)
    _legacy(resolver)
    _commit(resolver, "session-notes.md")
    planned = migrate.plan(resolver, *_where(resolver), os.environ)
    planned_names = sorted(os.path.basename(p.source) for p in planned)
    assert planned_names == ["active-tasks.md", "blockers.md", "shared-context.md"]


# --- boards kept under a former local id (issue 37, points 5 and 6; ADR 31) ---------------------------------------


def _worktree(tmp_path: Path) -> tuple[Path, Path]:
    """``widget`` without a remote, one commit, and ``git worktree add ../widget-review``."""
    import subprocess

    from helpers import make_git_project

    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    repo = make_git_project(tmp_path / "widget", remote=None)
    subprocess.run(["git", "-C", str(repo), *identity, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    review = tmp_path / "widget-review"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(review)], check=True, capture_output=True)
    return repo, review


def _board_of(root: Path, cwd: Path) -> PathResolver:
    from blackboard.project import identify_project

    return PathResolver(str(root), identify_project(str(cwd)))


def _former_board(root: Path, way_in: Path, session_id: str, note: str) -> PathResolver:
    """The board ``way_in`` had before ADR 31, with one ended session: its handoffs, marker and a claim."""
    from blackboard import board, session
    from blackboard.project import Project, former_local_name

    former = PathResolver(str(root), Project("local", former_local_name(str(way_in)), None, "before ADR 31"))
    session.start(former, session_id, "startup", {"cwd": str(way_in)}, settings_now())
    board.Board(former, session_id).note(note, "main")
    session.end(former, session_id, "other", settings_now())
    Path(former.claims_dir).mkdir(parents=True, exist_ok=True)
    Path(former.claim_path(f"{session_id}/t1")).write_text('{"holder": "x"}\n')
    Path(former.get_legacy_dir()).mkdir(parents=True, exist_ok=True)
    (Path(former.get_legacy_dir()) / "session-notes.md").write_bytes(b"old flat notes \xff\n")
    return former


def _files(folder: str) -> dict:
    """Every file under ``folder``: its path from there and its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


def test_a_worktrees_former_board_moves_into_the_repositorys_board_losing_nothing(tmp_path: Path, root: Path) -> None:
    repo, review = _worktree(tmp_path)
    former = _former_board(root, review, "old-review", "the review is half done")
    before = _files(former.project_dir)
    resolver = _board_of(root, review)
    assert resolver.project_dir != former.project_dir

    migrate.migrate_if_needed(resolver, str(review), os.environ["HOME"], os.environ)

    assert not os.path.lexists(os.path.dirname(former.project_dir))  # the former board is gone, folder and all
    after = _files(resolver.project_dir)
    aside = f"_legacy/board-{former.project.name}/"
    for relative, data in before.items():
        if relative.split("/")[0] in migrate.MERGED_PARTS:
            assert after.get(relative) == data, relative  # in its own place, byte for byte
        else:
            assert after.get(aside + relative) == data, relative  # the rest kept aside, byte for byte
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "old-review" and "the review is half done" in body
    assert _board_of(root, repo).project_dir == resolver.project_dir  # the main checkout sees it too
    (run,) = [r for r in json.loads(read_manifest(resolver))["migrations"] if r.get("board")]
    assert run["source"] == former.project_dir
    assert {r["file"] for r in run["files"]} >= {"sessions/old-review", "handoff/latest-handoff.md", "_legacy"}


def read_manifest(resolver: PathResolver) -> str:
    return (Path(resolver.get_legacy_dir()) / migrate.MANIFEST).read_text()


def test_a_former_board_moves_once_as_the_dry_run_said(tmp_path: Path, root: Path) -> None:
    _, review = _worktree(tmp_path)
    former = _former_board(root, review, "old-review", "first")
    resolver = _board_of(root, review)
    planned = migrate.plan(resolver, str(review), os.environ["HOME"], os.environ)
    assert os.path.isdir(former.project_dir)  # a dry run moves nothing
    moved = migrate.move_former_boards(resolver, str(review))
    assert [(m.source, m.destination, m.size) for m in moved] == [(m.source, m.destination, m.size) for m in planned]
    assert os.path.join(former.sessions_dir, "old-review") in {m.source for m in moved}
    assert migrate.move_former_boards(resolver, str(review)) == []
    assert migrate.plan(resolver, str(review), os.environ["HOME"], os.environ) == []
    assert len(json.loads(read_manifest(resolver))["migrations"]) == 1


def test_what_the_board_has_already_is_kept_and_the_newer_handoff_stays_latest(tmp_path: Path, root: Path) -> None:
    """The repository's board and a worktree's former one both hold session s-1 and a latest handoff."""
    from blackboard import board, session

    repo, review = _worktree(tmp_path)
    resolver = _board_of(root, repo)
    session.start(resolver, "s-1", "startup", {"cwd": str(repo)}, settings_now())
    board.Board(resolver, "s-1").note("written in the main checkout", "main")
    session.end(resolver, "s-1", "other", settings_now())
    own = _files(resolver.sessions_dir)
    former = _former_board(root, review, "s-1", "written in the worktree, later")
    theirs = _files(former.sessions_dir)
    latest = Path(former.latest_handoff_path()).read_bytes()

    migrate.move_former_boards(_board_of(root, review), str(review))

    assert _files(resolver.sessions_dir) == own  # nothing of this board replaced
    aside = Path(resolver.get_legacy_dir()) / f"board-{former.project.name}"
    assert _files(str(aside / "sessions")) == theirs
    assert (aside / "handoff" / "latest-handoff.md").read_bytes() == latest
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert "written in the worktree, later" in body  # the newer of the two is the latest


def test_a_link_to_a_folder_outside_git_brings_its_board_to_the_real_folders(tmp_path: Path, root: Path) -> None:
    (tmp_path / "notes").mkdir()
    current = tmp_path / "current"
    current.symlink_to(tmp_path / "notes")
    former = _former_board(root, current, "via-link", "came in through the link")
    resolver = _board_of(root, current)
    assert former.project.name.startswith("current-") and resolver.project.name.startswith("notes-")

    migrate.migrate_if_needed(resolver, str(current), os.environ["HOME"], os.environ)

    assert os.path.isfile(resolver.meta_path("via-link"))
    assert not os.path.lexists(former.project_dir)


def test_a_project_named_after_its_remote_takes_no_local_board(tmp_path: Path, root: Path) -> None:
    from helpers import make_git_project

    checkout = make_git_project(tmp_path / "widget")
    (tmp_path / "current").symlink_to(checkout)
    former = _former_board(root, tmp_path / "current", "local-1", "a local board")
    resolver = _board_of(root, tmp_path / "current")
    assert migrate.move_former_boards(resolver, str(tmp_path / "current")) == []
    assert os.path.isfile(former.meta_path("local-1"))


def test_a_start_in_the_main_checkout_brings_every_worktrees_former_board(tmp_path: Path, root: Path) -> None:
    repo, review = _worktree(tmp_path)
    former = _former_board(root, review, "old-review", "the review is half done")
    resolver = _board_of(root, repo)

    migrate.migrate_if_needed(resolver, str(repo), os.environ["HOME"], os.environ)

    assert os.path.isfile(resolver.meta_path("old-review"))
    assert not os.path.lexists(former.project_dir)


def test_a_worktree_the_repository_lists_but_that_is_another_folder_now_keeps_its_board(
    tmp_path: Path, root: Path
) -> None:
    """``.git/worktrees/x/gitdir`` may name any folder: only one whose ``.git`` leads back here is this project's."""
    repo, _ = _worktree(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    listed = Path(repo / ".git" / "worktrees" / "elsewhere")
    listed.mkdir()
    (listed / "gitdir").write_text(f"{notes}/.git\n")
    theirs = _former_board(root, notes, "notes-1", "notes of a folder outside git")
    assert _board_of(root, notes).project_dir == theirs.project_dir  # that folder's board today

    migrate.migrate_if_needed(_board_of(root, repo), str(repo), os.environ["HOME"], os.environ)

    assert os.path.isfile(theirs.meta_path("notes-1"))
