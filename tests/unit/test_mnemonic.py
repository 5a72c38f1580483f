"""A mnemonic user's flat files are found without configuration and copied in once (ADR 17)."""

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from blackboard import handoff, migrate, mnemonic
from blackboard.paths import PathResolver
from helpers import run_cli

NOTES = b"---\n**Session:** m-1\n**Time:** 2026-03-01T00:00:00Z\n\nthe note mnemonic kept\r\n"
TASKS = b"- [ ] finish the \xff\xfe port\n"


def _store(home: Path, *parts: str) -> Path:
    """mnemonic's project board under its default store, ``~/.claude/mnemonic/...``."""
    board = home.joinpath(".claude", "mnemonic", *parts)
    board.mkdir(parents=True)
    (board / "session-notes.md").write_bytes(NOTES)
    (board / "active-tasks.md").write_bytes(TASKS)
    return board


def _run(resolver: PathResolver, home: Path) -> list:
    return migrate.migrate_if_needed(resolver, str(resolver.project.toplevel), str(home), os.environ)


def _manifest(folder: str) -> dict:
    return json.loads(Path(folder, "_migration.json").read_text())


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        pytest.param("git@github.com:acme/widget.git", ("acme", "widge"), id="rstrip-eats-the-t"),
        pytest.param("https://github.com/acme/digit.git", ("acme", "d"), id="rstrip-eats-igit"),
        pytest.param("https://github.com/acme/widget", ("acme", "widge"), id="no-suffix-still-stripped"),
        pytest.param("git@gitlab.com:a/b/widget.git", ("a", "widge"), id="scp-org-is-first-folder"),
        pytest.param(None, ("default", "app"), id="no-remote"),
    ],
)
def test_upstream_naming_quirks_are_reproduced(remote: str, expected: tuple) -> None:
    assert mnemonic.upstream_name(remote, "/work/app") == expected


def test_flat_files_in_the_default_store_are_copied_once_byte_for_byte(
    resolver: PathResolver, isolated_home: Path
) -> None:
    source = _store(isolated_home, "acme", "widge", ".blackboard")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in source.iterdir()}

    copied = _run(resolver, isolated_home)

    assert sorted(Path(m.destination).name for m in copied) == ["active-tasks.md", "session-notes.md"]
    assert all(m.copy for m in copied)
    for move in copied:
        assert Path(move.destination).read_bytes() == Path(move.source).read_bytes()
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in source.iterdir()}
    assert after == before  # mnemonic's store is only read
    (run,) = _manifest(resolver.get_legacy_dir())["migrations"]
    assert run["copied"] is True
    assert run["source"] == str(source)
    assert {r["file"]: r["sha256"] for r in run["files"]} == {
        "session-notes.md": hashlib.sha256(NOTES).hexdigest(),
        "active-tasks.md": hashlib.sha256(TASKS).hexdigest(),
    }
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "m-1"
    assert "the note mnemonic kept" in body


def test_an_import_happens_once_even_when_mnemonic_keeps_writing(resolver: PathResolver, isolated_home: Path) -> None:
    source = _store(isolated_home, "acme", "widge", ".blackboard")
    assert _run(resolver, isolated_home)
    with open(source / "session-notes.md", "ab") as notes:
        notes.write(b"\n---\nwritten by mnemonic after the import\n")
    assert _run(resolver, isolated_home) == []
    assert migrate.plan(resolver, str(resolver.project.toplevel), str(isolated_home), os.environ) == []
    assert len(_manifest(resolver.get_legacy_dir())["migrations"]) == 1


def test_the_store_named_in_mnemonics_config_is_used(resolver: PathResolver, isolated_home: Path) -> None:
    config = isolated_home / ".config" / "mnemonic" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"version": "1.0", "memory_store_path": "~/memories"}))
    board = isolated_home / "memories" / "acme" / "widge" / ".blackboard"
    board.mkdir(parents=True)
    (board / "shared-context.md").write_bytes(b"kept elsewhere\n")
    _store(isolated_home, "acme", "widge", ".blackboard")  # the default store is not mnemonic's now

    copied = _run(resolver, isolated_home)

    assert [m.source for m in copied] == [str(board / "shared-context.md")]


@pytest.mark.parametrize(
    "config",
    [b"not json", b'{"memory_store_path": 7}', b'{"memory_store_path": "relative/path"}', b"[1]", b""],
)
def test_an_unusable_config_falls_back_to_the_default_store(isolated_home: Path, config: bytes) -> None:
    path = isolated_home / ".config" / "mnemonic" / "config.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(config)
    assert mnemonic.store_root(str(isolated_home)) == str(isolated_home / ".claude" / "mnemonic")


def test_a_fifo_as_mnemonics_config_is_not_waited_on(isolated_home: Path) -> None:
    path = isolated_home / ".config" / "mnemonic" / "config.json"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert mnemonic.store_root(str(isolated_home)) == str(isolated_home / ".claude" / "mnemonic")


def test_the_checkouts_own_mnemonic_folder_and_mnemonics_legacy_folder_are_copied(
    resolver: PathResolver, isolated_home: Path
) -> None:
    in_checkout = Path(str(resolver.project.toplevel), ".claude", "mnemonic", ".blackboard")
    in_checkout.mkdir(parents=True)
    (in_checkout / "blockers.md").write_bytes(b"from the checkout\n")
    set_aside = isolated_home / ".claude" / "mnemonic" / "acme" / "widge" / ".blackboard" / "_legacy"
    set_aside.mkdir(parents=True)
    (set_aside / "session-notes.md").write_bytes(NOTES)

    copied = _run(resolver, isolated_home)

    assert sorted(m.source for m in copied) == sorted(
        [str(in_checkout / "blockers.md"), str(set_aside / "session-notes.md")]
    )
    assert len({os.path.dirname(m.destination) for m in copied}) == 2  # one folder per source, never mixed


def test_mnemonics_global_files_go_to_the_global_legacy_folder_and_seed_nothing(
    resolver: PathResolver, isolated_home: Path
) -> None:
    _store(isolated_home, ".blackboard")
    copied = _run(resolver, isolated_home)
    global_legacy = os.path.join(resolver.root, ".blackboard", "_legacy")
    assert all(m.destination.startswith(global_legacy + os.sep) for m in copied)
    assert len(copied) == 2
    assert not os.path.exists(resolver.latest_handoff_path())


def test_links_and_fifos_in_mnemonics_store_are_not_copied(
    resolver: PathResolver, isolated_home: Path, tmp_path: Path
) -> None:
    board = isolated_home / ".claude" / "mnemonic" / "acme" / "widge" / ".blackboard"
    board.mkdir(parents=True)
    secret = tmp_path / "secret.md"
    secret.write_text("private")
    (board / "session-notes.md").symlink_to(secret)
    os.mkfifo(board / "active-tasks.md")
    (board / "real.md").write_bytes(b"real\n")

    copied = _run(resolver, isolated_home)

    assert [Path(m.source).name for m in copied] == ["real.md"]


def test_a_remote_whose_mnemonic_name_leaves_the_store_is_not_looked_up(isolated_home: Path) -> None:
    found = mnemonic.sources(str(isolated_home), "https://example.com/../..", "/work/app", "/work/app")
    store = str(isolated_home / ".claude" / "mnemonic")
    assert all(os.path.normpath(s.folder).startswith(store) or s.folder.startswith("/work/app") for s in found)
    assert [s.folder for s in found if s.folder.startswith(store)] == [os.path.join(store, ".blackboard")]


def test_migrate_dry_run_says_what_would_be_copied(
    resolver: PathResolver, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(isolated_home, "acme", "widge", ".blackboard")
    monkeypatch.chdir(str(resolver.project.toplevel))
    monkeypatch.setenv("BLACKBOARD_ROOT", resolver.root)
    code, out, _ = run_cli("migrate", "--dry-run")
    assert code == 0
    assert out.count("would copy") == 2
    assert not os.path.exists(resolver.get_legacy_dir())
    code, out, _ = run_cli("migrate")
    assert out.count("copied") == 2
    code, out, _ = run_cli("migrate", "--dry-run")
    assert out.strip() == "nothing to migrate"


# --- a checkout's own mnemonic folder, as a repository ships it (ADR 24) ----------------------------------------


def _in_checkout(resolver: PathResolver) -> Path:
    folder = Path(str(resolver.project.toplevel), ".claude", "mnemonic", ".blackboard")
    folder.mkdir(parents=True)
    (folder / "session-notes.md").write_bytes(NOTES)
    (folder / "active-tasks.md").write_bytes(TASKS)
    return folder


def _commit_all(checkout: str) -> None:
    identity = ["-c", "user.name=Else", "-c", "user.email=else@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "-C", checkout, "add", "-A"], check=True)
    subprocess.run(["git", "-C", checkout, *identity, "commit", "-q", "-m", "ship mnemonic's notes"], check=True)


def test_mnemonic_files_a_checkout_ships_are_left_and_seed_no_handoff(
    resolver: PathResolver, isolated_home: Path
) -> None:
    folder = _in_checkout(resolver)
    _commit_all(str(resolver.project.toplevel))
    (folder / "blockers.md").write_bytes(b"the user's own, never committed\n")

    copied = _run(resolver, isolated_home)

    assert [Path(m.source).name for m in copied] == ["blockers.md"]
    assert not os.path.exists(resolver.latest_handoff_path())
    (run,) = _manifest(resolver.get_legacy_dir())["migrations"]
    assert run["copied"] is True and run["source"] == str(folder)
    assert sorted(r["file"] for r in run["files"] if "left" in r) == ["active-tasks.md", "session-notes.md"]
    assert (folder / "session-notes.md").read_bytes() == NOTES
    assert _run(resolver, isolated_home) == []  # decided once, like any import
    assert migrate.plan(resolver, str(resolver.project.toplevel), str(isolated_home), os.environ) == []


def test_untracked_mnemonic_files_in_a_checkout_are_the_users_and_seed_as_before(
    resolver: PathResolver, isolated_home: Path
) -> None:
    _in_checkout(resolver)
    assert len(_run(resolver, isolated_home)) == 2
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "m-1"
    assert "the note mnemonic kept" in body


def test_while_git_cannot_say_a_checkouts_mnemonic_folder_waits(
    resolver: PathResolver, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _in_checkout(resolver)
    real = migrate.git_tracks
    monkeypatch.setattr(migrate, "git_tracks", lambda *a: None)
    assert _run(resolver, isolated_home) == []
    assert migrate.plan(resolver, str(resolver.project.toplevel), str(isolated_home), os.environ) == []
    assert not os.path.exists(resolver.latest_handoff_path())
    assert not os.path.exists(os.path.join(resolver.get_legacy_dir(), "_migration.json"))
    monkeypatch.setattr(migrate, "git_tracks", real)
    assert len(_run(resolver, isolated_home)) == 2
