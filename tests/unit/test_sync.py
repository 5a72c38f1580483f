"""Sync's parts on their own: opting in, the private store, reading a remote tree (ADR 19)."""

import json
import os
import time
from pathlib import Path

import pytest

from blackboard import registry, settings, sync
from blackboard.errors import BlackboardError
from blackboard.gitstore import Entry, GitFailed, Store
from blackboard.paths import PathResolver
from blackboard.project import Project


def test_enable_uses_origin_and_disable_turns_it_off(resolver: PathResolver) -> None:
    assert not sync.enabled(resolver)
    assert sync.enable(resolver, None, os.environ) == "git@github.com:acme/widget.git"
    assert sync.enabled(resolver)
    assert json.loads(Path(resolver.sync_file("config.json")).read_text())["ref"] == "refs/blackboard/acme/widget"
    assert os.path.isfile(os.path.join(resolver.sync_repo, "HEAD"))
    assert sync.disable(resolver) is True
    assert sync.disable(resolver) is False
    assert not sync.enabled(resolver)


def test_a_project_without_origin_needs_a_remote(root: Path) -> None:
    local = PathResolver(str(root), Project("local", "app-1234abcd", None, "test"))
    with pytest.raises(BlackboardError, match="sync enable --remote URL"):
        sync.enable(local, None, os.environ)


@pytest.mark.parametrize("url", ["--upload-pack=touch /tmp/x", "-oProxyCommand=x", "https://x/\ny", "a\0b"])
def test_a_remote_that_could_pass_for_an_option_is_refused(resolver: PathResolver, url: str) -> None:
    with pytest.raises(BlackboardError, match="not a git remote"):
        sync.enable(resolver, url, os.environ)
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
    assert settings.sync_timeout(environ) == expected


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
    layout = sync._Layout([_entry(path, mode, kind, size), _entry("sessions/ok/_meta.json")])
    assert list(layout.sessions) == ["ok"]
    (problem,) = layout.problems
    assert why in problem


def test_a_session_with_a_refused_file_is_refused_whole() -> None:
    layout = sync._Layout([_entry("sessions/s1/_meta.json"), _entry("sessions/s1/session-notes.md", "120000")])
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
    assert store.changed_paths(first, second) == ["big", "sessions/a/_meta.json"]
    big = store.tree(second)[0]
    assert list(store.blobs([big.sha, "f" * 40], limit=1000)) == [(big.sha, b"y" * 100), ("f" * 40, None)]
    assert list(store.blobs([big.sha], limit=10)) == [(big.sha, None)]


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
    found = dict(store.blobs([e.sha for e in entries], limit=1 << 20))
    assert len(found) == 3000
    assert all(found[e.sha] is not None for e in entries)
