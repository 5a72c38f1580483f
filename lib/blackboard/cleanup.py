"""Remove old ``ended`` and ``abandoned`` sessions: older than a limit, beyond the newest N per project.

Never an ``active`` session, never a symlinked directory, never anything outside the root:
each session is renamed aside, its status re-checked there, then deleted.
"""

import contextlib
import os
import shutil
import stat
import time
from collections.abc import Generator, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Callable, NamedTuple, Optional, TypeVar

from .clock import age_seconds
from .fsutil import resolves_inside
from .ids import is_session_id
from .meta import FINISHED, read_meta_or_none
from .paths import PathResolver
from .registry import SessionEntry, session_entry, session_folders, session_id_of

WORKERS = 8  # threads: they overlap waits on the disk (see docs/adr/0015-cleanup-on-threads.md)
CHUNK = 32  # jobs a thread takes at a time: a future for each job measured slower
Fingerprint = tuple[int, int, int, int]
SETTLED_NS = 2_000_000_000  # a FAT time stamp is 2 s coarse
Job = TypeVar("Job")
Result = TypeVar("Result")


class Candidate(NamedTuple):
    resolver: PathResolver
    session_id: str
    directory: str
    status: str
    finished: str
    size: int
    seen: Optional[Fingerprint] = None  # its ``_meta.json`` as it was just before the plan read it


def finished_at(meta: Mapping[str, Any]) -> str:
    return str(meta.get("ended") or meta.get("last_activity") or meta.get("started") or "")


def plan(
    resolvers: Iterable[PathResolver], older_than: float, keep: int, measure: bool = True
) -> tuple[list[Candidate], list[str]]:
    """What a cleanup would remove (with sizes when ``measure``), and one line per session it must skip.

    The sessions' metadata is read on several threads, which keeps the disk busy when the
    boards are no longer in memory (a month-old board usually is not; ADR 15 has the figures).
    """
    resolvers = list(resolvers)
    jobs = [(resolver, name) for resolver in resolvers for name in session_folders(resolver)]
    found: dict[int, list[tuple[Optional[Fingerprint], SessionEntry]]] = {id(r): [] for r in resolvers}
    with contextlib.closing(_parallel(_read_session, jobs)) as results:
        for (resolver, _), result in zip(jobs, results):
            found[id(resolver)].append(result)
    doomed: list[Candidate] = []
    skipped: list[str] = []
    for resolver in resolvers:
        seen = {entry.session_id: settled for settled, entry in found[id(resolver)] if settled is not None}
        listed = sorted((entry for _, entry in found[id(resolver)]), key=lambda e: e.session_id)
        skipped += [f"{e.session_id}: {e.error}" for e in listed if e.error]
        finished = sorted(_finished(listed), key=lambda e: (finished_at(e.meta or {}), e.session_id), reverse=True)
        for entry in finished[keep:]:
            age = age_seconds(finished_at(entry.meta or {}))
            if age is None or age < older_than:
                continue
            # fingerprinted means a real directory a moment ago (_still_finished looks again)
            if entry.session_id not in seen and os.path.islink(entry.directory):
                skipped.append(f"{entry.session_id}: its directory is a symlink; not following it")
                continue
            meta = entry.meta or {}
            candidate = Candidate(resolver, entry.session_id, entry.directory, meta["status"], finished_at(meta), 0)
            doomed.append(candidate._replace(seen=seen.get(entry.session_id)))
    if measure:
        with contextlib.closing(_parallel(tree_size, [c.directory for c in doomed])) as sizes:
            doomed = [c._replace(size=size) for c, size in zip(doomed, sizes)]
    return doomed, skipped


def _finished(listed: list[SessionEntry]) -> list[SessionEntry]:
    return [e for e in listed if e.meta is not None and e.meta.get("status") in FINISHED]


def _read_session(job: tuple[PathResolver, str]) -> tuple[Optional[Fingerprint], SessionEntry]:
    """A session as the listing shows it, and its settled fingerprint taken just before the read."""
    resolver, name = job
    return settled_fingerprint(os.path.join(resolver.sessions_dir, name)), session_entry(resolver, name)


def fingerprint(info: os.stat_result) -> Fingerprint:
    """Inode, size, mtime and ctime from ``os.lstat``: any rewrite of the file changes one of them."""
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def settled_fingerprint(board: str) -> Optional[Fingerprint]:
    """The fingerprint of ``board/_meta.json``, if ``board`` is a real directory and the file settled.

    Settled means a regular file last changed ``SETTLED_NS`` ago or more: an inode can be
    reused by the next write, and some file systems keep times to a tick or a second, so two
    writes close together could look alike.
    """
    try:
        if not stat.S_ISDIR(os.lstat(board).st_mode):
            return None
        info = os.lstat(os.path.join(board, "_meta.json"))
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_ctime_ns > time.time_ns() - SETTLED_NS:
        return None
    return fingerprint(info)


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


class Removal(NamedTuple):
    removed: list[Candidate]
    problems: list[str]  # one line per session that could not be removed, or not put back whole


def remove(candidates: list[Candidate], advance: Optional[Callable[[int], None]] = None) -> Removal:
    """Delete the planned sessions and their archived handoffs.

    Each session goes whole through ``_remove_one`` on one of several threads, so renaming,
    checking and deleting overlap instead of running as phases. ``advance`` is called once
    per candidate, removed or kept. On Ctrl+C each session is removed whole or not at all.
    """
    if not candidates:
        return Removal([], [])
    resolvers = {id(c.resolver): c.resolver for c in candidates}
    sessions_ok = {key: _is_inside(r, r.sessions_dir) for key, r in resolvers.items()}
    handoffs_ok = {key: _is_inside(r, r.get_handoff_dir()) for key, r in resolvers.items()}
    jobs = [(c, sessions_ok[id(c.resolver)], handoffs_ok[id(c.resolver)]) for c in candidates]
    removed, problems = [], []
    with contextlib.closing(_parallel(_remove_one, jobs)) as results:
        for candidate, (freed, problem) in zip(candidates, results):
            if freed is not None:
                removed.append(candidate._replace(size=freed))
            if problem:
                problems.append(f"{candidate.session_id}: {problem}")
            if advance:
                advance(1)
    return Removal(removed, problems)


def _parallel(function: Callable[[Job], Result], jobs: list[Job]) -> Generator[Result, None, None]:
    """``function`` over ``jobs`` on up to ``WORKERS`` threads, ``CHUNK`` jobs at a time, the results in order.

    Ctrl+C raises KeyboardInterrupt in the main thread only, which runs no job: the batches not
    started are cancelled and those started run to their end, so no job is cut in half.
    """

    batches = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]
    pool = ThreadPoolExecutor(WORKERS)  # a thread is started per batch handed out, up to WORKERS
    try:
        for results in pool.map(partial(_each, function), batches):
            yield from results
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _each(function: Callable[[Job], Result], batch: list[Job]) -> list[Result]:
    return [function(job) for job in batch]


def _remove_one(job: tuple[Candidate, bool, bool]) -> tuple[Optional[int], Optional[str]]:
    """Set one session aside, prune its handoff and delete it: (bytes freed or None when kept, a problem)."""
    candidate, sessions_ok, handoffs_ok = job
    if not sessions_ok:
        return None, f"{candidate.resolver.sessions_dir} resolves outside the root; not deleting through it"
    try:
        trash = _set_aside(candidate)
        if trash is None:
            return None, None
        session_id = session_id_of(candidate.session_id)
        # before the deleting, so a board started afresh meanwhile keeps the handoff it writes
        if (
            handoffs_ok
            and is_session_id(session_id)
            and not os.path.lexists(candidate.resolver.get_session_blackboard_dir(session_id))
        ):
            with contextlib.suppress(FileNotFoundError):  # unlink removes a symlink itself, never its target
                os.unlink(candidate.resolver.handoff_path(session_id))
        return _delete_tree(trash), None
    except OSError as exc:
        return None, str(exc)


def _is_inside(resolver: PathResolver, directory: str) -> bool:
    """Never delete through a folder that is a link to somewhere outside the root."""
    return resolves_inside(resolver.root, directory)


def _set_aside(candidate: Candidate) -> Optional[str]:
    """Rename the session out of the way if it is still finished; the trash path, or None.

    Checked before (a session resumed since the plan is left alone) and again after: once it
    has moved, hooks (which open it by its name) can no longer change it, so what the second
    check sees is what gets deleted.
    """
    if not _still_finished(candidate, candidate.directory):
        return None
    trash = candidate.resolver.trash_dir(candidate.session_id, os.getpid())
    try:
        os.rename(candidate.directory, trash)
    except OSError:
        return None  # gone already, or not ours to move
    if _still_finished(candidate, trash):
        return trash
    try:  # resumed in the moment between the two checks, or swapped for a link: put it back
        os.rename(trash, candidate.directory)
    except OSError:
        raise OSError(
            f"resumed while being removed, and a new {candidate.directory} appeared meanwhile; "
            f"the resumed board is kept whole at {trash}; see `blackboard doctor`"
        ) from None
    return None


def _still_finished(candidate: Candidate, directory: str) -> bool:
    """Whether ``directory`` is a real directory whose ``_meta.json`` says the session is finished.

    Cheap when ``_meta.json`` has the fingerprint it had just before the plan read it: every
    write replaces the file (a new inode, a new ctime), so an equal fingerprint means the plan
    read this very content. Otherwise it is read again.
    """
    path = os.path.join(directory, "_meta.json")
    try:
        if not stat.S_ISDIR(os.lstat(directory).st_mode):
            return False
        if candidate.seen is not None and fingerprint(os.lstat(path)) == candidate.seen:
            return True
    except OSError:
        return False
    meta = read_meta_or_none(path)
    return meta is not None and meta.get("status") in FINISHED


def _delete_tree(path: str) -> int:
    """Delete a session directory, returning the bytes freed; symlinks inside are unlinked, never followed.

    ``_meta.json`` goes last, so a board whose deleting failed half-way is still known as a
    finished session, and the next cleanup takes it.
    """
    freed = 0
    with os.scandir(path) as scan:
        entries = sorted(scan, key=lambda e: e.name == "_meta.json")
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            freed += tree_size(entry.path)
            shutil.rmtree(entry.path)
        else:
            with contextlib.suppress(FileNotFoundError):
                freed += entry.stat(follow_symlinks=False).st_size
                os.unlink(entry.path)
    os.rmdir(path)
    return freed
