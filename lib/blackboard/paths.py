"""Where everything lives. ``PathResolver`` computes every path under the root and touches no disk
(but for ``list_session_blackboards``, mnemonic's ADR-011 name for a listing that ``registry`` does).

Example: ``~/.claude/blackboard/acme/widget/.blackboard/sessions/abc123/_meta.json``.
"""

from __future__ import annotations

import os
import zlib

from .ids import validate_session_id
from .project import Project, identify_project
from .settings import Settings

BOARD_FILES = {"tasks": "active-tasks.md", "notes": "session-notes.md", "context": "shared-context.md"}
META_FILE = "_meta.json"
DIGEST_FILE = "_digest.jsonl"  # what the hooks saw of the session; stays on this machine
DIGEST_SUMMARY_FILE = "_digest-summary.json"  # what was counted of it so far (``digest.read_digest``); stays too
LIVE_FILE = "_live.jsonl"  # what the session is doing, for the project's other live sessions; stays here too
SYNC_FILES = (
    "config.json",
    "state.json",
    "status.json",
    "remote-active.json",
    "round",
    "waiting",
    "publishing",
    "unsettled",
)
TRASH_PREFIX = ".removing-"  # a session a cleanup has set aside: ``.removing-{id}-{pid}``


class PathResolver:
    """Paths of one project's board under one root; every path stays inside the root."""

    def __init__(self, root: str, project: Project) -> None:
        self.root = os.path.abspath(root)
        self.project = project
        self.project_dir = os.path.join(self.root, project.org, project.name, ".blackboard")

    @classmethod
    def for_cwd(cls, cwd: str, settings: Settings) -> PathResolver:
        """The resolver for the project of ``cwd`` under the root ``settings`` name."""
        return cls(settings.root, identify_project(cwd))

    @property
    def sessions_dir(self) -> str:
        """``.../.blackboard/sessions``."""
        return os.path.join(self.project_dir, "sessions")

    @property
    def active_dir(self) -> str:
        """``.../.blackboard/_active``: one empty marker file per active session."""
        return os.path.join(self.project_dir, "_active")

    def active_marker(self, session_id: str) -> str:
        """``.../.blackboard/_active/{session_id}``."""
        return os.path.join(self.active_dir, validate_session_id(session_id))

    @property
    def unpublished_dir(self) -> str:
        """``.../.blackboard/_unpublished``: one marker per finished session whose handoff is not yet offered."""
        return os.path.join(self.project_dir, "_unpublished")

    def unpublished_marker(self, session_id: str) -> str:
        """``.../.blackboard/_unpublished/{session_id}``."""
        return os.path.join(self.unpublished_dir, validate_session_id(session_id))

    def get_session_blackboard_dir(self, session_id: str) -> str:
        """``.../.blackboard/sessions/{session_id}``, refusing unsafe ids."""
        return os.path.join(self.sessions_dir, validate_session_id(session_id))

    def meta_path(self, session_id: str) -> str:
        """``.../sessions/{session_id}/_meta.json``."""
        return os.path.join(self.get_session_blackboard_dir(session_id), META_FILE)

    def digest_path(self, session_id: str) -> str:
        """``.../sessions/{session_id}/_digest.jsonl``."""
        return os.path.join(self.get_session_blackboard_dir(session_id), DIGEST_FILE)

    def digest_summary_path(self, session_id: str) -> str:
        """``.../sessions/{session_id}/_digest-summary.json``."""
        return os.path.join(self.get_session_blackboard_dir(session_id), DIGEST_SUMMARY_FILE)

    def live_path(self, session_id: str) -> str:
        """``.../sessions/{session_id}/_live.jsonl``."""
        return os.path.join(self.get_session_blackboard_dir(session_id), LIVE_FILE)

    @property
    def claims_dir(self) -> str:
        """``.../.blackboard/_claims``: who holds each piece of carried work, one file per key."""
        return os.path.join(self.project_dir, "_claims")

    def claim_path(self, key: str) -> str:
        """``.../_claims/5f1c8a2e-…+t3.json`` for carried work ``5f1c8a2e-…/t3`` (no session id holds a ``+``)."""
        session_id, _, local = key.rpartition("/")
        if not local.isalnum() or not local.isascii():
            raise ValueError(f"not a key of carried work: {key!r}")
        return os.path.join(self.claims_dir, f"{validate_session_id(session_id)}+{local}.json")

    def board_file(self, session_id: str, kind: str) -> str:
        """``.../sessions/{session_id}/active-tasks.md`` for ``tasks``; ``notes`` and ``context`` alike."""
        return os.path.join(self.get_session_blackboard_dir(session_id), BOARD_FILES[kind])

    def trash_dir(self, name: str, pid: int) -> str:
        """``.../sessions/.removing-{name}-{pid}``, where a cleanup sets the folder ``sessions/{name}`` aside."""
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"not a folder name: {name!r}")
        return os.path.join(self.sessions_dir, f"{TRASH_PREFIX}{name}-{pid}")

    @property
    def strays_dir(self) -> str:
        """``.../.blackboard/_strays``, where ``doctor --fix`` moves what does not belong in ``sessions/``."""
        return os.path.join(self.project_dir, "_strays")

    @property
    def sync_dir(self) -> str:
        """``.../.blackboard/_sync``: this project's sync settings, state and private git repository (ADR 19)."""
        return os.path.join(self.project_dir, "_sync")

    def sync_file(self, name: str) -> str:
        """``.../_sync/{name}``: ``config.json``, ``state.json``, ``status.json``, ``remote-active.json``."""
        if name not in SYNC_FILES:
            raise ValueError(f"not a sync file: {name!r}")
        return os.path.join(self.sync_dir, name)

    @property
    def sync_repo(self) -> str:
        """``.../_sync/repo.git``: the bare repository sync fetches into and commits in."""
        return os.path.join(self.sync_dir, "repo.git")

    def get_handoff_dir(self) -> str:
        """``.../.blackboard/handoff``."""
        return os.path.join(self.project_dir, "handoff")

    def list_session_blackboards(self, active_only: bool = False) -> list[str]:
        """The session directories, newest first; with ``active_only``, those whose ``_meta.json`` says active.

        ADR-011's name for ``registry.list_sessions``, which reads the disk (this class does not).
        """
        from .registry import list_sessions  # registry builds on this module

        return [entry.directory for entry in list_sessions(self, "active" if active_only else None)]

    def handoff_path(self, session_id: str) -> str:
        """``.../handoff/handoff-{session_id}.md``."""
        return os.path.join(self.get_handoff_dir(), f"handoff-{validate_session_id(session_id)}.md")

    def latest_handoff_path(self) -> str:
        """``.../handoff/latest-handoff.md``."""
        return os.path.join(self.get_handoff_dir(), "latest-handoff.md")

    def get_legacy_dir(self) -> str:
        """``.../.blackboard/_legacy``, where old flat files are moved once."""
        return os.path.join(self.project_dir, "_legacy")

    def legacy_copy_dir(self, legacy_dir: str, source: str) -> str:
        """``{legacy dir}/mnemonic-{crc32 of source}``: where flat files copied from ``source`` go, always the same."""

        if legacy_dir not in (target for _, target in self.legacy_locations()):
            raise ValueError(f"not a legacy folder of this project: {legacy_dir!r}")
        return os.path.join(legacy_dir, f"mnemonic-{zlib.crc32(os.fsencode(source)):08x}")

    def legacy_locations(self) -> list[tuple[str, str]]:
        """``(folder that may hold old flat files, where they move)``: this project's, then the old global one.

        The global ``$ROOT/.blackboard`` moves into its own ``_legacy/``, so no project sees another's notes.
        """
        old_global = os.path.join(self.root, ".blackboard")
        return [(self.project_dir, self.get_legacy_dir()), (old_global, os.path.join(old_global, "_legacy"))]


def log_path(root: str, name: str) -> str:
    """``$ROOT/logs/{name}.log``: ``hooks`` for the hooks' failures, ``cli`` for the command's."""
    return os.path.join(root, "logs", f"{name}.log")
