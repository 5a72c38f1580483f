"""A session's lifecycle on disk: start (startup, resume, clear, compact), checkpoint, end."""

from __future__ import annotations

import os

from . import entries, handoff
from .clock import age_seconds, now_iso
from .errors import BlackboardError
from .fsutil import create_exclusive, file_lock
from .ids import optional_str
from .meta import Meta, new_meta, read_meta, read_meta_or_none, update_meta, write_meta
from .paths import PathResolver
from .recovery import host_name, unmark_active

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, NamedTuple, Optional
else:
    from .records import NamedTuple

SOURCES = ("startup", "resume", "clear", "compact", "fork")  # fork: `--fork-session`, a new id
CLEAR_WINDOW_SECONDS = 120


class Started(NamedTuple):
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
        try:
            _reopen(path, source, claude_pid)
        except (BlackboardError, FileNotFoundError):  # a cleanup removed it meanwhile: start afresh
            existing = None
    if existing is None:
        parent = _parent_for(resolver, session_id, source, claude_pid)
        _create(resolver, session_id, board_dir, source, payload, parent, claude_pid)
    _mark_active(resolver, session_id)
    return Started(board_dir, existing is not None)


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


def _parent_for(resolver: PathResolver, session_id: str, source: str, claude_pid: Optional[str]) -> Optional[str]:
    """The session a new ``clear`` or ``resume`` session continues, found without a full scan.

    ``clear`` happens inside one Claude Code process: the parent is the project's session with
    the same pid (its SessionEnd may still be running), else a handoff that just ended with
    ``clear``. ``resume`` with a new id and ``fork`` continue the project's most recently
    ended session (Claude Code does not tell hooks which one it forked).
    """
    if source not in ("resume", "clear", "fork"):
        return None
    latest = handoff.read_handoff(resolver.latest_handoff_path())
    fields = latest[0] if latest else {}
    if source == "clear":
        same_process = [
            (str(meta.get("last_activity") or ""), other)
            for other in resolver.active_session_ids()
            if other != session_id
            and (meta := read_meta_or_none(resolver.meta_path(other)))
            and str(meta.get("claude_pid")) == claude_pid
            and meta.get("host") == host_name()
        ]
        if same_process:
            return max(same_process)[1]
        age = age_seconds(fields.get("ended"))
        just_cleared = fields.get("end_reason") == "clear" and age is not None and age < CLEAR_WINDOW_SECONDS
        return optional_str(fields.get("session_id")) if just_cleared else None
    return optional_str(fields.get("session_id"))


def _mark_active(resolver: PathResolver, session_id: str) -> None:
    os.makedirs(resolver.active_dir, exist_ok=True)
    create_exclusive(os.path.join(resolver.active_dir, session_id), "")


def checkpoint(resolver: PathResolver, session_id: str) -> Optional[Meta]:
    """Stop/PreCompact: record activity and refresh the draft handoff; never ends the session."""
    path = resolver.meta_path(session_id)
    if read_meta(path) is None:
        return None
    with file_lock(path):  # so a late Stop can never overwrite the final handoff of SessionEnd
        meta = read_meta(path)
        if meta is None or meta["status"] != "active":
            return meta
        meta["last_activity"] = now_iso()
        write_meta(path, meta)
        handoff.write_session_handoff(resolver, meta)
    return meta


def end(resolver: PathResolver, session_id: str, reason: str) -> Optional[Meta]:
    """SessionEnd: mark the session ended, write its final handoff, offer it as the latest."""
    path = resolver.meta_path(session_id)
    if read_meta(path) is None:
        return None
    with file_lock(path):
        meta = read_meta(path)
        if meta is None:
            return None
        now = now_iso()
        meta.update(status="ended", ended=now, end_reason=reason, last_activity=now)
        write_meta(path, meta)
        text = handoff.write_session_handoff(resolver, meta)
    unmark_active(resolver, session_id)
    handoff.publish_latest(resolver, text)
    return meta
