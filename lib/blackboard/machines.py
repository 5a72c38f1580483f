"""This machine's id, and the copies of other machines' sessions sync keeps apart from this machine's own (ADR 30).

Every machine has a random id, made once and kept under the root; its host name is only a
label. Sync keeps what another machine sent under that machine's id,

    _sync/machines/{machine-id}/sessions/{session-id}/…   its board files and _meta.json
    _sync/machines/{machine-id}/handoff/handoff-{session-id}.md

never in ``sessions/``, which holds this machine's sessions alone. Going on from another
machine's session (a resume, a note or a task written into it) makes a copy of it in
``sessions/`` that says where it came from (``continues``); the other copy stays as it is.

Light on purpose: SessionStart and every command that names a session may ask it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import time

from .fsutil import atomic_write, create_exclusive, make_dirs, names_in, read_bounded, refuse_links
from .ids import is_session_id
from .meta import ENDED, FINISHED, Meta, read_meta_or_none, update_meta
from .paths import META_FILE, PathResolver

MACHINE_ID = re.compile(r"[0-9a-f]{32}")
LEGACY_SOURCE = "shared"  # what the old shared ref held, read once: no machine's id looks like it
ID_FILE = ".machine-id"


def machine_id(root: str) -> str:
    """This machine's id: 32 random hex digits, made the first time and kept in ``$ROOT/.machine-id``.

    Two processes making it at once agree: the file is created exclusively, and both read it back.
    """
    path = os.path.join(root, ID_FILE)
    found = (read_bounded(path, 64) or b"").decode("ascii", "replace").strip()
    if MACHINE_ID.fullmatch(found):
        return found
    refuse_links(root, root)
    make_dirs(root)
    if not create_exclusive(path, os.urandom(16).hex() + "\n"):
        found = (read_bounded(path, 64) or b"").decode("ascii", "replace").strip()
        if not MACHINE_ID.fullmatch(found):  # damaged: a new id, and this machine's ref starts afresh
            atomic_write(path, os.urandom(16).hex() + "\n")
    return (read_bounded(path, 64) or b"").decode("ascii").strip()


def is_source(name: str) -> bool:
    """Whether ``name`` can be a folder of ``_sync/machines``: a machine id, or the old shared ref."""
    return bool(MACHINE_ID.fullmatch(name)) or name == LEGACY_SOURCE


def copies_dir(resolver: PathResolver, source: str | None = None) -> str:
    """``_sync/machines`` (or one source's folder in it)."""
    base = os.path.join(resolver.sync_dir, "machines")
    if source is None:
        return base
    if not is_source(source):
        raise ValueError(f"not a machine id: {source!r}")
    return os.path.join(base, source)


def copy_dir(resolver: PathResolver, source: str, session_id: str) -> str:
    """Where ``source``'s copy of a session is kept here."""
    if not is_session_id(session_id):
        raise ValueError(f"not a session id: {session_id!r}")
    return os.path.join(copies_dir(resolver, source), "sessions", session_id)


def copy_handoff(resolver: PathResolver, source: str, session_id: str) -> str:
    if not is_session_id(session_id):
        raise ValueError(f"not a session id: {session_id!r}")
    return os.path.join(copies_dir(resolver, source), "handoff", f"handoff-{session_id}.md")


def sources(resolver: PathResolver) -> list[str]:
    """The machines (and the old shared ref) this machine holds copies from."""
    return [name for name in names_in(copies_dir(resolver)) if is_source(name)]


def copies_of(resolver: PathResolver, session_id: str) -> list[tuple[str, str]]:
    """``(source, folder)`` of every other machine's copy of ``session_id`` here, newest first."""
    if not is_session_id(session_id) or not os.path.isdir(copies_dir(resolver)):
        return []
    found = []
    for source in sources(resolver):
        folder = copy_dir(resolver, source, session_id)
        try:
            found.append((os.lstat(os.path.join(folder, META_FILE)).st_mtime, source, folder))
        except OSError:
            continue
    return [(source, folder) for _, source, folder in sorted(found, reverse=True)]


class CopyResolver(PathResolver):
    """The paths of one machine's copies as a project's own: ``blackboard show`` and ``handoff`` read another
    machine's session through it, as they read one of this machine's. Nothing writes through it: a command that
    writes to such a session goes on in a copy of its own (``continue_from``)."""

    def __init__(self, resolver: PathResolver, source: str) -> None:
        super().__init__(resolver.root, resolver.project)
        self.source = source
        self.copies = copies_dir(resolver, source)  # checks ``source``

    @property
    def sessions_dir(self) -> str:
        return os.path.join(self.copies, "sessions")

    def handoff_path(self, session_id: str) -> str:
        return copy_handoff(self, self.source, session_id)


def copies(resolver: PathResolver) -> list[tuple[str, str]]:
    """``(source, session id)`` of every other machine's session held here that this machine has none of: the
    newest copy of each."""
    held = sources(resolver)
    own = set(names_in(resolver.sessions_dir)) if held else set()
    newest: dict[str, tuple[float, str]] = {}
    for source in held:
        folder = os.path.join(copies_dir(resolver, source), "sessions")
        for session_id in filter(is_session_id, names_in(folder)):
            try:
                when = os.lstat(os.path.join(folder, session_id, META_FILE)).st_mtime
            except OSError:
                continue
            if session_id not in own and when > newest.get(session_id, (-1.0, ""))[0]:
                newest[session_id] = (when, source)
    return [(source, session_id) for session_id, (_, source) in newest.items()]


def continue_from(resolver: PathResolver, session_id: str) -> str | None:
    """Go on here from another machine's copy of ``session_id``: copy it into ``sessions/``, saying where it came
    from (``continues: {machine, session}``); the machine it came from, or None when there is no copy.

    Only for a session this machine does not hold: this machine's own is never replaced.
    The copy is finished (it is reopened by a resume, or written to by a command); the other
    machine's copy stays as it came.
    """
    target = resolver.get_session_blackboard_dir(session_id)
    if os.path.lexists(target):
        return None
    for source, folder in copies_of(resolver, session_id):
        if read_meta_or_none(os.path.join(folder, META_FILE)) is None:
            continue
        staging = f"{target}.continuing-{os.getpid()}"
        refuse_links(resolver.root, resolver.sessions_dir)
        make_dirs(staging)
        for name in names_in(folder):
            data = read_bounded(os.path.join(folder, name), 64 * 1024 * 1024)
            if data is not None and not name.startswith("."):
                atomic_write(os.path.join(staging, name), data)
        try:
            os.rename(staging, target)
        except OSError:  # a session of that id began here meanwhile: it is this machine's, and stays
            shutil.rmtree(staging, ignore_errors=True)
            return None

        update_meta(resolver.meta_path(session_id), functools.partial(_continued, source=source, session_id=session_id))
        return source
    return None


def _continued(meta: Meta, source: str, session_id: str) -> None:
    """A copy of another machine's session, made this machine's: where it came from, none of that machine's."""
    meta["continues"] = {"machine": source, "session": session_id}  # type: ignore[typeddict-unknown-key]
    meta.pop("via", None)
    meta.pop("claude_pid", None)  # a process of the other machine's, which means nothing here
    if meta.get("status") not in FINISHED:
        meta["status"] = ENDED


def old_copies(resolver: PathResolver, older_than: float, keep: int) -> list[tuple[str, str]]:
    """``(source, session id)`` of the copies a cleanup removes: arrived here over ``older_than`` seconds ago by
    this machine's clock (never by another machine's stamps), past the newest ``keep`` of each machine."""
    now, doomed = time.time(), []
    for source in sources(resolver):
        arrived = []
        folder = os.path.join(copies_dir(resolver, source), "sessions")
        for session_id in filter(is_session_id, names_in(folder)):
            try:
                arrived.append((os.lstat(os.path.join(folder, session_id, META_FILE)).st_mtime, session_id))
            except OSError:
                continue
        for when, session_id in sorted(arrived, reverse=True)[keep:]:
            if now - when >= older_than:
                doomed.append((source, session_id))
    return doomed


def remove_copy(resolver: PathResolver, source: str, session_id: str) -> None:
    """Remove a copy of another machine's session from here (its machine's ref is not touched)."""
    folder = copy_dir(resolver, source, session_id)
    aside = f"{folder}.removing-{os.getpid()}"
    try:
        os.rename(folder, aside)
    except FileNotFoundError:
        return
    shutil.rmtree(aside, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(copy_handoff(resolver, source, session_id))


def held_bytes(resolver: PathResolver) -> int:
    """What the copies of other machines' sessions take here: their files and handoffs."""
    held = 0
    for source in sources(resolver):
        sessions = os.path.join(copies_dir(resolver, source), "sessions")
        held += sum(_files_bytes(os.path.join(sessions, session_id)) for session_id in names_in(sessions))
        held += _files_bytes(os.path.join(copies_dir(resolver, source), "handoff"))
    return held


def _files_bytes(folder: str) -> int:
    try:
        with os.scandir(folder) as found:
            return sum(e.stat(follow_symlinks=False).st_size for e in found if e.is_file(follow_symlinks=False))
    except OSError:
        return 0
