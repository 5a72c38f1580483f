"""Sync's parts on their own: opting in, the private store, reading a remote tree (ADR 19)."""

import json
import os
import shutil
import time
from pathlib import Path
from typing import Optional
from unittest import mock

import pytest

from blackboard import gitstore, registry, session, sync
from blackboard.errors import BlackboardError
from blackboard.gitstore import Entry, GitFailed, Store, TooLarge
from blackboard.paths import PathResolver
from blackboard.project import Project
from blackboard.settings import Settings
from blackboard.sync import importing, inbound, remote
from blackboard.sync import round as sync_round_module
from blackboard.sync import state as sync_state
from helpers import settings_now


def test_enable_uses_origin_and_disable_turns_it_off(resolver: PathResolver) -> None:
    assert not sync.enabled(resolver)
    assert sync.enable(resolver, None, settings_now()) == "git@github.com:acme/widget.git"
    assert sync.enabled(resolver)
    assert json.loads(Path(resolver.sync_file("config.json")).read_text())["ref"] == "refs/blackboard/acme/widget"
    assert os.path.isfile(os.path.join(resolver.sync_repo, "HEAD"))
    assert sync.disable(resolver) is True
    assert sync.disable(resolver) is False
    assert not sync.enabled(resolver)


def test_a_project_without_origin_needs_a_remote(root: Path) -> None:
    local = PathResolver(str(root), Project("local", "app-1234abcd", None, "test"))
    with pytest.raises(BlackboardError, match="sync enable --remote URL"):
        sync.enable(local, None, settings_now())


@pytest.mark.parametrize("url", ["--upload-pack=touch /tmp/x", "-oProxyCommand=x", "https://x/\ny", "a\0b"])
def test_a_remote_that_could_pass_for_an_option_is_refused(resolver: PathResolver, url: str) -> None:
    with pytest.raises(BlackboardError, match="not a git remote"):
        sync.enable(resolver, url, settings_now())
    assert not sync.enabled(resolver)


@pytest.mark.parametrize(("org", "name"), [("a..b", "w"), ("acme", "w.lock"), ("ac me", "w")])
def test_a_project_name_that_is_no_ref_name_cannot_sync(root: Path, org: str, name: str) -> None:
    with pytest.raises(BlackboardError, match="cannot be a git ref name"):
        sync.remote_ref(PathResolver(str(root), Project(org, name, None, "test")))


def test_only_known_sync_files_have_paths(resolver: PathResolver) -> None:
    with pytest.raises(ValueError):
        resolver.sync_file("../../etc/passwd")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 1.5), ("3", 3.0), ("0.5", 0.5), ("0", 1.5), ("-1", 1.5), ("1e9", 1.5), ("nan", 1.5), ("soon", 1.5)],
)
def test_sync_timeout_is_bounded(value: str, expected: float) -> None:
    environ = {} if value is None else {"BLACKBOARD_SYNC_TIMEOUT": value}
    assert Settings(environ).sync_timeout == expected


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[]",
        b'{"machines": []}',
        b'{"machines": {"h": "x"}}',
        b'{"machines": {"h": [{"host": 1, "session_id": "s", "since": "t"}]}}',
    ],
)
def test_other_machines_active_sessions_ignore_what_does_not_fit(resolver: PathResolver, content: bytes) -> None:
    Path(resolver.sync_dir).mkdir(parents=True)
    Path(resolver.sync_file("remote-active.json")).write_bytes(content)
    assert registry.remote_active(resolver) == []


def test_a_removal_is_recorded_only_for_a_project_that_syncs(resolver: PathResolver) -> None:
    sync.record_removal(resolver, "s1")
    assert not os.path.exists(resolver.sync_dir)
    Path(resolver.sync_dir).mkdir(parents=True)
    sync.record_removal(resolver, "s1")
    sync.record_removal(resolver, "../evil")
    assert os.listdir(resolver.sync_removed_dir) == ["s1"]


def _entry(path: str, mode: str = "100644", kind: str = "blob", size: int = 10) -> Entry:
    return Entry(mode, kind, "0" * 40, size, path)


@pytest.mark.parametrize(
    ("path", "mode", "kind", "size", "why"),
    [
        pytest.param("sessions/s1/_meta.json", "120000", "blob", 10, "not a regular file", id="link"),
        pytest.param("sessions/sub", "160000", "commit", -1, "not a regular file", id="submodule"),
        pytest.param("sessions/s1/notes.txt", "100644", "blob", 10, "not part of the board layout", id="stray-file"),
        pytest.param("sessions/../x", "100644", "blob", 10, "not part of the board layout", id="dot-dot"),
        pytest.param("sessions/s1/a/_meta.json", "100644", "blob", 10, "not part of the board layout", id="nested"),
        pytest.param("handoff/latest-handoff.md", "100644", "blob", 10, "not part of the board layout", id="latest"),
        pytest.param("sessions/s1/session-notes.md", "100644", "blob", 9 << 20, "over 8 MiB", id="oversized"),
        pytest.param(".git/hooks/post-checkout", "100755", "blob", 10, "not part of the board layout", id="hook"),
    ],
)
def test_a_remote_tree_keeps_only_the_board_layout(path: str, mode: str, kind: str, size: int, why: str) -> None:
    layout = inbound.Layout([_entry(path, mode, kind, size), _entry("sessions/ok/_meta.json")])
    assert list(layout.sessions) == ["ok"]
    (problem,) = layout.problems
    assert why in problem


def test_a_session_with_a_refused_file_is_refused_whole() -> None:
    layout = inbound.Layout([_entry("sessions/s1/_meta.json"), _entry("sessions/s1/session-notes.md", "120000")])
    assert layout.spoiled == {"s1"}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    made = Store(str(tmp_path / "repo.git"), os.environ)
    made.ensure()
    return made


def test_a_commit_adds_and_deletes_files_and_blobs_come_back_bounded(store: Store) -> None:
    first = store.commit("refs/x", None, "one", "b <b@h>", [("sessions/a/_meta.json", b"{}"), ("removed/z", b"")])
    second = store.commit("refs/x", first, "two", "b <b@h>", [("sessions/a", None), ("big", b"y" * 100)])
    assert [e.path for e in store.tree(second)] == ["big", "removed/z"]
    changes = [(status, e.kind, e.path) for status, e in store.diff(first, second)]
    assert changes == [
        ("A", "blob", "big"),
        ("D", "tree", "sessions"),
        ("D", "tree", "sessions/a"),
        ("D", "blob", "sessions/a/_meta.json"),
    ]
    big = store.tree(second)[0]
    with store.reader() as reader:
        assert reader.read(big.sha, limit=1000) == b"y" * 100
        assert reader.read("f" * 40, limit=1000) is None
        assert reader.read(big.sha, limit=10) is None  # over the limit: read through, not kept
        assert reader.read(big.sha, limit=100) == b"y" * 100  # and the next answer is still whole
        assert reader.read_many([big.sha, "f" * 40, big.sha], limit=100) == [b"y" * 100, None, b"y" * 100]
        with pytest.raises(ValueError):
            reader.read_many(["f" * 40] * (reader.AT_ONCE + 1), limit=100)  # more could fill both pipes
        many = [big.sha, "f" * 40] * reader.AT_ONCE  # sizes are asked a few at a time too
        assert reader.sizes(many) == [100, -1] * reader.AT_ONCE


def test_a_git_past_its_deadline_is_stopped(store: Store, tmp_path: Path) -> None:
    fifo = tmp_path / "never"
    os.mkfifo(fifo)  # `git hash-object` waits on it for ever
    started = time.monotonic()
    with pytest.raises(GitFailed, match="ran out of time"):
        store.run(["hash-object", str(fifo)], deadline=time.monotonic() + 0.5)
    assert time.monotonic() - started < 3


def test_git_never_prompts(store: Store) -> None:
    assert store.env["GIT_TERMINAL_PROMPT"] == "0"
    assert "protocol.ext.allow=never" in store.argv(["fetch"])


def test_many_blobs_at_once_never_deadlock(store: Store) -> None:
    """More names and content than both pipes hold: asked one at a time, all come back."""
    changes = [(f"f{i}", f"{i}".encode() * 200) for i in range(3000)]
    commit = store.commit("refs/many", None, "many", "b <b@h>", changes)
    entries = store.tree(commit)
    with store.reader() as reader:
        found = {e.sha: reader.read(e.sha, limit=1 << 20) for e in entries}
    assert len(found) == 3000
    assert all(found[e.sha] == f"{e.path[1:]}".encode() * 200 for e in entries)


# ---- two machines in one process, against a bare remote ----------------------------------


@pytest.fixture
def bare(tmp_path: Path) -> str:
    path = tmp_path / "remote.git"
    Store(str(path), os.environ).ensure()
    return str(path)


def _machine(tmp_path: Path, name: str, bare: str) -> PathResolver:
    resolver = PathResolver(str(tmp_path / name), Project("acme", "widget", "main", "test", None, str(tmp_path)))
    sync.enable(resolver, f"file://{bare}", settings_now())
    return resolver


def _ended(resolver: PathResolver, session_id: str, host: str, note: str = "a finding") -> None:
    from unittest import mock

    from blackboard import board, session

    with mock.patch.dict(os.environ, BLACKBOARD_HOST=host):  # the machine's name, in its metadata and handoff
        quiet = settings_now(BLACKBOARD_DIGEST="0")  # no checkout here for git to be asked about
        session.start(resolver, session_id, "startup", {"cwd": resolver.root}, quiet)
        board.Board(resolver, session_id).note(note, "main")
        session.end(resolver, session_id, "other", quiet)


def _round(resolver: PathResolver, host: str) -> sync.Round:
    return sync.sync_round(resolver, settings_now(BLACKBOARD_HOST=host))


def _remote_paths(bare: str) -> list:
    store = Store(bare, os.environ)
    commit = store.resolve("refs/blackboard/acme/widget")
    return [e.path for e in store.tree(commit)] if commit else []


def test_a_push_rejected_because_another_machine_pushed_first_is_merged_and_retried(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(alpha, "a1", "alpha")
    _ended(beta, "b1", "beta")
    real_push, raced = sync_round_module.push, []

    def beta_pushes_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not raced:
            raced.append(True)
            assert _round(beta, "beta").pushed == 1
        return real_push(*args, **kwargs)

    monkeypatch.setattr(sync_round_module, "push", beta_pushes_first)
    done = _round(alpha, "alpha")

    assert done.pushed == 1
    assert done.imported == ["b1"]
    paths = _remote_paths(bare)
    assert "sessions/a1/_meta.json" in paths
    assert "sessions/b1/_meta.json" in paths


def _hostile(bare: str, files: dict) -> None:
    store = Store(bare, os.environ)
    parent = store.resolve("refs/blackboard/acme/widget")
    store.commit("refs/blackboard/acme/widget", parent, "hostile", "x <x@x>", list(files.items()))


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"active/evil.json": b"[" * 60_000}, id="deep-json-active"),
        pytest.param({"sessions/x1/_meta.json": b"[" * 60_000}, id="deep-json-meta"),
        pytest.param({":(attr:foo)zz": b"magic"}, id="pathspec-magic"),
    ],
)
def test_a_hostile_entry_never_stops_sync(tmp_path: Path, bare: str, files: dict) -> None:
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")  # alpha has read the tree once: the next reads are incremental
    _hostile(bare, files)
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert done.pushed == 1
    assert "sessions/a1/_meta.json" in _remote_paths(bare)
    assert done.refused or files.keys() == {"active/evil.json"}


def test_a_yaml_bomb_in_a_remote_handoff_is_refused_at_once(tmp_path: Path, bare: str) -> None:
    beta = _machine(tmp_path, "beta", bare)
    _ended(beta, "x1", "beta")
    _round(beta, "beta")
    levels = ["a0: &l0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = ("---\nsession_id: x1\n" + "\n".join(levels) + "\n---\nbody\n").encode()
    _hostile(bare, {"handoff/handoff-x1.md": bomb})
    alpha = _machine(tmp_path, "alpha", bare)

    started = time.monotonic()
    done = _round(alpha, "alpha")

    assert time.monotonic() - started < 5
    assert any("x1" in line and "not the plugin's own" in line for line in done.refused)


def test_a_handoff_that_changed_alone_is_imported(tmp_path: Path, bare: str) -> None:
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta", "the first version")
    _round(beta, "beta")
    _round(alpha, "alpha")
    final = Path(beta.handoff_path("b1"))
    final.write_text(final.read_text().replace("the first version", "the final version"))
    _round(beta, "beta")

    _round(alpha, "alpha")

    assert "the final version" in Path(alpha.handoff_path("b1")).read_text()


def test_a_session_that_changed_in_part_arrives_whole(tmp_path: Path, bare: str) -> None:
    """The diff names only the changed file; the import replaces the folder, so it reads the folder whole."""
    from blackboard import board

    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta", "the first note")
    board.Board(beta, "b1").add_task("a task left open", "main")
    _round(beta, "beta")
    _round(alpha, "alpha")
    notes = Path(beta.board_file("b1", "notes"))
    notes.write_text(notes.read_text() + "\nadded after the end\n")
    _round(beta, "beta")

    done = _round(alpha, "alpha")

    assert done.imported == ["b1"]
    assert done.refused == []
    folder = Path(alpha.get_session_blackboard_dir("b1"))
    names = ["_meta.json", "active-tasks.md", "session-notes.md", "shared-context.md"]
    assert sorted(p.name for p in folder.iterdir()) == names
    assert "added after the end" in (folder / "session-notes.md").read_text()
    assert "a task left open" in (folder / "active-tasks.md").read_text()
    assert json.loads((folder / "_meta.json").read_text())["host"] == "beta"


def _objects(git_dir: str) -> int:
    """Every object the repository holds, packed or loose."""
    out = Store(git_dir, os.environ).run(["count-objects", "-v"]).decode()
    counts = dict(line.split(": ") for line in out.splitlines())
    return int(counts["count"]) + int(counts["in-pack"])


def test_an_oversized_file_in_a_later_commit_is_refused_and_nothing_of_it_stays(tmp_path: Path, bare: str) -> None:
    """An incremental import asks the sizes of what the diff names; a file over the cap refuses the commit."""
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    held = _objects(alpha.sync_repo)
    meta = Path(beta.meta_path("b1")).read_text().replace('"b1"', '"x9"')
    _hostile(bare, {"sessions/x9/_meta.json": meta.encode(), "sessions/x9/session-notes.md": os.urandom(9 << 20)})

    with pytest.raises(TooLarge, match="over 8 MiB"):
        _round(alpha, "alpha")

    assert not os.path.lexists(alpha.get_session_blackboard_dir("x9"))
    assert list(Path(alpha.sync_dir).glob("incoming/x9-*")) == []
    assert _objects(alpha.sync_repo) <= held + 2  # the refused commit's objects are gone
    size = sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file())
    assert size < 1 << 20
    assert "over 8 MiB" in json.loads(Path(alpha.sync_file("status.json")).read_text())["fetch"]["detail"]


@pytest.mark.parametrize("watched", [True, False], ids=["stopped-while-fetching", "done-before-a-look"])
def test_a_fetch_over_its_byte_cap_is_stopped_and_leaves_nothing(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch, watched: bool
) -> None:
    if not watched:  # a fetch quicker than the watch: what it brought is measured once it is done
        monkeypatch.setattr(gitstore, "WATCH_SECONDS", 60.0)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    monkeypatch.setattr(remote, "MAX_FETCH_BYTES", 2 << 20)
    _hostile(bare, {f"junk/{i}": os.urandom(1 << 20) for i in range(6)})  # 6 MiB that do not compress

    with pytest.raises(TooLarge, match="over 2 MiB"):
        _round(alpha, "alpha")

    pack_dir = Path(alpha.sync_repo) / "objects" / "pack"
    assert [p.name for p in pack_dir.iterdir() if p.name.startswith("tmp_")] == []
    size = sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file())
    assert size < 1 << 20


def test_a_tree_over_its_entry_cap_is_read_to_the_cap_and_this_machines_work_still_goes(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for i in range(4):
        _ended(beta, f"b{i}", "beta")
    _round(beta, "beta")
    paths = _remote_paths(bare)
    last = [p for p in paths if p.startswith("sessions/b3/")]
    assert len(last) > 1
    monkeypatch.setattr(gitstore, "MAX_ENTRIES", len(paths) - 1)  # git is stopped inside b3's folder
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert sorted(done.imported) == ["b0", "b1", "b2"]  # b3, cut part-way, is refused whole
    assert any(f"over {len(paths) - 1} files" in line and "sessions/b3" in line for line in done.refused)
    assert not os.path.exists(alpha.get_session_blackboard_dir("b3"))
    monkeypatch.undo()
    assert done.pushed == 1 and "sessions/a1/_meta.json" in _remote_paths(bare)

    gone = ("sessions/b0", "handoff/handoff-b0.md", "sessions/b1", "handoff/handoff-b1.md")
    _hostile(bare, dict.fromkeys(gone))  # the remote is within the bound again: what was past the cut comes
    monkeypatch.setattr(gitstore, "MAX_ENTRIES", len(paths) - 1)
    assert "b3" in _round(alpha, "alpha").imported


def test_a_tree_of_junk_over_its_entry_cap_is_read_in_bounded_memory_and_refused(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = _machine(tmp_path, "alpha", bare)
    monkeypatch.setattr(gitstore, "MAX_ENTRIES", 500)
    _hostile(bare, {f"junk/{i}": b"x%d" % i for i in range(2000)})
    store = Store(bare, os.environ)
    entries, more = store.tree_head(store.resolve("refs/blackboard/acme/widget"))
    assert len(entries) == 500 and more
    with pytest.raises(TooLarge, match="over 500 files"):
        store.tree(store.resolve("refs/blackboard/acme/widget"))

    done = _round(alpha, "alpha")
    assert any("over 500 files" in line for line in done.refused)
    assert any("junk/" in line and "not part of the board layout" in line for line in done.refused)


def test_sessions_moved_in_by_an_import_cut_short_are_no_conflicts_later(tmp_path: Path, bare: str) -> None:
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for n in range(3):
        _ended(beta, f"b{n}", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    os.unlink(alpha.sync_file("state.json"))  # as if the import had stopped before recording anything
    _ended(beta, "b9", "beta")
    _round(beta, "beta")

    done = _round(alpha, "alpha")

    assert done.conflicts == []
    assert "b9" in done.imported


def test_handoffs_are_redacted_again_when_pushed(tmp_path: Path, bare: str) -> None:
    alpha = _machine(tmp_path, "alpha", bare)
    _ended(alpha, "a1", "alpha")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = Path(alpha.handoff_path("a1"))
    path.write_text(path.read_text() + f"\nwritten by an older plugin: {token}\n")
    _round(alpha, "alpha")
    store = Store(bare, os.environ)
    (entry,) = [
        e for e in store.tree(store.resolve("refs/blackboard/acme/widget") or "") if e.path.startswith("handoff/")
    ]
    with store.reader() as reader:
        content = reader.read(entry.sha, 1 << 20)
    assert b"written by an older plugin" in (content or b"")
    assert token.encode() not in (content or b"")


def test_a_relative_remote_is_made_absolute_against_the_checkout(root: Path, tmp_path: Path) -> None:
    local = PathResolver(str(root), Project("acme", "widget", None, "test", "../w.git", str(tmp_path / "co")))
    assert sync.enable(local, None, settings_now()) == str(tmp_path / "w.git")


def test_git_is_pointed_at_the_private_repository_only() -> None:
    store = Store("/x/repo.git", {"GIT_DIR": "/elsewhere", "GIT_OBJECT_DIRECTORY": "/o", "HOME": "/h"})
    assert "GIT_DIR" not in store.env
    assert "GIT_OBJECT_DIRECTORY" not in store.env
    assert store.env["GIT_ASKPASS"] == ""
    assert store.env["HOME"] == "/h"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("host", "evil\nhost", id="host-newline"),
        pytest.param("git_branch", "main\x1b[2J", id="branch-escape"),
        pytest.param("started", "yesterday", id="not-a-time"),
        pytest.param("host", "x" * 100, id="host-too-long"),
        pytest.param("ended", "2999-01-01T00:00:00Z", id="ended-in-the-future"),  # first in cleanup's keep for good
    ],
)
def test_imported_metadata_that_would_print_badly_is_refused(root: Path, field: str, value: str) -> None:
    resolver = PathResolver(str(root), Project("acme", "widget", None, "test"))
    meta = {
        "schema_version": 1,
        "session_id": "s1",
        "org": "acme",
        "project": "widget",
        "status": "ended",
        "started": "2026-11-01T00:00:00Z",
        "host": "beta",
        field: value,
    }
    checked = inbound.check_meta(resolver.project, "s1", json.dumps(meta).encode())
    assert isinstance(checked, inbound.Refused)
    assert "refused" in checked.detail


def test_a_failing_gc_never_stops_a_round_and_status_says_so(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blackboard.gitstore import Tidying

    alpha = _machine(tmp_path, "alpha", bare)
    _ended(alpha, "a1", "alpha")
    monkeypatch.setattr(Tidying, "CONFIG", ("-c", "gc.auto=not-a-number"))  # git refuses to start gc
    monkeypatch.setattr(Store, "gc_due", lambda self: True)  # as past git's thresholds

    done = _round(alpha, "alpha")

    assert done.pushed == 1
    assert "sessions/a1/_meta.json" in _remote_paths(bare)
    tidy = sync.status(alpha, settings_now().host)["last_tidy"]
    assert isinstance(tidy, dict)
    assert tidy["ok"] is False
    assert "gc" in tidy["detail"]


def test_the_private_repository_is_packed_once_packs_pile_up(store: Store) -> None:
    parent = None
    for n in range(55):  # each commit is a pack of its own, as a fetch of over 100 objects is
        files = [(f"d{n}/f{i}", f"{n}-{i}".encode()) for i in range(3)]
        parent = store.commit("refs/x", parent, f"c{n}", "b <b@h>", files)
    packs = Path(store.git_dir, "objects", "pack")
    assert len(list(packs.glob("*.pack"))) > 50
    with store.tidying():
        pass
    assert len(list(packs.glob("*.pack"))) < 5
    assert len(store.tree(parent or "")) == 55 * 3


def test_gc_is_due_when_git_would_say_so_and_no_round_starts_one_before(store: Store) -> None:
    assert not store.gc_due()
    bucket = Path(store.git_dir, "objects", "17")
    bucket.mkdir(parents=True, exist_ok=True)
    for n in range(-(-gitstore.GC_LOOSE // 256)):  # git samples objects/17 alone
        (bucket / f"{n:038x}").write_bytes(b"")
    assert not store.gc_due()
    (bucket / ("f" * 38)).write_bytes(b"")
    assert store.gc_due()


def _meta(**fields: object) -> dict:
    meta = {"schema_version": 1, "session_id": "s1", "org": "acme", "project": "widget", "status": "ended"}
    return {**meta, "started": "2026-11-01T00:00:00Z", "ended": "2026-11-01T01:00:00Z", "host": "beta", **fields}


@pytest.mark.parametrize(
    ("front", "why"),
    [
        ('session_id: "s1"\nhost: "alpha"\nended: "2026-11-01T01:00:00Z"', "another project or host"),
        ('session_id: "s1"\nproject: "other"\nended: "2026-11-01T01:00:00Z"', "another project or host"),
        ('session_id: "s1"\nhost: "beta"\nended: "2999-01-01T00:00:00Z"', "ends in the future"),
    ],
)
def test_a_remote_handoff_must_agree_with_its_metadata_and_the_clock(front: str, why: str) -> None:
    checked = inbound.check_handoff("s1", _meta(), f"---\n{front}\n---\nbody\n".encode())  # type: ignore[arg-type]
    assert isinstance(checked, inbound.Refused)
    assert why in checked.detail


def test_a_remote_handoff_that_agrees_is_taken() -> None:
    front = 'session_id: "s1"\norg: "acme"\nproject: "widget"\nhost: "beta"\nended: "2026-11-01T01:00:00Z"'
    checked = inbound.check_handoff("s1", _meta(), f"---\n{front}\n---\nbody\n".encode())  # type: ignore[arg-type]
    assert not isinstance(checked, inbound.Refused)
    text, order = checked
    assert "body" in text and order is not None


def test_an_active_record_stamped_in_the_future_is_dropped(resolver: PathResolver) -> None:
    record = {"host": "evil", "updated": "2999-01-01T00:00:00Z", "sessions": [{"session_id": "x1", "started": "?"}]}
    assert inbound.active_records("evil", json.dumps(record).encode()) == []
    Path(resolver.sync_dir).mkdir(parents=True)
    row = {"host": "evil", "session_id": "x1", "since": "?", "updated": time.time() + 86400}
    Path(resolver.sync_file("remote-active.json")).write_text(json.dumps({"machines": {"evil": [row]}}))
    assert registry.remote_active(resolver) == []  # an older version's file: dropped when read, too


def test_a_remote_removal_of_a_session_never_sent_is_ignored_and_taken_away(tmp_path: Path, bare: str) -> None:
    """The remote saw a1 as active (active/alpha.json) and planted removed/a1 before alpha sent it."""
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _hostile(bare, {"removed/a1": b""})
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert done.pushed == 1
    assert any(line.startswith("removed/a1:") and "never sent" in line for line in done.refused)
    paths = _remote_paths(bare)
    assert "sessions/a1/_meta.json" in paths
    assert "removed/a1" not in paths
    assert "a1" in _round(beta, "beta").imported


def test_removals_of_sessions_never_held_here_are_not_remembered(tmp_path: Path, bare: str) -> None:
    """Tombstones for ids this machine never had would only grow its state; the tree's own keep them out."""
    beta = _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    store = Store(bare, os.environ)
    meta = (Path(beta.meta_path("b1")).read_bytes(), Path(beta.board_file("b1", "notes")).read_bytes())
    planted = {f"removed/z{i}": b"" for i in range(30)}
    planted.update({f"sessions/z{i}/_meta.json": meta[0].replace(b'"b1"', f'"z{i}"'.encode()) for i in range(30)})
    _hostile(bare, planted)
    alpha = _machine(tmp_path, "alpha", bare)

    done = _round(alpha, "alpha")

    assert done.imported == ["b1"]
    assert sync.State.load(alpha).removed == {}
    assert store.resolve("refs/blackboard/acme/widget") is not None


def test_refusals_are_bounded_in_what_a_round_reports_and_keeps(resolver: PathResolver) -> None:
    layout = inbound.Layout([_entry(f"junk/{i}") for i in range(200)])
    assert len(layout.problems) == inbound.MAX_REFUSALS + 1
    assert layout.problems[-1] == f"and {200 - inbound.MAX_REFUSALS} more entries refused"
    state = sync.State({})
    for i in range(20_000):
        state.refuse(f"line {i}")
    assert state.refused == [f"line {i}" for i in range(20_000 - inbound.MAX_REFUSALS, 20_000)]


def test_a_remote_ref_that_names_no_commit_is_refused_and_status_says_so(tmp_path: Path, bare: str) -> None:
    beta = _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    store = Store(bare, os.environ)
    tree = store.run(["rev-parse", "refs/blackboard/acme/widget^{tree}"]).decode().strip()
    store.run(["update-ref", "refs/blackboard/acme/widget", tree])
    alpha = _machine(tmp_path, "alpha", bare)
    _ended(alpha, "a1", "alpha")

    with pytest.raises(GitFailed, match="names no commit"):
        _round(alpha, "alpha")

    status = sync.status(alpha, settings_now().host)
    assert status["last_fetch"]["ok"] is False  # type: ignore[index]
    assert "names no commit" in status["last_fetch"]["detail"]  # type: ignore[index]
    assert not list(Path(alpha.sync_repo).glob("fast_import_crash_*"))


def test_an_update_never_replaces_a_session_resumed_here(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resumed here (no CLAUDE_PID), the session is this machine's: the other machine's next version is a conflict."""
    from blackboard import board, session

    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta", "beta's first note")
    _round(beta, "beta")
    _round(alpha, "alpha")
    monkeypatch.setenv("BLACKBOARD_HOST", "alpha")
    session.start(alpha, "b1", "resume", {"cwd": alpha.root}, settings_now())
    board.Board(alpha, "b1").note("alpha's work after resuming", "main")
    assert "claude_pid" not in json.loads(Path(alpha.meta_path("b1")).read_text())
    monkeypatch.setenv("BLACKBOARD_HOST", "beta")
    session.start(beta, "b1", "resume", {"cwd": beta.root}, settings_now())
    board.Board(beta, "b1").note("beta's later note", "main")
    session.end(beta, "b1", "other", settings_now())
    _round(beta, "beta")

    done = _round(alpha, "alpha")

    assert any(line.startswith("b1: conflict") for line in done.conflicts)
    assert "alpha's work after resuming" in Path(alpha.board_file("b1", "notes")).read_text()
    monkeypatch.setenv("BLACKBOARD_HOST", "alpha")
    session.end(alpha, "b1", "other", settings_now())
    assert json.loads(Path(alpha.meta_path("b1")).read_text())["host"] == "alpha"


def test_a_board_command_without_a_session_never_writes_into_another_machines(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blackboard import board

    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(alpha, "a1", "alpha")
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    monkeypatch.setenv("BLACKBOARD_HOST", "alpha")
    with pytest.raises(BlackboardError, match="no session of acme/widget yet"):
        board.latest_board(
            beta.__class__(str(tmp_path / "gamma"), alpha.project), settings_now().host
        )  # nothing of its own at all
    _round(alpha, "alpha")  # b1 arrives, its files newer than a1's

    assert board.latest_board(alpha, settings_now().host).session_id == "a1"


def test_the_state_forgets_sessions_gone_from_this_machine_and_keeps_the_newest_removals(
    resolver: PathResolver,
) -> None:
    os.makedirs(resolver.get_session_blackboard_dir("here"))
    removals = [f"gone-{i}" for i in range(sync_state.MAX_REMOVED + 50)]
    state = sync.State(
        {
            "pushed": {"here": "sig", "gone": "sig"},
            "foreign": {"here": 10, "gone": 20},
            "conflicts": {"gone": "x"},
            "removed": removals,
        }
    )
    state.forget_missing(registry.session_folders(resolver))
    assert state.pushed == {"here": "sig"} and state.foreign == {"here": 10} and state.conflicts == {}
    assert list(state.removed) == removals[50:]  # the oldest went first
    os.makedirs(resolver.sync_dir, exist_ok=True)
    state.save(resolver)
    assert os.path.getsize(resolver.sync_file("state.json")) < sync_state.MAX_STATE_BYTES
    assert list(sync.State.load(resolver).removed) == removals[50:]


def test_the_private_repository_is_this_users_alone_whatever_the_umask(tmp_path: Path, bare: str) -> None:
    old = os.umask(0o022)
    try:
        alpha = _machine(tmp_path, "alpha", bare)
        _ended(alpha, "a1", "alpha")
        _round(alpha, "alpha")
    finally:
        os.umask(old)
    repo = Path(alpha.sync_repo)
    loose = [p for p in [repo, *repo.rglob("*")] if not p.is_symlink() and p.stat().st_mode & 0o077]
    assert loose == []


def _blob_entry(path: str, data: bytes) -> Entry:
    return Entry("100644", "blob", f"{abs(hash((path, data))):040x}"[:40], len(data), path)


def test_the_inbound_check_takes_a_good_session_and_refuses_a_forged_one_without_git(resolver: PathResolver) -> None:
    """``inbound`` is a pure function of tree entries and blob contents: no repository, no disk."""
    good_meta = json.dumps(_meta()).encode()
    forged_meta = json.dumps(_meta(session_id="someone-else")).encode()
    notes = b"## n1\n- author: main\n\nfine\n"
    front = 'session_id: "s1"\norg: "acme"\nproject: "widget"\nhost: "beta"\nended: "2026-11-01T01:00:00Z"'
    handoff_text = f"---\n{front}\n---\nbody\n".encode()
    entries = [
        _blob_entry("sessions/s1/_meta.json", good_meta),
        _blob_entry("sessions/s1/session-notes.md", notes),
        _blob_entry("handoff/handoff-s1.md", handoff_text),
        _blob_entry("sessions/s2/_meta.json", forged_meta),
        _blob_entry("sessions/s3/../../x", b"escape"),
    ]
    layout = inbound.Layout(entries)
    assert sorted(layout.sessions) == ["s1", "s2"]
    assert any("s3" in problem for problem in layout.problems)
    blobs = {e.sha: data for e, data in zip(entries, [good_meta, notes, handoff_text, forged_meta, b"escape"])}

    def files(session_id: str) -> dict:
        return {name: blobs[entry.sha] for name, entry in layout.sessions[session_id].items()}

    taken = inbound.check_session(resolver.project, "s1", files("s1"), blobs[layout.handoffs["s1"].sha])
    assert isinstance(taken, inbound.Accepted)
    assert taken.files["session-notes.md"] == notes and taken.handoff is not None and taken.order is not None
    refused = inbound.check_session(resolver.project, "s2", files("s2"), False)
    assert isinstance(refused, inbound.Refused) and "another session" in refused.detail


def test_a_small_pack_that_would_write_much_is_refused_whole(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One blob named by many sessions' files: a tiny pack, and many times its size on disk."""
    monkeypatch.setattr(inbound, "MAX_IMPORT_BYTES", 2 << 20)
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text()
    blob = os.urandom(300 * 1024)
    files = {}
    for i in range(10):  # 10 sessions x 3 MiB... of one 300 KiB blob
        files[f"sessions/x{i}/_meta.json"] = meta.replace('"b1"', f'"x{i}"').encode()
        files.update({f"sessions/x{i}/{name}": blob for name in ("session-notes.md", "active-tasks.md")})
    _hostile(bare, files)

    with pytest.raises(TooLarge, match="to write here"):
        _round(alpha, "alpha")
    assert not [i for i in range(10) if os.path.lexists(alpha.get_session_blackboard_dir(f"x{i}"))]
    assert sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file()) < 1 << 20


def test_imports_round_after_round_stop_at_what_all_of_them_may_hold(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote that sends new sessions before every round, each round's import under its own bound."""
    monkeypatch.setattr(inbound, "MAX_HELD_BYTES", 3 << 20)
    alpha, beta = _four_imported(tmp_path, bare)
    _send_two(bare, beta, "r")
    with pytest.raises(TooLarge, match=r"imported here would come to over 3 MiB \(2.0 MiB held; `blackboard cleanup`"):
        _round(alpha, "alpha")
    assert not os.path.lexists(alpha.get_session_blackboard_dir("r0"))
    status = "\n".join(sync.status_lines(sync.status(alpha, settings_now().host)))
    assert "imported from other machines: 5 session(s), 2 MiB" in status
    assert sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file()) < 3 << 20  # r* forgotten

    for session_id in ("p0", "p1"):  # as a cleanup would: room again
        shutil.rmtree(alpha.get_session_blackboard_dir(session_id))
    assert sorted(_round(alpha, "alpha").imported) == ["r0", "r1"]


def _four_imported(tmp_path: Path, bare: str) -> tuple[PathResolver, PathResolver]:
    """``_beta_session``, then two rounds that each import two of beta's sessions of 512 KiB (p0, p1, q0, q1)."""
    alpha, beta = _beta_session(tmp_path, bare)
    for prefix in ("p", "q"):
        _send_two(bare, beta, prefix)
        assert len(_round(alpha, "alpha").imported) == 2
    return alpha, beta


def _send_two(bare: str, beta: PathResolver, prefix: str) -> None:
    """Two new sessions of beta's, of 512 KiB each, new bytes every time, straight into the remote."""
    meta = Path(beta.meta_path("b1")).read_text()
    _hostile(
        bare,
        {
            f"sessions/{prefix}{i}/{name}": meta.replace('"b1"', f'"{prefix}{i}"').encode()
            if name == "_meta.json"
            else os.urandom(512 * 1024)
            for i in range(2)
            for name in ("_meta.json", "session-notes.md")
        },
    )


def test_sessions_recorded_before_they_were_measured_count_towards_the_bound(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import killed between the move and the measuring, or a state from before sizes were kept."""
    monkeypatch.setattr(inbound, "MAX_HELD_BYTES", 3 << 20)
    alpha, beta = _four_imported(tmp_path, bare)
    state = json.loads(Path(alpha.sync_file("state.json")).read_text())
    state["foreign"] = dict.fromkeys(state["foreign"], 0)
    Path(alpha.sync_file("state.json")).write_text(json.dumps(state))
    _send_two(bare, beta, "r")

    with pytest.raises(TooLarge, match=r"over 3 MiB \(2.0 MiB held"):
        _round(alpha, "alpha")
    assert sync.status(alpha, settings_now().host)["imported_bytes"] == sum(
        _on_disk(alpha, i) for i in ("b1", "p0", "p1", "q0", "q1")
    )


def _beta_session(tmp_path: Path, bare: str) -> tuple[PathResolver, PathResolver]:
    """alpha and beta syncing through ``bare``; beta has sent b1, a finished session, and alpha took it."""
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    return alpha, beta


def _on_disk(resolver: PathResolver, session_id: str) -> int:
    folder = Path(resolver.get_session_blackboard_dir(session_id))
    paths = [*folder.iterdir(), Path(resolver.handoff_path(session_id))]
    return sum(p.lstat().st_size for p in paths if os.path.lexists(p))


def test_what_an_imported_session_holds_is_counted_as_it_is_on_disk_after_each_update(
    tmp_path: Path, bare: str
) -> None:
    """An update that leaves out the handoff, or one that drops board files, must not shrink the count."""
    alpha, beta = _beta_session(tmp_path, bare)
    handoff_path = "handoff/handoff-b1.md"
    text = Path(beta.handoff_path("b1")).read_text()
    _hostile(bare, {handoff_path: (text + "padding\n" * 40_000).encode()})
    _round(alpha, "alpha")
    assert sync.State.load(alpha).foreign["b1"] == _on_disk(alpha, "b1") > 300_000

    notes = "sessions/b1/session-notes.md"
    _hostile(bare, {notes: Path(beta.get_session_blackboard_dir("b1"), "session-notes.md").read_bytes() + b"x"})
    _round(alpha, "alpha")  # the folder read again, the handoff not
    assert sync.State.load(alpha).foreign["b1"] == _on_disk(alpha, "b1") > 300_000

    _hostile(bare, {"sessions/b1/active-tasks.md": None, "sessions/b1/shared-context.md": None})
    _round(alpha, "alpha")  # what the update no longer holds goes here too
    assert sorted(os.listdir(alpha.get_session_blackboard_dir("b1"))) == ["_meta.json", "session-notes.md"]
    assert sync.State.load(alpha).foreign["b1"] == _on_disk(alpha, "b1")


def test_an_update_of_a_session_held_here_is_not_counted_on_top_of_its_old_copy(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    notes = "sessions/b1/session-notes.md"
    _hostile(bare, {notes: os.urandom(1400 * 1024)})
    _round(alpha, "alpha")
    held = sync.State.load(alpha).foreign["b1"]
    monkeypatch.setattr(inbound, "MAX_HELD_BYTES", held + 100 * 1024)  # room for the update, not for two copies
    _hostile(bare, {notes: os.urandom(1400 * 1024 + 14)})
    assert _round(alpha, "alpha").imported == ["b1"]


def test_a_remote_handoff_that_is_not_utf8_is_refused_not_written_three_times_its_size(
    tmp_path: Path, bare: str
) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    handoff_path = "handoff/handoff-b2.md"
    _hostile(bare, {handoff_path: Path(beta.handoff_path("b2")).read_bytes() + b"\xff" * 100_000})
    done = _round(alpha, "alpha")
    assert any("b2: its handoff is not UTF-8" in line for line in done.refused)
    assert not os.path.lexists(alpha.handoff_path("b2"))


@pytest.mark.parametrize("size", [-1_048_576, True, 2**60], ids=["negative", "true", "past-2**53"])
def test_a_state_whose_sizes_would_lift_or_jam_the_bound_pauses_sync(resolver: PathResolver, size: object) -> None:
    os.makedirs(resolver.sync_dir)
    Path(resolver.sync_file("state.json")).write_text(json.dumps({"foreign": {"a1": size}}))
    with pytest.raises(sync.StatePaused, match="damaged"):
        sync.State.load(resolver)


def test_a_state_written_before_sizes_were_kept_still_knows_its_imported_sessions(resolver: PathResolver) -> None:
    os.makedirs(resolver.sync_dir)
    Path(resolver.sync_file("state.json")).write_text(json.dumps({"foreign": ["a1", "b2"]}))
    assert sync.State.load(resolver).foreign == {"a1": 0, "b2": 0}


def test_the_sizes_a_signature_names_count_each_file_at_most_at_the_cap_on_what_is_sent() -> None:
    signature = "_meta.json:300:17;session-notes.md:99999999999999999999:18;handoff-a1.md:x:19;odd"
    assert sync_state.signature_bytes(signature) == 300 + inbound.MAX_FILE_BYTES


def test_refused_entries_past_a_bound_refuse_the_commit_and_leave_nothing(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbound, "MAX_REFUSED_BYTES", 512 * 1024)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    _hostile(bare, {f"junk/{i}": os.urandom(100 * 1024) for i in range(9)})  # outside the layout

    with pytest.raises(TooLarge, match="outside the board layout"):
        _round(alpha, "alpha")
    assert sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file()) < 512 * 1024


def _kept_commit(kind: str, n: int, beta: PathResolver, alpha: PathResolver) -> dict:
    """The n-th commit of a remote that keeps what it sent before and adds 0.5 to 1 MiB more on disk."""
    junk = os.urandom(1 << 20)
    if kind == "refused-sessions":  # another project's: refused once read, after the commit was taken
        meta = Path(beta.meta_path("b1")).read_text().replace('"widget"', '"other"').replace('"b1"', f'"j{n}"')
        return {f"sessions/j{n}/_meta.json": meta.encode(), f"sessions/j{n}/session-notes.md": junk}
    if kind == "outside-the-layout":  # each commit under the bound on refused entries
        return {f"junk/{n}-{i}": junk[i << 18 : (i + 1) << 18] for i in range(4)}
    if kind == "long-names":  # empty files: only their folder's listing grows
        return {f"junk/{n}/{os.urandom(120).hex()}": b"" for _ in range(4000)}
    if kind == "fattened-own-sessions":  # this machine's sessions, grown on the remote
        notes = Path(alpha.board_file(f"a{n}", "notes")).read_bytes()
        return {f"sessions/a{n}/session-notes.md": notes + junk}
    assert kind == "other-machines-active-records"
    return {f"active/host{n}-{i}.json": json.dumps({"pad": os.urandom(30_000).hex()}).encode() for i in range(16)}


@pytest.mark.parametrize(
    "kind",
    ["refused-sessions", "outside-the-layout", "long-names", "fattened-own-sessions", "other-machines-active-records"],
)
def test_a_remote_that_keeps_what_no_board_holds_and_adds_more_is_refused_once_it_keeps_too_much(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """Each commit alone passes every bound; what the remote keeps here round after round is bounded in all."""
    monkeypatch.setattr(importing, "MAX_UNHELD_BYTES", 3 << 19)
    alpha, beta = _beta_session(tmp_path, bare)
    for n in range(8):
        _ended(alpha, f"a{n}", "alpha")
    _round(alpha, "alpha")
    sent: dict = {}
    refused_at = None
    for n in range(10):
        sent.update(_kept_commit(kind, n, beta, alpha))
        _hostile(bare, sent)
        try:
            _round(alpha, "alpha")
        except TooLarge as exc:
            assert "more than the boards here hold" in str(exc)
            refused_at = n
            break
    assert refused_at is not None and refused_at >= 1  # each commit alone was fine
    assert sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file()) < 8 << 20

    _hostile(bare, dict.fromkeys(sent))  # the remote takes it back: sync goes on
    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    assert _round(alpha, "alpha").imported == ["b2"]


def _repo_bytes(resolver: PathResolver) -> int:
    return sum(p.stat().st_size for p in Path(resolver.sync_repo).rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", ["a-chain-of-tags", "a-blob", "a-tree"])
def test_a_ref_that_names_no_commit_is_refused_and_what_its_fetch_brought_leaves_the_disk(
    tmp_path: Path, bare: str, kind: str
) -> None:
    """A tag, each round a new one on the last (the commit beneath unchanged), a blob or a tree: 1 MiB a round."""
    alpha, _ = _beta_session(tmp_path, bare)
    remote = Store(bare, os.environ)
    ref = "refs/blackboard/acme/widget"
    named = good = remote.resolve(ref)
    before = _repo_bytes(alpha)
    for n in range(4):
        junk = tmp_path / "junk"
        junk.write_text(os.urandom(1 << 19).hex())
        if kind == "a-chain-of-tags":
            who = ["-c", "user.name=x", "-c", "user.email=x@x"]
            remote.run([*who, "tag", "-f", "-a", "-F", str(junk), f"t{n}", str(named)])
            named = remote.run(["rev-parse", f"refs/tags/t{n}"]).decode().strip()
        else:
            named = remote.run(["hash-object", "-w", str(junk)]).decode().strip()
            if kind == "a-tree":
                named = remote.run(["mktree"], stdin=f"100644 blob {named}\tjunk\n".encode()).decode().strip()
        remote.run(["update-ref", ref, named])

        with pytest.raises(GitFailed, match="names no commit"):
            _round(alpha, "alpha")

        assert not os.path.lexists(alpha.sync_file("unsettled"))  # forgotten at once, within the round's time
        assert _repo_bytes(alpha) < before + (256 << 10), f"round {n}"
    assert sync.status(alpha, settings_now().host)["last_fetch"]["ok"] is False  # type: ignore[index]
    remote.run(["update-ref", ref, str(good)])  # the remote mends its ref

    _round(alpha, "alpha")

    assert _repo_bytes(alpha) < before + (256 << 10)


def test_sessions_this_machine_removed_still_count_until_the_remote_drops_them(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Doing what a refusal says (`blackboard cleanup`) must not leave sync refused: the remote still holds
    what was removed here until the removal is pushed, and for good what a person deleted by hand."""
    monkeypatch.setattr(importing, "MAX_UNHELD_BYTES", 1 << 20)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for machine, name in (("alpha", "a0"), ("alpha", "a1"), ("beta", "b0"), ("beta", "b1")):
        resolver = alpha if machine == "alpha" else beta
        _ended(resolver, name, machine)
        with open(resolver.board_file(name, "notes"), "a") as notes:
            notes.write(os.urandom(1 << 19).hex())  # 1 MiB, about half of it once packed
        _round(resolver, machine)
    _round(alpha, "alpha")
    for name in ("a0", "b0"):  # as `blackboard cleanup` removes a session of a project that syncs
        shutil.rmtree(alpha.get_session_blackboard_dir(name))
        sync.record_removal(alpha, name)
    shutil.rmtree(alpha.get_session_blackboard_dir("a1"))  # by hand: no removal is ever sent
    shutil.rmtree(alpha.get_session_blackboard_dir("b1"))
    _ended(beta, "b2", "beta")
    _round(beta, "beta")

    assert _round(alpha, "alpha").imported == ["b2"]
    assert _round(alpha, "alpha").imported == []
    assert sorted(sync.State.load(alpha).left) == ["a1", "b1"]  # the removals landed; the rest the remote keeps
    shutil.rmtree(beta.get_session_blackboard_dir("b1"))
    sync.record_removal(beta, "b1")
    _round(beta, "beta")
    _round(alpha, "alpha")
    assert sorted(sync.State.load(alpha).left) == ["a1"]  # beta's removal of b1 came in


@pytest.mark.parametrize("name", ["Thumbs.db", "desktop.ini", "DESKTOP.INI"])
def test_a_session_named_like_an_operating_systems_litter_is_refused(tmp_path: Path, bare: str, name: str) -> None:
    """Listings skip such a folder: imported, each round would forget it, and count it again as one that left."""
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text().replace('"b1"', json.dumps(name))
    _hostile(bare, {f"sessions/{name}/_meta.json": meta.encode()})

    done = _round(alpha, "alpha")

    assert done.imported == [] and any(name in line for line in done.refused)
    assert not os.path.lexists(alpha.get_session_blackboard_dir("b1").replace("/b1", f"/{name}"))
    assert sync.State.load(alpha).left == {}


def test_a_pack_a_killed_fetch_left_with_its_keep_file_is_forgotten(tmp_path: Path, bare: str) -> None:
    alpha, _ = _beta_session(tmp_path, bare)
    store = Store(alpha.sync_repo, os.environ)
    junk = store.run(["hash-object", "-w", "--stdin"], stdin=os.urandom(1 << 20)).decode().strip()
    pack = store.run(["pack-objects", os.path.join(alpha.sync_repo, "objects", "pack", "pack")], stdin=junk.encode())
    Path(alpha.sync_repo, "objects", "pack", f"pack-{pack.decode().strip()}.keep").write_text("fetch")

    store.forget(remote.FETCHED, store.resolve(remote.FETCHED))

    assert not _exists(store, junk)
    assert _repo_bytes(alpha) < 256 << 10


def test_session_start_leaves_what_it_fetched_and_refused_for_its_round_to_forget(tmp_path: Path, bare: str) -> None:
    """A repack can take seconds: SessionStart, which a person waits on, never runs one."""
    alpha, _ = _beta_session(tmp_path, bare)
    remote_store = Store(bare, os.environ)
    good = remote_store.resolve("refs/blackboard/acme/widget")
    blob = remote_store.run(["hash-object", "-w", "--stdin"], stdin=os.urandom(1 << 20)).decode().strip()
    remote_store.run(["update-ref", "refs/blackboard/acme/widget", blob])
    env = settings_now(BLACKBOARD_HOST="alpha")
    before = _repo_bytes(alpha)

    with pytest.raises(GitFailed, match="names no commit"):  # the hook logs it, and goes on
        sync.finish_fetch(alpha, sync.start_fetch(alpha, env), env, time.monotonic() + 30)

    assert os.path.lexists(alpha.sync_file("unsettled")) and _repo_bytes(alpha) > before + (512 << 10)
    remote_store.run(["update-ref", "refs/blackboard/acme/widget", str(good)])  # mended: the round goes on
    _round(alpha, "alpha")
    assert not os.path.lexists(alpha.sync_file("unsettled")) and _repo_bytes(alpha) < before + (256 << 10)


def test_what_a_fetch_stopped_at_its_deadline_left_never_stops_the_rounds_after_it(tmp_path: Path, bare: str) -> None:
    """A SessionStart fetch stopped at its deadline leaves its pack, shallow.lock and _sync/unsettled."""
    alpha, beta = _beta_session(tmp_path, bare)
    Path(alpha.sync_repo, "shallow.lock").write_text("")
    Path(alpha.sync_file("unsettled")).write_text("")
    _ended(alpha, "a1", "alpha")
    _ended(beta, "b2", "beta")
    _round(beta, "beta")

    done = _round(alpha, "alpha")

    assert done.imported == ["b2"] and done.pushed == 1
    assert not os.path.lexists(alpha.sync_file("unsettled"))


def test_a_round_whose_repack_runs_out_of_time_goes_on_and_says_so(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    Path(alpha.sync_file("unsettled")).write_text("")

    def too_slow(*args: object) -> None:
        raise gitstore.GitTimeout("git repack ran out of time")

    monkeypatch.setattr(Store, "forget", too_slow)
    _ended(beta, "b2", "beta")
    _round(beta, "beta")

    assert _round(alpha, "alpha").imported == ["b2"]
    assert os.path.lexists(alpha.sync_file("unsettled"))  # the next round tries again
    assert "ran out of time" in sync.status(alpha, settings_now().host)["last_settle"]["detail"]  # type: ignore[index]
    assert any("ran out of time" in line for line in sync.status_lines(sync.status(alpha, settings_now().host)))


def test_a_project_whose_boards_come_to_more_than_the_bound_is_never_refused_for_it(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound is on what no board here holds: this machine's sessions and those imported never count."""
    monkeypatch.setattr(importing, "MAX_UNHELD_BYTES", 1 << 18)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for n in range(3):  # 3 times the bound of this machine's own, as much of beta's: hardly compressible
        for machine, name in ((alpha, f"a{n}"), (beta, f"b{n}")):
            _ended(machine, name, machine is alpha and "alpha" or "beta")
            with open(machine.board_file(name, "notes"), "a") as notes:
                notes.write(os.urandom(1 << 17).hex())
        _round(alpha, "alpha")
        _round(beta, "beta")
    shutil.rmtree(alpha.sync_repo)  # its next round reads the whole tree again
    assert sorted(_round(alpha, "alpha").imported) == ["b0", "b1", "b2"]
    _ended(beta, "b3", "beta")
    _round(beta, "beta")
    assert _round(alpha, "alpha").imported == ["b3"]


def test_a_machine_whose_own_sessions_come_to_more_than_one_import_reads_the_whole_tree_again(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import bound is on what an import writes: this machine's own sessions, read back whole, write nothing."""
    alpha, beta = _beta_session(tmp_path, bare)
    for n in range(3):  # 3 MiB of alpha's own
        _ended(alpha, f"a{n}", "alpha")
        with open(alpha.board_file(f"a{n}", "notes"), "a") as notes:
            notes.write(os.urandom(1 << 19).hex())
        assert _round(alpha, "alpha").pushed == 1
    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    monkeypatch.setattr(inbound, "MAX_IMPORT_BYTES", 2 << 20)  # under what alpha's own sessions come to
    shutil.rmtree(alpha.sync_repo)  # deleted to free space: the next round reads the whole tree again

    done = _round(alpha, "alpha")

    assert "b2" in done.imported and not done.refused


def test_a_remote_that_continues_this_machines_sessions_is_still_bound_by_what_the_import_writes(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions another machine went on in are imported: their bytes count, whoever first wrote them."""
    alpha, beta = _beta_session(tmp_path, bare)
    for n in range(3):
        _ended(alpha, f"a{n}", "alpha")
    _round(alpha, "alpha")
    _round(beta, "beta")
    with mock.patch.dict(os.environ, BLACKBOARD_HOST="beta"):  # beta resumes each of them and writes 1 MiB
        for n in range(3):
            session.start(beta, f"a{n}", "resume", {"cwd": beta.root}, settings_now())
            with open(beta.board_file(f"a{n}", "notes"), "a") as notes:
                notes.write(os.urandom(1 << 19).hex())
            session.end(beta, f"a{n}", "other", settings_now())
    _round(beta, "beta")
    monkeypatch.setattr(inbound, "MAX_IMPORT_BYTES", 2 << 20)

    with pytest.raises(TooLarge, match="to write here"):
        _round(alpha, "alpha")
    assert all(Path(alpha.board_file(f"a{n}", "notes")).stat().st_size < 1 << 20 for n in range(3))


def test_a_machine_that_started_its_sync_state_afresh_is_not_refused_for_its_own_sessions(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`state.json` set aside, as a paused sync says to: what the remote holds of this machine still has room."""
    monkeypatch.setattr(importing, "MAX_UNHELD_BYTES", 1 << 20)
    alpha, beta = _beta_session(tmp_path, bare)
    for n in range(3):  # 3 MiB of alpha's own, hardly compressible
        _ended(alpha, f"a{n}", "alpha")
        with open(alpha.board_file(f"a{n}", "notes"), "a") as notes:
            notes.write(os.urandom(1 << 19).hex())
        _round(alpha, "alpha")
    os.rename(alpha.sync_file("state.json"), alpha.sync_file("state.json") + ".aside")

    assert _round(alpha, "alpha").pushed == 3


def test_a_session_removed_here_stays_removed_when_another_machine_sent_it_again(tmp_path: Path, bare: str) -> None:
    """Beta removes x1, gamma goes on in it and sends it again, then alpha's cleanup removes it: alpha's word holds."""
    alpha, beta, gamma = (_machine(tmp_path, name, bare) for name in ("alpha", "beta", "gamma"))
    _ended(beta, "x1", "beta")
    for machine, host in ((beta, "beta"), (alpha, "alpha"), (gamma, "gamma")):
        _round(machine, host)
    shutil.rmtree(beta.get_session_blackboard_dir("x1"))
    sync.record_removal(beta, "x1")
    for machine, host in ((beta, "beta"), (alpha, "alpha"), (gamma, "gamma")):
        _round(machine, host)
    with mock.patch.dict(os.environ, BLACKBOARD_HOST="gamma"):
        session.start(gamma, "x1", "resume", {"cwd": gamma.root}, settings_now())
        session.end(gamma, "x1", "other", settings_now())
    _round(gamma, "gamma")
    shutil.rmtree(alpha.get_session_blackboard_dir("x1"))
    sync.record_removal(alpha, "x1")

    done = _round(alpha, "alpha")

    assert "x1" not in done.imported and not os.path.isdir(alpha.get_session_blackboard_dir("x1"))


@pytest.mark.parametrize(
    "data",
    [
        {"left": {"a1": -1}},
        {"left": {"a1": True}},
        {"pushed": []},
        {"removed": {"a": 1}},
        {"foreign": [1, 2]},
        {"foreign": {"a1": "big"}},
        {"pushed": {"a1": None}},
        {"imported_commit": 5},
    ],
    ids=[
        "left-negative",
        "left-true",
        "pushed-a-list",
        "removed-an-object",
        "foreign-numbers",
        "foreign-sizes-words",
        "pushed-null",
        "commit-a-number",
    ],
)
def test_a_state_of_another_shape_pauses_sync_rather_than_reading_as_empty(resolver: PathResolver, data: dict) -> None:
    os.makedirs(resolver.sync_dir)
    Path(resolver.sync_file("state.json")).write_text(json.dumps({"pushed": {"a1": "sig"}, **data}))
    with pytest.raises(sync.StatePaused, match="damaged"):
        sync.State.load(resolver)


def test_what_a_remote_sent_and_took_back_does_not_pile_up_in_the_private_repository(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote whose every commit brings 1 MiB that is refused here, and takes it back in the next."""
    monkeypatch.setattr(gitstore, "MAX_HISTORY_BYTES", 2 << 20)
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text().replace('"widget"', '"other"')
    store, sent = Store(alpha.sync_repo, os.environ), []
    for n in range(8):
        junk = os.urandom(1 << 20)
        sent.append(store.run(["hash-object", "--stdin"], stdin=junk).decode().strip())
        gone = [f"sessions/j{n - 1}/{name}" for name in ("_meta.json", "session-notes.md")] if n else []
        files = {f"sessions/j{n}/_meta.json": meta.replace('"b1"', f'"j{n}"').encode()}
        _hostile(bare, {**files, f"sessions/j{n}/session-notes.md": junk, **dict.fromkeys(gone)})

        done = _round(alpha, "alpha")

        assert done.imported == []
        assert any(line.startswith(f"j{n}: ") for line in done.refused)
    held = [sha for sha in sent if _exists(store, sha)]
    assert sent[0] not in held
    assert len(held) <= 4  # the newest, and what came since the last packing: never every round's
    assert sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file()) < 6 << 20
    assert sync.status(alpha, settings_now().host)["last_tidy"]["ok"] is True  # type: ignore[index]


def _exists(store: Store, sha: str) -> bool:
    try:
        store.run(["cat-file", "-e", sha])
    except GitFailed:
        return False
    return True


def test_session_start_takes_the_round_lock_only_when_the_remote_brought_something(tmp_path: Path, bare: str) -> None:
    from blackboard.locks import try_lock

    alpha, beta = _beta_session(tmp_path, bare)
    env = settings_now(BLACKBOARD_HOST="alpha")
    busy = try_lock(alpha.sync_file("round"))  # a round of alpha's runs
    assert busy is not None

    nothing_new = sync.finish_fetch(alpha, sync.start_fetch(alpha, env), env, time.monotonic() + 30)
    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    behind_the_round = sync.finish_fetch(alpha, sync.start_fetch(alpha, env), env, time.monotonic() + 30)
    busy()
    taken = sync.finish_fetch(alpha, sync.start_fetch(alpha, env), env, time.monotonic() + 30)

    assert nothing_new is not None and nothing_new.sessions == []  # the usual start: no wait, no skip
    assert behind_the_round is None  # the running round imports it
    assert taken is not None and taken.sessions == ["b2"]


def test_an_import_cut_short_keeps_the_commit_it_compares_against_through_gc(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit state.json names stays while gc prunes: the next import compares against it, not the whole tree."""
    monkeypatch.setattr(gitstore, "MAX_HISTORY_BYTES", 1 << 20)  # gc packs everything every round
    monkeypatch.setattr(inbound, "MAX_IMPORT_BYTES", 3 << 20)
    alpha, beta = _four_imported(tmp_path, bare)  # 2 MiB held, each import under 3 MiB
    _send_two(bare, beta, "r")
    real = importing.check_session

    class Late:  # the import's clock only: git's deadlines stay as they are
        monotonic = staticmethod(lambda: float("inf"))

    def the_deadline_passes_after_one(*args, **kwargs):  # type: ignore[no-untyped-def]
        taken = real(*args, **kwargs)
        monkeypatch.setattr(importing, "time", Late)
        return taken

    monkeypatch.setattr(importing, "check_session", the_deadline_passes_after_one)
    assert _round(alpha, "alpha").imported == ["r0"]
    monkeypatch.undo()
    monkeypatch.setattr(inbound, "MAX_IMPORT_BYTES", 3 << 20)
    kept = sync.State.load(alpha).imported
    assert kept is not None and _exists(Store(alpha.sync_repo, os.environ), kept)
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert "r1" in done.imported and done.pushed == 1  # not the whole tree again, over the import bound


def test_pushes_leave_no_loose_objects_and_no_ref_but_the_fetched_and_imported(tmp_path: Path, bare: str) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    for n in range(3):
        _ended(alpha, f"a{n}", "alpha")
        assert _round(alpha, "alpha").pushed == 1
    store = Store(alpha.sync_repo, os.environ)
    counts = dict(line.split(": ") for line in store.run(["count-objects", "-v"]).decode().splitlines())
    refs = store.run(["for-each-ref", "--format=%(refname)"]).decode().split()

    assert counts["count"] == "0"  # every object in a pack, which the history bound counts
    assert set(refs) <= {"refs/fetched", "refs/imported"}  # no snapshot of an old push kept for good


@pytest.mark.parametrize("left", ["shallow.lock", "packed-refs.lock", "refs/fetched.lock", "refs/imported.lock"])
def test_what_a_git_stopped_at_its_deadline_left_never_stops_later_rounds(tmp_path: Path, bare: str, left: str) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    Path(alpha.sync_repo, left).write_text("")  # a fetch killed at its deadline leaves shallow.lock
    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert done.imported == ["b2"] and done.pushed == 1


def test_a_round_whose_state_names_a_commit_no_longer_here_reads_the_whole_tree_and_goes_on(
    tmp_path: Path, bare: str
) -> None:
    """The private repository deleted to free space, or the commit pruned by an older version."""
    alpha, beta = _beta_session(tmp_path, bare)
    shutil.rmtree(alpha.sync_repo)
    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert "b2" in done.imported and done.pushed == 1
    assert sync.State.load(alpha).imported == Store(alpha.sync_repo, os.environ).resolve("refs/fetched")


def _own_meta(beta: PathResolver, session_id: str, host: str = "alpha") -> bytes:
    """Beta's b1 metadata, renamed and said to be ``host``'s."""
    meta = json.loads(Path(beta.meta_path("b1")).read_text())
    meta["session_id"], meta["host"] = session_id, host
    return json.dumps(meta).encode()


@pytest.mark.parametrize("kind", ["file", "dangling-link", "link-loop"])
def test_an_odd_local_entry_named_like_an_own_session_never_stops_a_round(tmp_path: Path, bare: str, kind: str) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    target = Path(alpha.sessions_dir, "x1")
    if kind == "file":
        target.write_text("a stray file")
    elif kind == "dangling-link":
        target.symlink_to(tmp_path / "gone")
    else:
        target.symlink_to(target)
    _hostile(bare, {"sessions/x1/_meta.json": _own_meta(beta, "x1")})  # the remote: "x1 is alpha's"
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert done.pushed == 1


def test_a_dangling_link_left_by_hand_for_a_pushed_session_never_stops_a_round(tmp_path: Path, bare: str) -> None:
    """No hostile remote: alpha's own a1, pushed; its folder later moved out and linked (the link now dangles)."""
    alpha, beta = _beta_session(tmp_path, bare)
    _ended(alpha, "a1", "alpha")
    _round(alpha, "alpha")
    moved = tmp_path / "elsewhere"
    shutil.move(alpha.get_session_blackboard_dir("a1"), moved)
    Path(alpha.get_session_blackboard_dir("a1")).symlink_to(moved)
    shutil.rmtree(moved)  # the disk it lived on is gone
    shutil.rmtree(alpha.sync_repo)  # (or a rewritten remote) the next import reads the whole tree
    _ended(beta, "b2", "beta")
    _round(beta, "beta")

    assert "b2" in _round(alpha, "alpha").imported


def _junk(n: int) -> dict:
    junk = os.urandom(1 << 20)
    return {f"junk/{n}-{i}": junk[i << 18 : (i + 1) << 18] for i in range(4)}


def _grow_until_refused(alpha: PathResolver, bare: str, base: dict, rounds: int = 12) -> tuple[Optional[int], int]:
    sent = dict(base)
    for n in range(rounds):
        sent.update(_junk(n))
        for path in [p for p in base if p.endswith("_meta.json")]:  # touched: listed whole every round
            meta = json.loads(base[path])
            meta["round"] = n
            sent[path] = json.dumps(meta).encode()
        _hostile(bare, sent)
        try:
            _round(alpha, "alpha")
        except TooLarge:
            return n, _repo_bytes(alpha)
    return None, _repo_bytes(alpha)


def _fake_own(beta: PathResolver, session_id: str, size: int) -> dict:
    """The remote's 'copy' of an own session: one zero blob named by every board file and the handoff."""
    zeros = bytes(size)
    files = {f"sessions/{session_id}/{n}": zeros for n in ("session-notes.md", "active-tasks.md", "shared-context.md")}
    files[f"sessions/{session_id}/_meta.json"] = _own_meta(beta, session_id)
    return files


@pytest.mark.parametrize("case", ["control", "active-session", "stray-big-file", "linked-folder"])
def test_a_remote_that_fattens_this_machines_unsent_sessions_keeps_no_more_here_round_after_round(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setattr(importing, "MAX_UNHELD_BYTES", 1 << 20)
    alpha, beta = _beta_session(tmp_path, bare)
    base: dict = {}
    if case == "active-session":  # alpha works in act1 (4 MiB of notes): never sent, so never in state.pushed
        with mock.patch.dict(os.environ, BLACKBOARD_HOST="alpha"):
            session.start(alpha, "act1", "startup", {"cwd": alpha.root}, settings_now())
        with open(alpha.board_file("act1", "notes"), "a") as notes:
            notes.write(os.urandom(2 << 20).hex())
        base = _fake_own(beta, "act1", 5 << 20)
    elif case == "stray-big-file":  # an own active session (never sent) with a sparse stray file in its folder
        with mock.patch.dict(os.environ, BLACKBOARD_HOST="alpha"):
            session.start(alpha, "act1", "startup", {"cwd": alpha.root}, settings_now())
        with open(Path(alpha.get_session_blackboard_dir("act1"), "dump.bin"), "wb") as f:
            f.truncate(1 << 30)  # 1 GiB by st_size, nothing on disk
        base = _fake_own(beta, "act1", 5 << 20)
    elif case == "linked-folder":  # a folder linked to one holding a sparse 1 GiB file (no meta: host None)
        big = tmp_path / "big"
        big.mkdir()
        with open(big / "f", "wb") as f:
            f.truncate(1 << 30)
        Path(alpha.sessions_dir, "l1").symlink_to(big)
        base = _fake_own(beta, "l1", 5 << 20)
    refused_at, on_disk = _grow_until_refused(alpha, bare, base)
    assert refused_at is not None and on_disk < 4 << 20


def test_a_session_removed_here_is_not_imported_back_on_a_whole_tree_read(tmp_path: Path, bare: str) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    shutil.rmtree(alpha.get_session_blackboard_dir("b1"))
    sync.record_removal(alpha, "b1")
    shutil.rmtree(alpha.sync_repo)
    os.rename(alpha.sync_file("state.json"), alpha.sync_file("state.json") + ".aside")
    done = _round(alpha, "alpha")
    assert "b1" not in done.imported and "sessions/b1/_meta.json" not in _remote_paths(bare)


def test_a_session_resumed_here_after_a_cleanup_removed_it_is_not_deleted_from_the_remote(
    tmp_path: Path, bare: str
) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    _ended(alpha, "a1", "alpha")
    _round(alpha, "alpha")
    shutil.rmtree(alpha.get_session_blackboard_dir("a1"))
    sync.record_removal(alpha, "a1")  # cleanup; no round ran since
    _ended(alpha, "a1", "alpha", note="resumed")  # claude --resume a1: the board starts afresh
    _round(alpha, "alpha")
    _round(alpha, "alpha")
    assert "sessions/a1/_meta.json" in _remote_paths(bare)


def test_a_new_remote_is_sent_everything_this_machine_wrote_and_nothing_it_imported(tmp_path: Path, bare: str) -> None:
    """Issue 32, point 21: state.json kept what was sent to the old remote, so the new one got nothing."""
    alpha, beta = _beta_session(tmp_path, bare)  # b1 imported here from beta
    _ended(alpha, "a1", "alpha")
    assert _round(alpha, "alpha").pushed == 1
    moved = tmp_path / "moved.git"
    Store(str(moved), os.environ).ensure()

    sync.enable(alpha, f"file://{moved}", settings_now())

    assert sync.status(alpha, "alpha")["pending_sessions"] == 1  # a1: never sent to this remote
    done = _round(alpha, "alpha")
    assert done.pushed == 1 and done.imported == [] and done.conflicts == []
    on_new = _remote_paths(str(moved))
    assert "sessions/a1/_meta.json" in on_new
    assert not [p for p in on_new if p.startswith("sessions/b1/")]  # beta sends its own, to whichever remote
    assert sync.status(alpha, "alpha")["pending_sessions"] == 0
    assert sync.State.load(alpha).foreign.keys() == {"b1"}  # what this machine holds stays

    sync.enable(alpha, f"file://{bare}", settings_now())  # and back: the old remote holds a1 already
    _ended(alpha, "a2", "alpha")
    assert _round(alpha, "alpha").pushed == 2  # sent again, as a new remote; a1 lands unchanged
    assert {"sessions/a1/_meta.json", "sessions/a2/_meta.json"} <= set(_remote_paths(bare))


def test_a_state_kept_before_remotes_were_recorded_is_the_configured_remotes(tmp_path: Path, bare: str) -> None:
    alpha, _ = _beta_session(tmp_path, bare)
    _ended(alpha, "a1", "alpha")
    _round(alpha, "alpha")
    path = Path(alpha.sync_file("state.json"))
    old = json.loads(path.read_text())
    del old["remote"]
    path.write_text(json.dumps(old))

    state = sync.State.load(alpha)

    assert state.remote == f"file://{bare}" and state.pushed.keys() == {"a1", "b1"} and state.imported
    assert sync.status(alpha, "alpha")["pending_sessions"] == 0


def _remote_sessions(bare: str) -> list[str]:
    return sorted({p.split("/")[1] for p in _remote_paths(bare) if p.startswith("sessions/")})


def test_a_machine_sends_its_newest_sessions_within_the_bound_and_keeps_the_rest_here(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blackboard.sync import outbound

    monkeypatch.setattr(outbound, "MAX_SESSIONS_SENT", 6)
    monkeypatch.setattr(outbound, "MIN_SESSIONS_SENT", 2)
    monkeypatch.setattr(outbound, "MAX_SESSIONS_PER_PUSH", 3)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for i in range(10):
        _ended(alpha, f"a{i:02}", "alpha")
    status = sync.status(alpha, "alpha")
    assert (status["pending_sessions"], status["kept_here"]) == (6, 4)

    assert _round(alpha, "alpha").pushed == 3  # the newest first, a push at a time
    assert _remote_sessions(bare) == ["a07", "a08", "a09"]
    assert _round(alpha, "alpha").pushed == 3
    assert _round(alpha, "alpha").pushed == 0
    assert _remote_sessions(bare) == [f"a{i:02}" for i in range(4, 10)]
    status = sync.status(alpha, "alpha")
    assert (status["pending_sessions"], status["kept_here"]) == (0, 4)
    assert any(line.startswith("kept here only: 4 ") for line in sync.status_lines(status))
    _round(beta, "beta")

    for i in (10, 11):  # two more: the two oldest on the remote make room, taken off it, not removed
        _ended(alpha, f"a{i:02}", "alpha")
    _round(alpha, "alpha")
    assert _remote_sessions(bare) == [f"a{i:02}" for i in range(6, 12)]
    assert not any(p.startswith("removed/") for p in _remote_paths(bare))
    assert sync.status(alpha, "alpha")["kept_here"] == 6
    assert all(os.path.isdir(alpha.get_session_blackboard_dir(f"a{i:02}")) for i in range(12))

    _ended(beta, "b1", "beta")  # the sessions it imported fill the bound: it still sends its own
    _round(beta, "beta")
    assert "b1" in _remote_sessions(bare)
    assert os.path.isdir(beta.get_session_blackboard_dir("a04"))  # what it imported stays
    assert sync.status(beta, "beta")["kept_here"] == 0


def test_a_session_another_machine_went_on_in_is_never_taken_off_the_remote_to_make_room(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blackboard import board
    from blackboard.sync import outbound

    monkeypatch.setattr(outbound, "MAX_SESSIONS_SENT", 4)
    monkeypatch.setattr(outbound, "MIN_SESSIONS_SENT", 2)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for i in range(4):
        _ended(beta, f"b{i}", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    with mock.patch.dict(os.environ, BLACKBOARD_HOST="alpha"):  # alpha goes on in beta's oldest
        quiet = settings_now(BLACKBOARD_DIGEST="0")
        session.start(alpha, "b0", "resume", {"cwd": alpha.root}, quiet)
        board.Board(alpha, "b0").note("alpha's part", "main")
        session.end(alpha, "b0", "other", quiet)
    _round(alpha, "alpha")
    _ended(beta, "b4", "beta")  # beta, which has not seen it, makes room for b4 by its oldest: b0

    _round(beta, "beta")

    assert "b0" in _remote_sessions(bare) and "b4" in _remote_sessions(bare)
    store = Store(bare, os.environ)
    notes = store.run(["show", "refs/blackboard/acme/widget:sessions/b0/session-notes.md"]).decode()
    assert "alpha's part" in notes


def test_a_remote_named_anew_while_a_round_runs_is_not_taken_for_the_one_it_pushed_to(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = _machine(tmp_path, "alpha", bare)
    _ended(alpha, "a1", "alpha")
    moved = tmp_path / "moved.git"
    Store(str(moved), os.environ).ensure()
    load = sync_state.State.load.__func__  # type: ignore[attr-defined]

    def enabled_meanwhile(cls: type, resolver: PathResolver, *args: object) -> sync.State:
        sync.enable(resolver, f"file://{moved}", settings_now())  # lands after the round read its remote
        return load(cls, resolver, *args)

    with monkeypatch.context() as patched:
        patched.setattr(sync_state.State, "load", classmethod(enabled_meanwhile))
        assert _round(alpha, "alpha").pushed == 1  # to the remote it fetched from
    assert "sessions/a1/_meta.json" in _remote_paths(bare)

    assert sync.status(alpha, "alpha")["pending_sessions"] == 1  # the new remote has nothing yet
    assert _round(alpha, "alpha").pushed == 1
    assert "sessions/a1/_meta.json" in _remote_paths(str(moved))


@pytest.mark.parametrize("spelling", ["trailing-slash", "path", "away-and-back"])
def test_a_remote_named_again_still_takes_another_machines_continuation(
    tmp_path: Path, bare: str, spelling: str
) -> None:
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(alpha, "a1", "alpha", "alpha's part")
    _round(alpha, "alpha")
    _round(beta, "beta")
    with mock.patch.dict(os.environ, BLACKBOARD_HOST="beta"):  # beta goes on in a1
        quiet = settings_now(BLACKBOARD_DIGEST="0")
        session.start(beta, "a1", "resume", {"cwd": beta.root}, quiet)
        from blackboard import board

        board.Board(beta, "a1").note("beta's part", "main")
        session.end(beta, "a1", "other", quiet)
    _round(beta, "beta")
    if spelling == "away-and-back":
        moved = tmp_path / "moved.git"
        Store(str(moved), os.environ).ensure()
        sync.enable(alpha, f"file://{moved}", settings_now())
        _round(alpha, "alpha")
    sync.enable(
        alpha, {"trailing-slash": f"file://{bare}/", "path": bare}.get(spelling, f"file://{bare}"), settings_now()
    )

    done = _round(alpha, "alpha")

    assert done.conflicts == [] and sync.State.load(alpha).conflicts == {}
    assert "beta's part" in Path(alpha.board_file("a1", "notes")).read_text()


def test_a_machine_keeps_only_its_newest_removal_markers_on_the_remote(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blackboard.sync import outbound

    monkeypatch.setattr(outbound, "MAX_MARKERS_SENT", 3)
    alpha = _machine(tmp_path, "alpha", bare)
    for i in range(5):
        _ended(alpha, f"a{i}", "alpha")
    _round(alpha, "alpha")
    for i in range(5):  # as cleanup removes them, one round apart
        sync.record_removal(alpha, f"a{i}")
        shutil.rmtree(alpha.get_session_blackboard_dir(f"a{i}"))
        os.unlink(alpha.handoff_path(f"a{i}"))
        _round(alpha, "alpha")

    markers = sorted(p for p in _remote_paths(bare) if p.startswith("removed/"))
    assert markers == ["removed/a2", "removed/a3", "removed/a4"]
    assert not any(p.startswith("sessions/") for p in _remote_paths(bare))
    assert list(sync.State.load(alpha).markers) == ["a2", "a3", "a4"]
