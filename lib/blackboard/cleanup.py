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


def plan(
    resolvers: Iterable[PathResolver], older_than: float, keep: int, measure: bool = True
) -> Tuple[List[Candidate], List[str]]:
    """What a cleanup would remove (with sizes when ``measure``), and one line per session it must skip."""
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
                    tree_size(entry.directory) if measure else 0,
                )
            )
    return doomed, skipped


def _finished(listed: List[SessionEntry]) -> List[SessionEntry]:
    return [e for e in listed if e.meta is not None and e.meta.get("status") in FINISHED]


def tree_size(directory: str) -> int:
    """Bytes under ``directory``, counting symlinks as links (never following them)."""
    total = 0
    with contextlib.suppress(OSError), os.scandir(directory) as scan:  # removed meanwhile: counts as empty
        for entry in scan:
            if entry.is_dir(follow_symlinks=False):
                total += tree_size(entry.path)
            else:
                total += entry.stat(follow_symlinks=False).st_size
    return total


def remove(candidates: List[Candidate], advance: Optional[Callable[[int], None]] = None) -> List[Candidate]:
    """Delete the planned sessions and their archived handoffs; returns those really removed.

    Each session is first renamed aside (atomic: readers see it whole or not at all) and its
    status checked again there. The renames share one directory, so they run in turn; the
    deleting is independent file-system work and runs on threads, about twice as fast.
    """
    from concurrent.futures import ThreadPoolExecutor

    resolvers = {id(c.resolver): c.resolver for c in candidates}
    allowed = {key: _sessions_dir_is_inside(resolver) for key, resolver in resolvers.items()}
    removed, trash = [], []
    for candidate in candidates:
        aside = _set_aside(candidate) if allowed[id(candidate.resolver)] else None
        if aside:
            removed.append(candidate)
            trash.append(aside)
    with ThreadPoolExecutor(max_workers=8) as pool:
        for n, freed in enumerate(pool.map(_delete_tree, trash)):
            removed[n] = removed[n]._replace(size=freed)
            if advance:
                advance(1)
    for candidate in removed:
        handoff = candidate.resolver.handoff_path(candidate.session_id)
        if os.path.lexists(handoff) and not os.path.islink(handoff):
            with contextlib.suppress(FileNotFoundError):
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


def _delete_tree(path: str) -> int:
    """Delete a session directory, returning the bytes freed; symlinks inside are unlinked, never followed."""
    freed = 0
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            freed += tree_size(entry.path)
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                freed += entry.stat(follow_symlinks=False).st_size
                os.unlink(entry.path)
    os.rmdir(path)
    return freed
