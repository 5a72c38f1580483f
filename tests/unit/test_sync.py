"""Sync's parts on their own: opting in, the private store, reading a remote tree (ADR 19)."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Optional
from unittest import mock

import pytest

from blackboard import gitstore, machines, registry, session, sync
from blackboard.errors import BlackboardError
from blackboard.gitstore import Entry, GitFailed, Store, TooLarge
from blackboard.paths import PathResolver
from blackboard.project import Project
from blackboard.settings import Settings
from blackboard.sync import importing, inbound, remote
from blackboard.sync import round as sync_round_module
from helpers import settings_now


def test_enable_uses_origin_and_disable_turns_it_off(resolver: PathResolver) -> None:
    assert not sync.enabled(resolver)
    assert sync.enable(resolver, None, settings_now()) == "git@github.com:acme/widget.git"
    assert sync.enabled(resolver)
    assert (
        json.loads(Path(resolver.sync_file("config.json")).read_text())["ref"] == "refs/blackboard-machines/acme/widget"
    )
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
    from blackboard import board

    with mock.patch.dict(os.environ, BLACKBOARD_HOST=host):  # the machine's name, in its metadata and handoff
        quiet = settings_now(BLACKBOARD_DIGEST="0")  # no checkout here for git to be asked about
        session.start(resolver, session_id, "startup", {"cwd": resolver.root}, quiet)
        board.Board(resolver, session_id).note(note, "main")
        session.end(resolver, session_id, "other", quiet)


def _round(resolver: PathResolver, host: str) -> sync.Round:
    return sync.sync_round(resolver, settings_now(BLACKBOARD_HOST=host))


def _remote_paths(bare: str) -> list:
    """Every file of every machine's ref (a file two refs hold, twice)."""
    store = Store(bare, os.environ)
    refs = store.run(["for-each-ref", "--format=%(objectname)", "refs/blackboard-machines/acme/widget/"]).split()
    return sorted(e.path for ref in refs for e in store.tree(ref.decode()))


def _ref_name(bare: str) -> str:
    """The name of the one machine's ref the remote holds."""
    store = Store(bare, os.environ)
    (ref,) = store.run(["for-each-ref", "--format=%(refname)", "refs/blackboard-machines/acme/widget/"]).split()
    return ref.decode()


def _own_ref(bare: str) -> str:
    """The commit of the one machine's ref the remote holds."""
    store = Store(bare, os.environ)
    (ref,) = store.run(["for-each-ref", "--format=%(objectname)", "refs/blackboard-machines/acme/widget/"]).split()
    return ref.decode()


HOSTILE = "refs/blackboard-machines/acme/widget/" + "c" * 32  # a machine's ref, written by a hostile remote


def _copy(resolver: PathResolver, session_id: str, name: str = "") -> Path:
    """The copy of another machine's session here (whichever machine sent it), or one of its files."""
    (found,) = Path(resolver.sync_dir).glob(f"machines/*/sessions/{session_id}")
    return found / name if name else found


def _copy_handoff(resolver: PathResolver, session_id: str) -> Path:
    (found,) = Path(resolver.sync_dir).glob(f"machines/*/handoff/handoff-{session_id}.md")
    return found


def test_a_push_of_another_machine_meanwhile_is_no_reason_to_push_again(
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

    assert done.pushed == 1  # each machine writes its own ref: beta's push is no reason to try again
    paths = _remote_paths(bare)
    assert "sessions/a1/_meta.json" in paths
    assert "sessions/b1/_meta.json" in paths


def _hostile(bare: str, files: dict, ref: Optional[str] = None) -> None:
    """Change a machine's ref as a hostile remote would: ``ref``, else the one machine's ref it holds, else
    a ref of a machine of its own (``HOSTILE``)."""
    store = Store(bare, os.environ)
    refs = store.run(["for-each-ref", "--format=%(refname)", "refs/blackboard-machines/acme/widget/"]).split()
    ref = ref or (refs[0].decode() if len(refs) == 1 else HOSTILE)
    parent = store.resolve(ref)
    store.commit(ref, parent, "hostile", "x <x@x>", list(files.items()))


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

    assert "the final version" in _copy_handoff(alpha, "b1").read_text()


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
    folder = _copy(alpha, "b1")
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

    done = _round(alpha, "alpha")

    assert any("over 8 MiB" in line and "nothing kept" in line for line in done.refused)
    assert not list(Path(alpha.sync_dir).glob("machines/*/sessions/x9"))
    assert _objects(alpha.sync_repo) <= held + 2  # the refused commit's objects are gone
    size = sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file())
    assert size < 1 << 20


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
    betas = _ref_name(bare)
    paths = _remote_paths(bare)
    last = [p for p in paths if p.startswith("sessions/b3/")]
    assert len(last) > 1
    monkeypatch.setattr(gitstore, "MAX_ENTRIES", len(paths) - 1)  # git is stopped inside b3's folder
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")

    assert sorted(done.imported) == ["b0", "b1", "b2"]  # b3, cut part-way, is refused whole
    assert any(f"over {len(paths) - 1} files" in line and "sessions/b3" in line for line in done.refused)
    assert not list(Path(alpha.sync_dir).glob("machines/*/sessions/b3"))
    monkeypatch.undo()
    assert done.pushed == 1 and "sessions/a1/_meta.json" in _remote_paths(bare)

    gone = ("sessions/b0", "handoff/handoff-b0.md", "sessions/b1", "handoff/handoff-b1.md")
    _hostile(bare, dict.fromkeys(gone), betas)  # the remote is within the bound again: what was past the cut comes
    monkeypatch.setattr(gitstore, "MAX_ENTRIES", len(paths) - 1)
    assert "b3" in _round(alpha, "alpha").imported


def test_a_tree_of_junk_over_its_entry_cap_is_read_in_bounded_memory_and_refused(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha = _machine(tmp_path, "alpha", bare)
    monkeypatch.setattr(gitstore, "MAX_ENTRIES", 500)
    _hostile(bare, {f"junk/{i}": b"x%d" % i for i in range(2000)})
    store = Store(bare, os.environ)
    entries, more = store.tree_head(store.resolve(HOSTILE))
    assert len(entries) == 500 and more
    with pytest.raises(TooLarge, match="over 500 files"):
        store.tree(store.resolve(HOSTILE))

    done = _round(alpha, "alpha")
    assert any("over 500 files" in line for line in done.refused)
    assert any("junk/" in line and "not part of the board layout" in line for line in done.refused)


def test_handoffs_are_redacted_again_when_pushed(tmp_path: Path, bare: str) -> None:
    alpha = _machine(tmp_path, "alpha", bare)
    _ended(alpha, "a1", "alpha")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    path = Path(alpha.handoff_path("a1"))
    path.write_text(path.read_text() + f"\nwritten by an older plugin: {token}\n")
    _round(alpha, "alpha")
    store = Store(bare, os.environ)
    (entry,) = [e for e in store.tree(_own_ref(bare)) if e.path.startswith("handoff/")]
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
    tidy = sync.status(alpha, settings_now())["last_tidy"]
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
    assert inbound.active_records(json.dumps(record).encode()) == []
    Path(resolver.sync_dir).mkdir(parents=True)
    row = {"host": "evil", "session_id": "x1", "since": "?", "updated": time.time() + 86400}
    Path(resolver.sync_file("remote-active.json")).write_text(json.dumps({"machines": {"evil": [row]}}))
    assert registry.remote_active(resolver) == []  # an older version's file: dropped when read, too


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
    ref = _ref_name(bare)
    tree = store.run(["rev-parse", f"{ref}^{{tree}}"]).decode().strip()
    store.run(["update-ref", ref, tree])
    alpha = _machine(tmp_path, "alpha", bare)
    _ended(alpha, "a1", "alpha")

    done = _round(alpha, "alpha")  # one machine's broken ref stops no round

    assert done.pushed == 1 and any("names no commit" in line for line in done.refused)

    status = sync.status(alpha, settings_now())
    assert status["last_fetch"]["ok"] is False  # type: ignore[index]
    assert "names no commit" in status["last_fetch"]["detail"]  # type: ignore[index]
    assert not list(Path(alpha.sync_repo).glob("fast_import_crash_*"))


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


def test_a_small_pack_that_would_write_much_writes_no_more_than_a_rounds_bound(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One blob named by many sessions' files: a tiny pack, and many times its size on disk."""
    monkeypatch.setattr(importing, "MAX_IMPORT_BYTES", 2 << 20)
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text()
    blob = os.urandom(300 * 1024)
    files = {}
    for i in range(10):  # 10 sessions x 3 MiB... of one 300 KiB blob
        files[f"sessions/x{i}/_meta.json"] = meta.replace('"b1"', f'"x{i}"').encode()
        files.update({f"sessions/x{i}/{name}": blob for name in ("session-notes.md", "active-tasks.md")})
    _hostile(bare, files)

    done = _round(alpha, "alpha")

    assert any("in one round" in line for line in done.refused)
    written = sum(p.stat().st_size for p in Path(alpha.sync_dir).glob("machines/*/sessions/x*/*"))
    assert 0 < written <= 2 << 20  # what one round writes is bounded; the rest waits for the next


def _beta_session(tmp_path: Path, bare: str) -> tuple[PathResolver, PathResolver]:
    """alpha and beta syncing through ``bare``; beta has sent b1, a finished session, and alpha took it."""
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    _ended(beta, "b1", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    return alpha, beta


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
    assert not list(Path(alpha.sync_dir).glob("machines/*/handoff/handoff-b2.md"))


@pytest.mark.parametrize(
    "kind",
    ["refused-sessions", "outside-the-layout", "long-names", "fattened-own-sessions", "other-machines-active-records"],
)
def _repo_bytes(resolver: PathResolver) -> int:
    return sum(p.stat().st_size for p in Path(resolver.sync_repo).rglob("*") if p.is_file())


@pytest.mark.parametrize("kind", ["a-chain-of-tags", "a-blob", "a-tree"])
def test_a_ref_that_names_no_commit_is_refused_and_what_its_fetch_brought_leaves_the_disk(
    tmp_path: Path, bare: str, kind: str
) -> None:
    """A tag, each round a new one on the last (the commit beneath unchanged), a blob or a tree: 1 MiB a round."""
    alpha, _ = _beta_session(tmp_path, bare)
    remote = Store(bare, os.environ)
    ref = _ref_name(bare)
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

        assert any("names no commit" in line for line in _round(alpha, "alpha").refused)

        assert not os.path.lexists(alpha.sync_file("unsettled"))  # forgotten at once, within the round's time
        assert _repo_bytes(alpha) < before + (256 << 10), f"round {n}"
    assert sync.status(alpha, settings_now())["last_fetch"]["ok"] is False  # type: ignore[index]
    remote.run(["update-ref", ref, str(good)])  # the remote mends its ref

    _round(alpha, "alpha")

    assert _repo_bytes(alpha) < before + (256 << 10)


@pytest.mark.parametrize("name", ["Thumbs.db", "desktop.ini", "DESKTOP.INI"])
def test_a_session_named_like_an_operating_systems_litter_is_refused(tmp_path: Path, bare: str, name: str) -> None:
    """Listings skip such a folder: imported, each round would forget it, and count it again as one that left."""
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text().replace('"b1"', json.dumps(name))
    _hostile(bare, {f"sessions/{name}/_meta.json": meta.encode()})

    done = _round(alpha, "alpha")

    assert done.imported == [] and any(name in line for line in done.refused)
    assert not list(Path(alpha.sync_dir).glob(f"machines/*/sessions/{name}"))


def test_a_pack_a_killed_fetch_left_with_its_keep_file_is_forgotten(tmp_path: Path, bare: str) -> None:
    alpha, _ = _beta_session(tmp_path, bare)
    store = Store(alpha.sync_repo, os.environ)
    junk = store.run(["hash-object", "-w", "--stdin"], stdin=os.urandom(1 << 20)).decode().strip()
    pack = store.run(["pack-objects", os.path.join(alpha.sync_repo, "objects", "pack", "pack")], stdin=junk.encode())
    Path(alpha.sync_repo, "objects", "pack", f"pack-{pack.decode().strip()}.keep").write_text("fetch")

    store.forget(remote.MINE, store.resolve(remote.MINE))

    assert not _exists(store, junk)
    assert _repo_bytes(alpha) < 256 << 10


def test_session_start_leaves_what_it_fetched_and_refused_for_its_round_to_forget(tmp_path: Path, bare: str) -> None:
    """A repack can take seconds: SessionStart, which a person waits on, never runs one."""
    alpha, _ = _beta_session(tmp_path, bare)
    remote_store = Store(bare, os.environ)
    ref = _ref_name(bare)
    good = remote_store.resolve(ref)
    blob = remote_store.run(["hash-object", "-w", "--stdin"], stdin=os.urandom(1 << 20)).decode().strip()
    remote_store.run(["update-ref", ref, blob])
    env = settings_now(BLACKBOARD_HOST="alpha")
    before = _repo_bytes(alpha)

    done = sync.finish_fetch(alpha, sync.start_fetch(alpha, env), env, time.monotonic() + 30)

    assert done is not None and any("names no commit" in line for line in done.refused)
    assert os.path.lexists(alpha.sync_file("unsettled")) and _repo_bytes(alpha) > before + (512 << 10)
    remote_store.run(["update-ref", ref, str(good)])  # mended: the round forgets what came
    _round(alpha, "alpha")
    assert not os.path.lexists(alpha.sync_file("unsettled")) and _repo_bytes(alpha) < before + (256 << 10)
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
    assert "ran out of time" in sync.status(alpha, settings_now())["last_settle"]["detail"]  # type: ignore[index]
    assert any("ran out of time" in line for line in sync.status_lines(sync.status(alpha, settings_now())))


@pytest.mark.parametrize(
    "data",
    [
        {"known": {"x": 1}},
        {"retry": {"x": "a1"}},
        {"pushed": []},
        {"mine": 5},
        {"refused": [1]},
        {"pushed": {"a1": None}},
    ],
    ids=["known-numbers", "retry-a-string", "pushed-a-list", "mine-a-number", "refused-numbers", "pushed-null"],
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
        assert any(f": j{n}: " in line for line in done.refused)
    held = [sha for sha in sent if _exists(store, sha)]
    assert sent[0] not in held
    assert len(held) <= 4  # the newest, and what came since the last packing: never every round's
    assert sum(p.stat().st_size for p in Path(alpha.sync_repo).rglob("*") if p.is_file()) < 6 << 20
    assert sync.status(alpha, settings_now())["last_tidy"]["ok"] is True  # type: ignore[index]


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


def test_pushes_leave_no_loose_objects_and_no_ref_but_the_fetched_imported_and_pushed(
    tmp_path: Path, bare: str
) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    for n in range(3):
        _ended(alpha, f"a{n}", "alpha")
        assert _round(alpha, "alpha").pushed == 1
    store = Store(alpha.sync_repo, os.environ)
    counts = dict(line.split(": ") for line in store.run(["count-objects", "-v"]).decode().splitlines())
    refs = store.run(["for-each-ref", "--format=%(refname)"]).decode().split()

    assert counts["count"] == "0"  # every object in a pack, which the history bound counts
    kept = {r.rsplit("/", 1)[0] if r.startswith(("refs/machines/", "refs/imported/")) else r for r in refs}
    assert kept <= {"refs/machines", "refs/imported", "refs/mine", "refs/pushing"}  # no old push kept for good


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
    state = sync.State.load(alpha)
    assert set(state.known.values()) == {
        Store(alpha.sync_repo, os.environ).resolve(f"refs/machines/{m}") for m in state.known
    }


def _own_meta(beta: PathResolver, session_id: str, host: str = "alpha") -> bytes:
    """Beta's b1 metadata, renamed and said to be ``host``'s."""
    meta = json.loads(Path(beta.meta_path("b1")).read_text())
    meta["session_id"], meta["host"] = session_id, host
    return json.dumps(meta).encode()


@pytest.mark.parametrize("kind", ["file", "dangling-link", "link-loop"])
def test_an_odd_local_entry_named_like_an_own_session_never_stops_a_round(tmp_path: Path, bare: str, kind: str) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    Path(alpha.sessions_dir).mkdir(parents=True, exist_ok=True)
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


def _fake_own(beta: PathResolver, session_id: str, size: int) -> dict:
    """The remote's 'copy' of an own session: one zero blob named by every board file and the handoff."""
    zeros = bytes(size)
    files = {f"sessions/{session_id}/{n}": zeros for n in ("session-notes.md", "active-tasks.md", "shared-context.md")}
    files[f"sessions/{session_id}/_meta.json"] = _own_meta(beta, session_id)
    return files


def test_a_new_remote_is_sent_everything_this_machine_wrote_and_nothing_it_imported(tmp_path: Path, bare: str) -> None:
    """Issue 32, point 21: state.json kept what was sent to the old remote, so the new one got nothing."""
    alpha, beta = _beta_session(tmp_path, bare)  # b1 imported here from beta
    _ended(alpha, "a1", "alpha")
    assert _round(alpha, "alpha").pushed == 1
    moved = tmp_path / "moved.git"
    Store(str(moved), os.environ).ensure()

    sync.enable(alpha, f"file://{moved}", settings_now())

    assert (
        sync.status(alpha, settings_now(BLACKBOARD_HOST="alpha"))["pending_sessions"] == 1
    )  # a1: never sent to this remote
    done = _round(alpha, "alpha")
    assert done.pushed == 1 and done.imported == []
    on_new = _remote_paths(str(moved))
    assert "sessions/a1/_meta.json" in on_new
    assert not [p for p in on_new if p.startswith("sessions/b1/")]  # beta sends its own, to whichever remote
    assert sync.status(alpha, settings_now(BLACKBOARD_HOST="alpha"))["pending_sessions"] == 0
    assert _copy(alpha, "b1").is_dir()  # what this machine holds stays

    sync.enable(alpha, f"file://{bare}", settings_now())  # and back: the old remote holds a1 already
    _ended(alpha, "a2", "alpha")
    assert _round(alpha, "alpha").pushed == 2  # sent again, as a new remote; a1 lands unchanged
    assert {"sessions/a1/_meta.json", "sessions/a2/_meta.json"} <= set(_remote_paths(bare))


def _remote_sessions(bare: str) -> list[str]:
    return sorted({p.split("/")[1] for p in _remote_paths(bare) if p.startswith("sessions/")})


def test_a_machine_sends_its_newest_sessions_within_the_bound_and_keeps_the_rest_here(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blackboard.sync import outbound

    monkeypatch.setenv("BLACKBOARD_SYNC_MAX_SESSIONS", "6")
    monkeypatch.setattr(outbound, "MAX_SESSIONS_PER_PUSH", 3)
    alpha, beta = _machine(tmp_path, "alpha", bare), _machine(tmp_path, "beta", bare)
    for i in range(10):
        _ended(alpha, f"a{i:02}", "alpha")
    status = sync.status(alpha, settings_now(BLACKBOARD_HOST="alpha"))
    assert (status["pending_sessions"], status["kept_here"]) == (6, 4)

    assert _round(alpha, "alpha").pushed == 3  # the newest first, a push at a time
    assert _remote_sessions(bare) == ["a07", "a08", "a09"]
    assert _round(alpha, "alpha").pushed == 3
    assert _round(alpha, "alpha").pushed == 0
    assert _remote_sessions(bare) == [f"a{i:02}" for i in range(4, 10)]
    status = sync.status(alpha, settings_now(BLACKBOARD_HOST="alpha"))
    assert (status["pending_sessions"], status["kept_here"]) == (0, 4)
    assert any(line.startswith("kept here only: 4 ") for line in sync.status_lines(status))
    _round(beta, "beta")

    for i in (10, 11):  # two more: the two oldest on the remote make room, taken off it, not removed
        _ended(alpha, f"a{i:02}", "alpha")
    _round(alpha, "alpha")
    assert _remote_sessions(bare) == [f"a{i:02}" for i in range(6, 12)]
    assert not any(p.startswith("removed/") for p in _remote_paths(bare))
    assert sync.status(alpha, settings_now(BLACKBOARD_HOST="alpha"))["kept_here"] == 6
    assert all(os.path.isdir(alpha.get_session_blackboard_dir(f"a{i:02}")) for i in range(12))

    _ended(beta, "b1", "beta")  # the sessions it imported count against no bound of its own ref
    _round(beta, "beta")
    assert "b1" in _remote_sessions(bare)
    assert _copy(beta, "a04").is_dir()  # what it imported stays, though alpha's ref holds it no more
    assert sync.status(beta, settings_now(BLACKBOARD_HOST="beta"))["kept_here"] == 0


def test_rounds_that_each_bring_new_sessions_stop_at_what_copies_may_hold_here_in_all(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote that sends new sessions before every round cannot fill the disk one bounded round at a time."""
    monkeypatch.setattr(importing, "MAX_HELD_BYTES", 3 << 20)
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text()
    refused = []
    for n in range(6):  # 1 MiB of new bytes a round
        files = {f"sessions/x{n}/_meta.json": meta.replace('"b1"', f'"x{n}"').encode()}
        files[f"sessions/x{n}/session-notes.md"] = os.urandom(1 << 19).hex().encode()
        _hostile(bare, files)
        refused += _round(alpha, "alpha").refused
    held = sum(p.stat().st_size for p in Path(alpha.sync_dir).glob("machines/*/sessions/*/*"))
    assert held <= 3 << 20
    assert any("would pass 3 MiB" in line and "cleanup" in line for line in refused)
    assert sync.State.load(alpha).retry == {} and sync.State.load(alpha).held <= 3 << 20


def _machine_ref(bare: str, machine: str, files: dict, when: int) -> None:
    """A ref of machine ``machine`` holding ``files``, committed at ``when`` (seconds since the epoch)."""
    store = Store(bare, os.environ)
    blobs = {
        path: store.run(["hash-object", "-w", "--stdin"], stdin=data).decode().strip() for path, data in files.items()
    }
    index = dict(os.environ, GIT_INDEX_FILE=str(Path(bare) / f"index-{machine}"))
    for path, sha in blobs.items():
        subprocess.run(
            ["git", f"--git-dir={bare}", "update-index", "--add", "--cacheinfo", f"100644,{sha},{path}"],
            env=index,
            check=True,
        )
    tree = subprocess.run(
        ["git", f"--git-dir={bare}", "write-tree"], env=index, capture_output=True, text=True, check=True
    ).stdout.strip()
    dated = dict(
        index,
        GIT_COMMITTER_DATE=f"{when} +0000",
        GIT_AUTHOR_DATE=f"{when} +0000",
        GIT_COMMITTER_NAME="x",
        GIT_COMMITTER_EMAIL="x@x",
        GIT_AUTHOR_NAME="x",
        GIT_AUTHOR_EMAIL="x@x",
    )
    commit = subprocess.run(
        ["git", f"--git-dir={bare}", "commit-tree", tree, "-m", "m"],
        env=dated,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    store.run(["update-ref", f"refs/blackboard-machines/acme/widget/{machine}", commit])


def test_a_reader_reads_the_newest_refs_by_commit_time_each_to_its_bound(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text()
    monkeypatch.setattr(sync_round_module, "MAX_REFS", 3)
    monkeypatch.setenv("BLACKBOARD_SYNC_MAX_SESSIONS", "2")
    now = int(time.time())
    for n in range(5):  # machine n committed n hours ago; each holds three sessions
        files = {f"sessions/m{n}s{i}/_meta.json": meta.replace('"b1"', f'"m{n}s{i}"').encode() for i in range(3)}
        _machine_ref(bare, f"{n:x}" * 32, files, now - 3600 * n - 60)

    done = _round(alpha, "alpha")

    copies = sorted(p.name for p in Path(alpha.sync_dir).glob("machines/*/sessions/*"))
    assert copies == ["b1", "m0s0", "m0s1", "m1s0", "m1s1"]  # beta's and the two newest: three refs, two each
    assert any("holds over 2 sessions" in line for line in done.refused)


def test_what_copies_hold_here_is_measured_whole_once_an_hour_and_near_the_bound(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stat of every copied file was most of a round's time with 5 000 sessions here: between whole measures
    each import adds what it writes, and the figure stays within the bound."""
    alpha, beta = _beta_session(tmp_path, bare)  # alpha's first round measured
    measured: list[int] = []
    real = sync_round_module.held_bytes
    monkeypatch.setattr(sync_round_module, "held_bytes", lambda r: measured.append(1) or real(r))
    first = sync.State.load(alpha)
    assert first.measured is not None and first.held > 0

    _ended(beta, "b2", "beta")
    _round(beta, "beta")
    _round(alpha, "alpha")
    state = sync.State.load(alpha)
    assert measured == [] and state.held > first.held  # not measured: b2's files added to the figure
    assert state.held == real(alpha)  # and the figure is what a measure gives

    state.measured = time.time() - sync_round_module.MEASURE_EVERY - 1  # an hour on
    state.save(alpha)
    _round(alpha, "alpha")
    assert measured == [1]
    monkeypatch.setattr(importing, "MAX_HELD_BYTES", int(state.held / sync_round_module.NEAR_BOUND) - 1)
    _round(alpha, "alpha")  # near the bound: every round measures
    assert measured == [1, 1]


def test_a_measure_taken_in_a_round_with_nothing_new_to_import_is_kept(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """State written before what copies hold was counted (no ``held``): the first round after measures, and that
    figure stands even when nothing new came; else for an hour each import counts from nothing, past the bound."""
    alpha, beta = _beta_session(tmp_path, bare)
    real = sync_round_module.held_bytes
    state_file = Path(alpha.sync_file("state.json"))
    older = json.loads(state_file.read_text())
    del older["held"], older["measured"]
    state_file.write_text(json.dumps(older))

    _round(alpha, "alpha")  # nothing new on the remote
    assert sync.State.load(alpha).held == real(alpha) > 0

    monkeypatch.setattr(importing, "MAX_HELD_BYTES", real(alpha) + (1 << 19))
    meta = Path(beta.meta_path("b1")).read_text()
    _hostile(
        bare,
        {
            "sessions/x1/_meta.json": meta.replace('"b1"', '"x1"').encode(),
            "sessions/x1/session-notes.md": b"y" * (1 << 19),
        },
    )
    _round(alpha, "alpha")
    assert real(alpha) <= importing.MAX_HELD_BYTES


def test_a_cleanup_of_copies_makes_room_for_the_next_round(
    tmp_path: Path, bare: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session refused at the bound is taken by the round after the cleanup the refusal asks for: the copies'
    folders changed since the last round, so it measures what they hold."""
    alpha, beta = _beta_session(tmp_path, bare)
    meta = Path(beta.meta_path("b1")).read_text()

    def send(session_id: str) -> None:
        notes = b"y" * (400 << 10)
        own = meta.replace('"b1"', f'"{session_id}"').encode()
        _hostile(bare, {f"sessions/{session_id}/_meta.json": own, f"sessions/{session_id}/session-notes.md": notes})

    send("x1")
    _round(alpha, "alpha")
    source = _copy(alpha, "x1").parent.parent.name
    monkeypatch.setattr(importing, "MAX_HELD_BYTES", 700 << 10)  # x1 holds under NEAR_BOUND of it
    machines.remove_copy(alpha, source, "x1")  # what `blackboard cleanup` does to an old copy
    send("x2")
    done = _round(alpha, "alpha")
    assert not any("would pass" in line for line in done.refused)
    assert _copy(alpha, "x2").is_dir()
