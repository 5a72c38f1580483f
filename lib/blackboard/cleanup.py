"""Remove old ``ended`` and ``abandoned`` sessions: older than a limit, beyond the newest N per project.

Never an ``active`` session, never a symlinked directory, never anything outside the root:
each session is renamed aside, its status re-checked there, then deleted.
"""

import contextlib
import os
import shutil
from typing import Callable, Iterable, List, NamedTuple, Optional, Tuple

from .clock import age_seconds
from .errors import BlackboardError
from .meta import Meta, read_meta_or_none
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
    """Delete the planned sessions and their archived handoffs; returns those really removed.

    Each session is first renamed aside (atomic: readers see it whole or not at all) and its
    status checked again there; the slow part, deleting the files, then runs on a few threads.
    """
    from concurrent.futures import ThreadPoolExecutor

    checked = {id(r): _sessions_dir_is_inside(r) for r in {id(c.resolver): c.resolver for c in candidates}.values()}
    removed, trash = [], []
    for candidate in candidates:
        aside = _set_aside(candidate) if checked[id(candidate.resolver)] else None
        if aside:
            removed.append(candidate)
            trash.append(aside)
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in pool.map(_delete_tree, trash):
            if advance:
                advance(1)
    for candidate in removed:
        handoff = candidate.resolver.handoff_path(candidate.session_id)
        if os.path.lexists(handoff) and not os.path.islink(handoff):
            os.unlink(handoff)
    return removed


def _sessions_dir_is_inside(resolver: PathResolver) -> bool:
    """Never delete through a ``sessions`` folder that is a link to somewhere outside the root."""
    try:
        resolver.ensure_inside_root(resolver.sessions_dir)
    except BlackboardError:
        return False
    return True


def _set_aside(candidate: Candidate) -> Optional[str]:
    """Rename the session out of the way if it is still finished; the trash path, or None."""
    if os.path.islink(candidate.directory):
        return None
    trash = os.path.join(candidate.resolver.sessions_dir, f".removing-{candidate.session_id}-{os.getpid()}")
    try:
        os.rename(candidate.directory, trash)
    except OSError:
        return None  # gone already, or not ours to move
    meta = read_meta_or_none(os.path.join(trash, "_meta.json"))
    if meta is None or meta.get("status") not in FINISHED:  # resumed since the plan: put it back
        os.rename(trash, candidate.directory)
        return None
    return trash


def _delete_tree(path: str) -> None:
    """Delete a session directory; symlinks inside are unlinked, never followed."""
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
    os.rmdir(path)
