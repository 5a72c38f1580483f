"""A session's lifecycle on disk: start (startup, resume, clear, compact), checkpoint, end."""

import os
from typing import Any, Dict, NamedTuple, Optional

from . import entries, handoff
from .clock import now_iso
from .fsutil import create_exclusive
from .meta import Meta, new_meta, read_meta, read_meta_or_none, update_meta, write_meta
from .paths import PathResolver
from .recovery import host_name, unmark_active

SOURCES = ("startup", "resume", "clear", "compact")


class Started(NamedTuple):
    meta: Meta
    board_dir: str
    reopened: bool


def start(
    resolver: PathResolver, session_id: str, source: str, payload: Dict[str, Any], claude_pid: Optional[str] = None
) -> Started:
    """Create or reopen the session's board for a SessionStart of the given ``source``."""
    board_dir = resolver.get_session_blackboard_dir(session_id)
    path = os.path.join(board_dir, "_meta.json")
    existing = read_meta(path)
    if existing is not None:
        meta = _reopen(path, source, claude_pid)
    else:
        parent = _parent_for(resolver, session_id, source)
        meta = _create(resolver, session_id, board_dir, source, payload, parent, claude_pid)
    _mark_active(resolver, session_id)
    return Started(meta, board_dir, existing is not None)


def _create(
    resolver: PathResolver,
    session_id: str,
    board_dir: str,
    source: str,
    payload: Dict[str, Any],
    parent: Optional[str],
    claude_pid: Optional[str],
) -> Meta:
    os.makedirs(board_dir, exist_ok=True)
    for kind, (name, _) in entries.BOARD_FILES.items():
        create_exclusive(os.path.join(board_dir, name), entries.initial_text(kind, session_id))
    cwd = payload.get("cwd")
    meta = new_meta(
        session_id,
        resolver.project.org,
        resolver.project.name,
        now_iso(),
        cwd=cwd if isinstance(cwd, str) else os.getcwd(),
        git_branch=resolver.project.git_branch,
        parent_session_id=parent,
        source=source,
    )
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str):
        meta["transcript_path"] = transcript
    _record_process(meta, claude_pid)
    write_meta(os.path.join(board_dir, "_meta.json"), meta)
    return meta


def _reopen(path: str, source: str, claude_pid: Optional[str]) -> Meta:
    def change(meta: Meta) -> None:
        now = now_iso()
        if meta["status"] != "active" or source == "resume":
            meta["resumed_at"].append(now)
        meta.update(status="active", ended=None, end_reason=None, last_activity=now)
        _record_process(meta, claude_pid)

    return update_meta(path, change)


def _record_process(meta: Meta, claude_pid: Optional[str]) -> None:
    """Remember Claude Code's pid and host, so a later session can tell this one's process is gone."""
    if claude_pid and claude_pid.isdigit():
        meta.update(claude_pid=int(claude_pid), host=host_name())


def _parent_for(resolver: PathResolver, session_id: str, source: str) -> Optional[str]:
    """The session a new ``resume`` or ``clear`` session continues, found without a full scan."""
    if source not in ("resume", "clear"):
        return None
    latest = handoff.read_handoff(resolver.latest_handoff_path())
    latest_fields = latest[0] if latest else {}
    if source == "clear" and latest_fields.get("end_reason") == "clear":
        return _str_or_none(latest_fields.get("session_id"))
    # The ended session may not have written its handoff yet: take the most recently
    # active session that is still marked active, else the latest handoff's session.
    candidates = []
    for other in resolver.active_session_ids():
        if other != session_id:
            meta = read_meta_or_none(resolver.meta_path(other))
            candidates.append((str((meta or {}).get("last_activity") or ""), other))
    if candidates:
        return max(candidates)[1]
    return _str_or_none(latest_fields.get("session_id"))


def _str_or_none(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _mark_active(resolver: PathResolver, session_id: str) -> None:
    os.makedirs(resolver.active_dir, exist_ok=True)
    create_exclusive(os.path.join(resolver.active_dir, session_id), "")


def checkpoint(resolver: PathResolver, session_id: str) -> Optional[Meta]:
    """Stop/PreCompact: record activity and refresh the draft handoff; never ends the session."""
    path = resolver.meta_path(session_id)
    if read_meta(path) is None:
        return None

    def change(meta: Meta) -> None:
        meta["last_activity"] = now_iso()

    meta = update_meta(path, change)
    handoff.write_session_handoff(resolver, meta)
    return meta


def end(resolver: PathResolver, session_id: str, reason: str) -> Optional[Meta]:
    """SessionEnd: mark the session ended, write its final handoff, offer it as the latest."""
    path = resolver.meta_path(session_id)
    if read_meta(path) is None:
        return None

    def change(meta: Meta) -> None:
        now = now_iso()
        meta.update(status="ended", ended=now, end_reason=reason, last_activity=now)

    meta = update_meta(path, change)
    unmark_active(resolver, session_id)
    text = handoff.write_session_handoff(resolver, meta)
    handoff.publish_latest(resolver, text)
    return meta
