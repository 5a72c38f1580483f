"""Remove old ``ended`` and ``abandoned`` sessions: older than a limit, beyond the newest N per project.

Never an ``active`` session, never a symlinked directory, never anything outside the root:
each session is renamed aside under its metadata lock (re-checked there), then deleted.
"""

import contextlib
import os
import shutil
from typing import Callable, Iterable, List, NamedTuple, Optional, Tuple

from .clock import age_seconds
from .fsutil import file_lock
from .meta import Meta, read_meta
from .paths import PathResolver, SessionEntry

FINISHED = ("ended", "abandoned")


class Candidate(NamedTuple):
    resolver: PathResolver
    session_id: str
    directory: str
    status: str
    finished: str
    size: int


def finished_at(meta: Meta) -> str:
    return str(meta.get("ended") or meta.get("last_activity") or meta.get("started") or "")


def plan(resolvers: Iterable[PathResolver], older_than: float, keep: int) -> Tuple[List[Candidate], List[str]]:
    """What a cleanup would remove, and one line per session it must skip (and why)."""
    doomed: List[Candidate] = []
    skipped: List[str] = []
    for resolver in resolvers:
        listed = resolver.list_session_blackboards()
        skipped += [f"{e.session_id}: {e.error}" for e in listed if e.error]
        finished = sorted(_finished(listed), key=lambda e: finished_at(e.meta or {}), reverse=True)
        for entry in finished[keep:]:
            age = age_seconds(finished_at(entry.meta or {}))
            if age is None or age < older_than:
                continue
            if os.path.islink(entry.directory):
                skipped.append(f"{entry.session_id}: its directory is a symlink; not following it")
                continue
            meta = entry.meta or {}
            doomed.append(
                Candidate(
                    resolver,
                    entry.session_id,
                    entry.directory,
                    meta["status"],
                    finished_at(meta),
                    tree_size(entry.directory),
                )
            )
    return doomed, skipped


def _finished(listed: List[SessionEntry]) -> List[SessionEntry]:
    return [e for e in listed if e.meta is not None and e.meta.get("status") in FINISHED]


def tree_size(directory: str) -> int:
    """Bytes under ``directory``, counting symlinks as links (never following them)."""
    total = 0
    for dirpath, _, filenames in os.walk(directory):
        for name in filenames:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def remove(candidates: List[Candidate], advance: Optional[Callable[[int], None]] = None) -> List[Candidate]:
    """Delete the planned sessions and their archived handoffs; returns those really removed."""
    removed = []
    for candidate in candidates:
        if _remove_one(candidate):
            removed.append(candidate)
        if advance:
            advance(1)
    return removed


def _remove_one(candidate: Candidate) -> bool:
    resolver = candidate.resolver
    resolver.ensure_inside_root(candidate.directory)
    meta_path = resolver.meta_path(candidate.session_id)
    trash = os.path.join(resolver.sessions_dir, f".removing-{candidate.session_id}-{os.getpid()}")
    with file_lock(meta_path):
        meta = read_meta(meta_path)
        if meta is None or meta.get("status") not in FINISHED or os.path.islink(candidate.directory):
            return False  # resumed, or changed, since the plan was made
        os.rename(candidate.directory, trash)
    shutil.rmtree(trash, ignore_errors=True)
    handoff = resolver.handoff_path(candidate.session_id)
    if os.path.lexists(handoff) and not os.path.islink(handoff):
        os.unlink(handoff)
    return True
