"""A session's lifecycle on disk: start (startup, resume, clear, compact, fork), checkpoint, end."""

from __future__ import annotations

import os
import time

from . import handoff, summary
from .clock import now_iso
from .entries import initial_text
from .errors import BlackboardError
from .fsutil import create_exclusive, make_dirs
from .gitinfo import resolve_head
from .ids import optional_str
from .live import process_start
from .locks import file_lock
from .machines import continue_from
from .meta import (
    ACTIVE,
    ENDED,
    Meta,
    arrived_by_sync,
    new_meta,
    read_meta,
    read_meta_or_none,
    update_meta,
    write_meta,
)
from .paths import BOARD_FILES, META_FILE, PathResolver
from .registry import (
    active_session_ids,
    mark_active,
    mark_unpublished,
    session_dir,
    unmark_active,
    unmark_unpublished,
    unpublished_ids,
)
from .settings import Settings

SOURCES = ("startup", "resume", "clear", "compact", "fork")  # fork: `--fork-session`, a new id
CLEAR_WINDOW_SECONDS = 120


class Started:
    """What SessionStart did: the board's folder, and whether the session already existed."""

    __slots__ = ("board_dir", "reopened")

    def __init__(self, board_dir: str, reopened: bool) -> None:
        self.board_dir = board_dir
        self.reopened = reopened


def start(
    resolver: PathResolver, session_id: str, source: str, payload: dict[str, object], settings: Settings
) -> Started:
    """Create or reopen the session's board for a SessionStart of the given ``source``.

    ``settings`` name this machine (``host``) and the Claude Code process (``claude_pid``).
    """
    path = os.path.join(session_dir(resolver, session_id), META_FILE)  # mark_active checks _active
    existing = read_meta(path)
    if existing is not None:
        try:
            _reopen(path, source, settings)  # sync sends it again once it ends: its files changed
        except (BlackboardError, FileNotFoundError):  # a cleanup removed it meanwhile: start afresh
            existing = None
    if existing is None and source != "startup" and continue_from(resolver, session_id):
        # going on from another machine's session: a copy of it here, which says where it came from (ADR 30)
        _reopen(path, source, settings)
        existing = read_meta(path)
    if existing is None:  # a new session (``startup``) starts empty, whatever another machine sent under its id
        parent = _parent_for(resolver, session_id, source, settings)
        _create(resolver, session_id, source, payload, parent, settings)
    mark_active(resolver, session_id)
    return Started(resolver.get_session_blackboard_dir(session_id), existing is not None)


def _create(
    resolver: PathResolver,
    session_id: str,
    source: str,
    payload: dict[str, object],
    parent: str | None,
    settings: Settings,
) -> None:
    # ADR-011's layout: a session folder holds its three board files from the start, and the
    # handoff folder exists with the board.
    make_dirs(resolver.get_session_blackboard_dir(session_id))
    for kind in BOARD_FILES:
        create_exclusive(resolver.board_file(session_id, kind), initial_text(kind, session_id))
    if not os.path.islink(resolver.get_handoff_dir()):  # a link there is `doctor`'s to name; the session still starts
        make_dirs(resolver.get_handoff_dir())
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
        host=settings.host,
    )
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str):
        meta["transcript_path"] = transcript
    head = resolve_head(resolver.project.toplevel) if resolver.project.toplevel else None
    if head:
        meta["start_head"] = head  # what changed is counted from here (summary.handoff_text)
    _record_process(meta, settings.claude_pid)
    meta["claude_dir"] = settings.claude_dir  # where its Claude Code keeps its task list (summary.own_session_ledger)
    write_meta(resolver.meta_path(session_id), meta)


def _reopen(path: str, source: str, settings: Settings) -> Meta:
    def change(meta: Meta) -> None:
        now = now_iso()
        if meta["status"] != ACTIVE or source == "resume":
            meta["resumed_at"].append(now)
        meta.update({"status": ACTIVE, "ended": None, "end_reason": None, "last_activity": now})
        if meta.get("host") != settings.host or arrived_by_sync(meta):  # resumed here: this machine's from now on
            meta.pop("claude_pid", None)  # a process of the other machine's, which means nothing here
            meta.pop("via", None)  # and sync sends it
            meta["host"] = settings.host
        _record_process(meta, settings.claude_pid)
        meta["claude_dir"] = settings.claude_dir

    return update_meta(path, change)


def _record_process(meta: Meta, claude_pid: str | None) -> None:
    """Remember Claude Code's pid and when that process started, so a later session on this host can tell
    this one's process is gone, even once the system has given its pid to another (``live.same_process``)."""
    if claude_pid and claude_pid.isascii() and claude_pid.isdigit():
        meta["claude_pid"] = int(claude_pid)
        started = process_start(int(claude_pid))
        if started is not None:
            meta["claude_started"] = started
        else:
            meta.pop("claude_started", None)


def _parent_for(resolver: PathResolver, session_id: str, source: str, settings: Settings) -> str | None:
    """The session a new ``clear``, ``resume`` or ``fork`` session continues, found without a full scan.

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
        same_process = _same_process_sessions(resolver, session_id, settings)
        if same_process:
            return max(same_process)[1]
        end = handoff.ended_at(fields)
        age = None if end is None else time.time() - end
        just_cleared = fields.get("end_reason") == "clear" and age is not None and age < CLEAR_WINDOW_SECONDS
        return optional_str(fields.get("session_id")) if just_cleared else None
    return optional_str(fields.get("session_id"))


def _same_process_sessions(resolver: PathResolver, session_id: str, settings: Settings) -> list[tuple[str, str]]:
    """``(last_activity, id)`` of this project's other active sessions run by the same Claude Code process."""
    found = []
    for other in active_session_ids(resolver):
        meta = read_meta_or_none(resolver.meta_path(other)) if other != session_id else None
        if meta and str(meta.get("claude_pid")) == settings.claude_pid and meta.get("host") == settings.host:
            found.append((str(meta.get("last_activity") or ""), other))
    return found


def checkpoint(resolver: PathResolver, session_id: str, settings: Settings) -> Meta | None:
    """Stop/PreCompact: refresh the draft handoff; never ends the session, takes no lock.

    The draft's modification time is the session's last activity (``registry.last_activity``).
    A SessionEnd may run meanwhile: if the session has ended once the draft is in place, the
    draft may have replaced the final handoff, so the final one is written again.
    """
    path = os.path.join(session_dir(resolver, session_id), META_FILE)
    meta = read_meta(path)
    if meta is None or meta["status"] != ACTIVE:
        return meta
    # A draft, written after every turn: no fsync. The board it is rendered from is what counts,
    # and recovery renders the handoff again from it for a session that never ended.
    handoff.write_session_handoff(
        resolver, session_id, summary.handoff_text(resolver, meta, settings, final=False), durable=False
    )
    after = read_meta_or_none(path)
    if after is not None and after["status"] != ACTIVE:
        handoff.write_session_handoff(resolver, session_id, summary.handoff_text(resolver, after, settings))
    return meta


def end(
    resolver: PathResolver, session_id: str, reason: str, settings: Settings, git_by: float | None = None
) -> Meta | None:
    """SessionEnd: mark the session ended, write its final handoff (git asked until ``git_by``), publish it."""
    path = os.path.join(session_dir(resolver, session_id), META_FILE)
    if read_meta(path) is None:
        return None
    mark_unpublished(resolver, session_id)  # first: if what follows fails, the next start finishes it
    with file_lock(path):
        meta = read_meta(path)
        if meta is None:
            return None
        now = now_iso()
        meta.update({"status": ENDED, "ended": now, "end_reason": reason, "last_activity": now})
        meta["generation"] = handoff.next_generation(resolver)
        write_meta(path, meta)
        text = summary.handoff_text(resolver, meta, settings, git_by=git_by)
        handoff.write_session_handoff(resolver, session_id, text)
    unmark_active(resolver, session_id)
    offer_latest(resolver, session_id, text)
    return meta


def hand_off(resolver: PathResolver, meta: Meta, settings: Settings, git_by: float | None = None) -> None:
    """Write a finished session's final handoff (git asked until ``git_by``) and offer it as the project's latest."""
    session_dir(resolver, meta["session_id"])  # its board is read for the handoff
    text = summary.handoff_text(resolver, meta, settings, git_by=git_by)
    handoff.write_session_handoff(resolver, meta["session_id"], text)
    offer_latest(resolver, meta["session_id"], text)


def offer_latest(resolver: PathResolver, session_id: str, text: str) -> None:
    """Publish a finished session's handoff ``text``; only then is its unpublished marker cleared."""
    handoff.publish_latest(resolver, text)
    unmark_unpublished(resolver, session_id)


def publish_pending(resolver: PathResolver, settings: Settings) -> list[str]:
    """Publish the handoffs of finished sessions whose end failed part-way; returns their ids."""
    done = []
    for session_id in unpublished_ids(resolver):
        try:
            directory = session_dir(resolver, session_id)
        except BlackboardError:
            continue  # a link where its folder should be: `blackboard doctor` names it; the marker stays
        meta = read_meta_or_none(os.path.join(directory, META_FILE))
        if meta is not None and meta["status"] != ACTIVE:  # still active: its end never began; recovery decides
            hand_off(resolver, meta, settings)
            done.append(session_id)
        unmark_unpublished(resolver, session_id)
    return done
