"""mnemonic's ADR-011 tests (tests/unit/test_paths.py: TestSessionBlackboard, TestBlackboardMigration,
TestNewConvenienceFunctions), ported to this plugin's surface.

Each upstream case keeps its name. Where this plugin differs on purpose, the case says so and
names the ADR; docs/adr/0025-the-seeds-surface.md lists every divergence.
"""

import json
import os
from pathlib import Path

import pytest

from blackboard import migrate, session
from blackboard.errors import BlackboardError
from blackboard.paths import PathResolver
from blackboard.project import Project
from blackboard.settings import Settings
from helpers import settings_now

ORG, NAME = "testorg", "testproject"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def bb_resolver(home: Path) -> PathResolver:
    """Upstream's V2 scheme: ``{root}/{org}/{project}/.blackboard``, the only layout here (ADR 1)."""
    return PathResolver(str(home / ".claude" / "mnemonic"), Project(ORG, NAME, "main", "test"))


def _blackboard(resolver: PathResolver) -> Path:
    return Path(resolver.project_dir)


# ---- TestSessionBlackboard ---------------------------------------------------------------


def test_session_blackboard_dir_legacy(bb_resolver: PathResolver, home: Path) -> None:
    # upstream's legacy scheme put the board in the checkout; here there is one scheme (ADR 1)
    expected = home / ".claude/mnemonic/testorg/testproject/.blackboard/sessions/sess-123"
    assert Path(bb_resolver.get_session_blackboard_dir("sess-123")) == expected


def test_session_blackboard_dir_v2(bb_resolver: PathResolver, home: Path) -> None:
    expected = home / ".claude/mnemonic/testorg/testproject/.blackboard/sessions/sess-456"
    assert Path(bb_resolver.get_session_blackboard_dir("sess-456")) == expected


def test_session_blackboard_dir_org_scope(bb_resolver: PathResolver) -> None:
    # Divergence (ADR 25): no org-wide board. Boards are per project, named after its remote (ADR 18).
    assert not hasattr(bb_resolver, "scope")
    assert bb_resolver.get_session_blackboard_dir("sess-789").endswith(
        "/testorg/testproject/.blackboard/sessions/sess-789"
    )


def test_handoff_dir_legacy(bb_resolver: PathResolver, home: Path) -> None:
    assert Path(bb_resolver.get_handoff_dir()) == home / ".claude/mnemonic/testorg/testproject/.blackboard/handoff"


def test_handoff_dir_v2(bb_resolver: PathResolver) -> None:
    assert Path(bb_resolver.get_handoff_dir()) == _blackboard(bb_resolver) / "handoff"


def test_legacy_blackboard_dir(bb_resolver: PathResolver) -> None:
    # upstream: get_legacy_blackboard_dir(scope); here get_legacy_dir()
    assert Path(bb_resolver.get_legacy_dir()) == _blackboard(bb_resolver) / "_legacy"


def test_list_session_blackboards_empty(bb_resolver: PathResolver) -> None:
    assert bb_resolver.list_session_blackboards() == []


def test_list_session_blackboards_all(bb_resolver: PathResolver) -> None:
    sessions = _blackboard(bb_resolver) / "sessions"
    (sessions / "sess-a").mkdir(parents=True)
    (sessions / "sess-b").mkdir(parents=True)
    (sessions / "stray-file.txt").write_text("not a dir")
    (sessions / ".DS_Store").write_bytes(b"\0")  # Finder's litter, ignored too

    dirs = bb_resolver.list_session_blackboards()
    assert len(dirs) == 2
    assert sorted(os.path.basename(d) for d in dirs) == ["sess-a", "sess-b"]


def test_list_session_blackboards_active_only(bb_resolver: PathResolver) -> None:
    sessions = _blackboard(bb_resolver) / "sessions"
    for name, status in (("sess-active", "active"), ("sess-ended", "ended")):
        (sessions / name).mkdir(parents=True)
        (sessions / name / "_meta.json").write_text(json.dumps({"status": status, "session_id": name}))
    (sessions / "sess-nometa").mkdir(parents=True)

    active = bb_resolver.list_session_blackboards(active_only=True)
    assert [os.path.basename(d) for d in active] == ["sess-active"]
    assert len(bb_resolver.list_session_blackboards(active_only=False)) == 3


def test_list_session_blackboards_newest_first(bb_resolver: PathResolver) -> None:
    """ADR-011 asks for the listing; this plugin orders it, newest start first."""
    session.start(bb_resolver, "older", "startup", {}, settings_now())
    session.start(bb_resolver, "newer", "startup", {}, settings_now())
    meta = Path(bb_resolver.meta_path("older"))
    meta.write_text(json.dumps(dict(json.loads(meta.read_text()), started="2000-01-01T00:00:00Z")))
    assert [os.path.basename(d) for d in bb_resolver.list_session_blackboards()] == ["newer", "older"]


def test_session_blackboard_dir_refuses_unsafe_ids(bb_resolver: PathResolver) -> None:
    # Divergence (ADR 3, ADR 25): upstream joins any string; an id here is a safe path component.
    for unsafe in ("../x", "a/b", "", ".hidden"):
        with pytest.raises(BlackboardError):
            bb_resolver.get_session_blackboard_dir(unsafe)


def test_a_session_directory_holds_its_files_from_the_start(bb_resolver: PathResolver) -> None:
    """ADR-011's layout: every session directory holds three board files and _meta.json; handoff/ beside."""
    board = Path(session.start(bb_resolver, "sess-1", "startup", {}, settings_now()).board_dir)
    names = ["_meta.json", "active-tasks.md", "session-notes.md", "shared-context.md"]
    assert sorted(p.name for p in board.iterdir()) == names
    meta = json.loads((board / "_meta.json").read_text())
    assert {"session_id", "started", "ended", "project", "org", "status"} <= set(meta)
    assert (_blackboard(bb_resolver) / "handoff").is_dir()


# ---- TestBlackboardMigration -------------------------------------------------------------
# upstream: migrate_blackboard_to_session_scoped(bb) -> bool; here migrate.migrate_if_needed
# (resolver, cwd, home) -> the moves it made, and the structure comes with the first session.


def _migrate(resolver: PathResolver, home: Path) -> list:
    return migrate.migrate_if_needed(resolver, str(home / "nowhere"), str(home / "nowhere"), {})


def test_creates_structure_from_empty(bb_resolver: PathResolver, home: Path) -> None:
    _blackboard(bb_resolver).mkdir(parents=True)
    assert _migrate(bb_resolver, home) == []
    session.start(bb_resolver, "s1", "startup", {}, settings_now())
    assert (_blackboard(bb_resolver) / "sessions").is_dir()
    assert (_blackboard(bb_resolver) / "handoff").is_dir()
    assert not (_blackboard(bb_resolver) / "_legacy").exists()  # nothing to migrate


def test_moves_md_files_to_legacy(bb_resolver: PathResolver, home: Path) -> None:
    bb = _blackboard(bb_resolver)
    bb.mkdir(parents=True)
    (bb / "active-tasks.md").write_text("# Tasks\n")
    (bb / "shared-context.md").write_text("# Context\n")

    assert len(_migrate(bb_resolver, home)) == 2
    assert (bb / "_legacy" / "active-tasks.md").exists()
    assert (bb / "_legacy" / "shared-context.md").exists()
    assert not (bb / "active-tasks.md").exists()
    assert not (bb / "shared-context.md").exists()


def test_extracts_latest_handoff(bb_resolver: PathResolver, home: Path) -> None:
    bb = _blackboard(bb_resolver)
    bb.mkdir(parents=True)
    (bb / "session-notes.md").write_text("# Notes\n---\nOld entry\n---\nLatest entry here\n")

    _migrate(bb_resolver, home)

    content = (bb / "handoff" / "latest-handoff.md").read_text()
    assert "Latest entry here" in content
    assert "Old entry" not in content


def test_idempotent_returns_false(bb_resolver: PathResolver, home: Path) -> None:
    bb = _blackboard(bb_resolver)
    bb.mkdir(parents=True)
    (bb / "some-file.md").write_text("data")

    assert _migrate(bb_resolver, home)  # upstream: True
    assert _migrate(bb_resolver, home) == []  # upstream: False
    assert (bb / "_legacy" / "some-file.md").read_text() == "data"


def test_no_handoff_without_session_notes(bb_resolver: PathResolver, home: Path) -> None:
    bb = _blackboard(bb_resolver)
    bb.mkdir(parents=True)
    (bb / "active-tasks.md").write_text("# Tasks\n")

    _migrate(bb_resolver, home)

    assert not (bb / "handoff" / "latest-handoff.md").exists()


def test_preserves_non_md_files(bb_resolver: PathResolver, home: Path) -> None:
    bb = _blackboard(bb_resolver)
    bb.mkdir(parents=True)
    (bb / "data.md").write_text("markdown")
    (bb / "config.json").write_text("{}")

    _migrate(bb_resolver, home)

    assert (bb / "_legacy" / "data.md").exists()
    assert (bb / "config.json").exists()


# ---- TestNewConvenienceFunctions ---------------------------------------------------------
# upstream: module functions on a default resolver, with a scope; here PathResolver.for_cwd,
# the resolver for the project of a working directory under the configured root.


def test_get_session_blackboard_dir(project: Path, root: Path) -> None:
    resolver = PathResolver.for_cwd(str(project), Settings({"BLACKBOARD_ROOT": str(root)}))
    expected = root / "acme" / "widget" / ".blackboard" / "sessions" / "my-session"
    assert Path(resolver.get_session_blackboard_dir("my-session")) == expected


def test_get_handoff_dir(project: Path, root: Path) -> None:
    resolver = PathResolver.for_cwd(str(project), Settings({"BLACKBOARD_ROOT": str(root)}))
    assert Path(resolver.get_handoff_dir()) == root / "acme" / "widget" / ".blackboard" / "handoff"


def test_get_session_blackboard_dir_user_scope(project: Path, root: Path) -> None:
    # Divergence (ADR 25): no user-wide board; the old global $ROOT/.blackboard is migrated into its
    # own _legacy/ (ADR 4) so no project sees another's notes.
    resolver = PathResolver.for_cwd(str(project), Settings({"BLACKBOARD_ROOT": str(root)}))
    (old_global, its_legacy) = resolver.legacy_locations()[1]
    assert (Path(old_global), Path(its_legacy)) == (root / ".blackboard", root / ".blackboard" / "_legacy")
