"""The sessions a root holds: listing, lookup by id, and the markers of active sessions.

Active markers (``_active/{id}``, empty files) let SessionStart find the project's live
sessions without reading every session's metadata, so its cost does not grow with history.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Container

from .clock import format_utc
from .errors import BlackboardError
from .fsutil import create_exclusive, make_dirs, read_json_object, refuse_links
from .ids import is_litter, is_session_id
from .meta import Meta, read_meta
from .paths import META_FILE, TRASH_PREFIX, PathResolver
from .project import Project

ACTIVE_FOR_SECONDS = 24 * 3600.0  # a machine silent for a day is no longer listed as working
# How far another machine's clock may run ahead of this one's. A time further on is refused:
# it would rank its session first in cleanup's keep for good, or keep a record fresh forever.
CLOCK_AHEAD_SECONDS = 3600.0


class SessionEntry:
    """One folder under ``sessions/``: its metadata, or why there is none."""

    __slots__ = ("session_id", "directory", "meta", "error")

    def __init__(self, session_id: str, directory: str, meta: Meta | None, error: str | None) -> None:
        self.session_id = session_id
        self.directory = directory
        self.meta = meta
        self.error = error


def list_sessions(resolver: PathResolver, status: str | None = None) -> list[SessionEntry]:
    """Every session of the project, newest start first; a corrupt ``_meta.json`` is reported, not fatal.

    Only folders are sessions: a ``.DS_Store``, a ``notes.txt`` or a link is a stray (``strays``).
    """
    found = [session_entry(resolver, name) for name in session_folders(resolver)]
    if status is not None:
        found = [entry for entry in found if entry.meta is not None and entry.meta.get("status") == status]
    found.sort(key=lambda e: (str((e.meta or {}).get("started") or ""), e.session_id), reverse=True)
    return found


def session_folders(resolver: PathResolver, excluding: Container[str] = ()) -> list[str]:
    """The names of the folders under ``sessions/`` that are sessions (or boards a cleanup set aside).

    Names in ``excluding`` are left out before anything is checked: sync skips the thousands
    of sessions it knows came from other machines for the price of a set lookup.
    """
    return _folders(resolver, excluding)[0]


def strays(resolver: PathResolver) -> list[str]:
    """Names under ``sessions/`` that are no session: files, links, folders with names no session has."""
    return sorted(_folders(resolver)[1])


def _folders(resolver: PathResolver, excluding: Container[str] = ()) -> tuple[list[str], list[str]]:
    """``(session folders, strays)`` under ``sessions/``; a board a cleanup set aside counts as a session."""
    try:
        scan = list(os.scandir(resolver.sessions_dir))
    except FileNotFoundError:
        return [], []
    sessions: list[str] = []
    stray: list[str] = []
    for entry in scan:
        if entry.name in excluding or is_litter(entry.name):
            continue
        named_like_one = is_session_id(entry.name) or is_set_aside(entry.name)
        (sessions if named_like_one and entry.is_dir(follow_symlinks=False) else stray).append(entry.name)
    return sessions, stray


def session_entry(resolver: PathResolver, name: str) -> SessionEntry:
    """The session in ``sessions/{name}``, with an error instead of metadata when that is missing or corrupt."""
    directory = os.path.join(resolver.sessions_dir, name)
    try:
        meta = read_meta(os.path.join(directory, META_FILE))
        error = None if meta else f"{directory} has no _meta.json; run `blackboard doctor`"
    except BlackboardError as exc:
        meta, error = None, str(exc)
    return SessionEntry(name, directory, meta, error)


def find_owner(resolver: PathResolver, session_id: str) -> PathResolver | None:
    """The resolver whose project holds ``session_id``: this one, else any under the root, else None."""
    if os.path.exists(resolver.meta_path(session_id)):
        return resolver
    for other in all_projects(resolver.root):
        if os.path.exists(other.meta_path(session_id)):
            return other
    return None


def all_projects(root: str) -> list[PathResolver]:
    """A resolver for every project that has a board under ``root``."""
    found = []
    for org in _subdirs(root):
        for name in _subdirs(os.path.join(root, org)):
            resolver = PathResolver(root, Project(org, name, None, "found under the root"))
            if os.path.isdir(resolver.project_dir):
                found.append(resolver)
    return found


def _subdirs(path: str) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(path) if e.is_dir(follow_symlinks=False) and e.name[0] != ".")
    except OSError:
        return []


def session_dir(resolver: PathResolver, session_id: str) -> str:
    """The folder of one session, for work on it: its id checked (by ``PathResolver``), no link on the way.

    Every operation on one session (its lifecycle, its board, its digest) takes its folder
    from here, so none forgets the check (ADR 11): a link anywhere from the root down, put
    there by hand or by another program, would send reads and writes outside the root.
    """
    directory = resolver.get_session_blackboard_dir(session_id)
    refuse_links(resolver.root, directory)
    return directory


def active_session_ids(resolver: PathResolver) -> list[str]:
    """Ids with an active marker, cheap even when the project holds thousands of sessions."""
    return _markers(resolver, resolver.active_dir)


def mark_active(resolver: PathResolver, session_id: str) -> None:
    """Add the session's active marker (kept if it is there already)."""
    _mark(resolver, resolver.active_marker(session_id))


def _mark(resolver: PathResolver, marker: str) -> None:
    refuse_links(resolver.root, os.path.dirname(marker))
    make_dirs(os.path.dirname(marker))
    create_exclusive(marker, "")


def unmark_active(resolver: PathResolver, session_id: str) -> None:
    """Remove the session's active marker, if any (never through a link)."""
    _unmark(resolver, resolver.active_marker(session_id))


def _unmark(resolver: PathResolver, marker: str) -> None:
    try:
        refuse_links(resolver.root, os.path.dirname(marker))
        os.unlink(marker)
    except (FileNotFoundError, BlackboardError):
        pass


def mark_unpublished(resolver: PathResolver, session_id: str) -> None:
    """Note, before a session's status changes, that its handoff still has to be published."""
    _mark(resolver, resolver.unpublished_marker(session_id))


def unmark_unpublished(resolver: PathResolver, session_id: str) -> None:
    """The session's handoff is published."""
    _unmark(resolver, resolver.unpublished_marker(session_id))


def unpublished_ids(resolver: PathResolver) -> list[str]:
    """Sessions whose end did not get as far as publishing their handoff (a full disk, a damaged file)."""
    return _markers(resolver, resolver.unpublished_dir)


def _markers(resolver: PathResolver, directory: str) -> list[str]:
    """The session ids a marker folder names; none when it is missing, or is (or lies under) a link."""
    try:
        refuse_links(resolver.root, directory)
        names = os.listdir(directory)
    except (OSError, BlackboardError):
        return []
    return sorted(name for name in names if is_session_id(name))


def is_set_aside(name: str) -> bool:
    """Whether a folder under ``sessions/`` is a board a cleanup renamed aside (``.removing-…``)."""
    return name.startswith(TRASH_PREFIX)


def session_id_of(name: str) -> str:
    """The session a folder belongs to: ``s1`` for ``s1`` and for ``.removing-s1-4242`` left by a cleanup."""
    while name.startswith(TRASH_PREFIX):
        name = name[len(TRASH_PREFIX) :].rpartition("-")[0]
    return name


def last_active(resolver: PathResolver, session_id: str) -> float:
    """When the session last did something, in seconds since 1970, from this machine's file times.

    Derived, not recorded: ``_meta.json`` is rewritten by every start, end and (at most once a
    minute) board write, and Stop rewrites the draft handoff after every turn. File times are
    this machine's clock, so no stamp from another clock, and no date parsing, is involved.
    """
    times = []
    for path in (resolver.meta_path(session_id), resolver.handoff_path(session_id)):
        with contextlib.suppress(OSError):
            times.append(os.stat(path).st_mtime)
    return max(times, default=0.0)


def last_activity(resolver: PathResolver, session_id: str) -> str:
    """``last_active`` as a UTC timestamp (``2026-11-22T10:00:00Z``), for metadata and handoffs."""
    return format_utc(last_active(resolver, session_id))


def still_active(updated: float) -> bool:
    """Whether another machine's record, updated at ``updated`` by its clock, counts: under a day old, not ahead."""
    now = time.time()
    return now - ACTIVE_FOR_SECONDS < updated <= now + CLOCK_AHEAD_SECONDS


def remote_active(resolver: PathResolver) -> list[dict[str, str]]:
    """Other machines' active sessions as sync last fetched them: ``{"host", "session_id", "since"}``."""
    machines = read_json_object(resolver.sync_file("remote-active.json"), 1 << 20).get("machines")
    if not isinstance(machines, dict):
        return []
    records = [r for rs in machines.values() if isinstance(rs, list) for r in rs if isinstance(r, dict)]
    records = [r for r in records if isinstance(r.get("updated"), (int, float)) and still_active(r["updated"])]
    return [r for r in records if all(isinstance(r.get(k), str) for k in ("host", "session_id", "since"))]
