"""Taking what other machines' refs hold: checked by ``inbound``, kept under each machine's id (ADR 30).

What another machine sent goes to ``_sync/machines/{machine-id}/`` (``machines``), never to
``sessions/``: nothing read from another ref replaces, merges into or removes anything this
machine wrote, whatever ids, hosts or times it names. A session that machine removed from its
ref stays here until this machine's own cleanup removes it. What is refused is looked at again
in every round, not only when its ref changes.
"""

from __future__ import annotations

import json
import os
import shutil
import time

from .. import handoff
from ..fsutil import atomic_write, create_exclusive, make_dirs, read_bounded, refuse_links
from ..gitstore import BLOB, Entry, GitFailed, GitTimeout, Reader, Store
from ..machines import LEGACY_SOURCE, copies_dir, copy_dir, copy_handoff
from ..paths import PathResolver
from ..registry import still_active
from ..render import inline
from .inbound import (
    MAX_ACTIVE_BYTES,
    MAX_ACTIVE_RECORDS,
    MAX_FILE_BYTES,
    MAX_HELD_BYTES,
    MAX_IMPORT_BYTES,
    SESSION_FILES,
    Accepted,
    Layout,
    Refused,
    active_records,
    check_session,
    updated,
)
from .remote import IMPORTED
from .state import MAX_RETRIES, State, read_json

READ_AHEAD_SESSIONS, READ_AHEAD_BYTES = 200, 8 * 1024 * 1024  # read from git at once, at most
MAX_LISTED_SESSIONS = 1_000  # changed sessions listed by name; more, and the whole tree is read at once


class Imported:
    """What an import brought: sessions (their ids), refusals, and whether it finished.

    A plain class, as every record a hook makes: ``dataclasses`` imports ``inspect`` (ADR 28).
    """

    __slots__ = ("sessions", "refused", "complete")

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.refused: list[str] = []
        self.complete = True


class Budget:
    """What one import may still write here: ``MAX_IMPORT_BYTES``, a file counted each time a tree uses it; and
    what copies of other machines' sessions may hold here in all, ``MAX_HELD_BYTES``, so that a remote that
    sends new sessions before every round cannot fill the disk one bounded round at a time."""

    __slots__ = ("left", "room", "written")

    def __init__(self, held: int) -> None:
        self.left = MAX_IMPORT_BYTES
        self.room = MAX_HELD_BYTES - held
        self.written = 0

    def over(self, size: int) -> str | None:
        """Why ``size`` more bytes cannot be written in this round, or None."""
        mib = 1024 * 1024
        if size > self.room:
            return (
                f"what other machines' sessions hold here would pass {MAX_HELD_BYTES // mib} MiB (`blackboard cleanup`)"
            )
        if size > self.left:
            return f"over {MAX_IMPORT_BYTES // mib} MiB in one round; the rest next"
        return None

    def spend(self, size: int) -> None:
        self.left, self.room, self.written = self.left - size, self.room - size, self.written + size


def import_machines(
    resolver: PathResolver,
    store: Store,
    state: State,
    commits: dict[str, str],
    limit: int,
    deadline: float,
    held: int | None = None,
) -> Imported:
    """Take what each machine's commit (``commits``: machine id -> commit) holds that is new here, and look
    again at what was refused before; each ref to ``limit`` sessions; stops at ``deadline``. ``held``: what
    copies hold here now (measured), else as ``state.json`` last knew it.

    The newest handoffs that arrived are published into ``latest-handoff.md`` (each machine
    computes its own); ``_sync/publishing`` stays until they are, so a kill loses none.
    """
    result = Imported()
    todo = {s: c for s, c in commits.items() if c != state.known.get(s) or state.retry.get(s)}
    if not todo:
        return result
    publishing = resolver.sync_file("publishing")
    create_exclusive(publishing, "")
    offers: list[tuple[tuple[int, float, str], str]] = []
    budget = Budget(state.held if held is None else held)
    try:
        with store.reader(deadline) as reader:
            for source, commit in sorted(todo.items()):
                if time.monotonic() > deadline:
                    result.complete = False
                    break
                done = _import_one(resolver, store, reader, state, source, commit, limit, deadline, budget, result)
                offers += done
    finally:
        if offers:  # the newest few, oldest first: each brings its open work and closings into the latest
            newest = sorted(offers)[-handoff.MAX_OFFERS_PUBLISHED :]
            handoff.publish_latest(resolver, *(text for _, text in newest))
        handoff.remove_marker(publishing)
        state.held = MAX_HELD_BYTES - budget.room
        for line in result.refused:
            state.refuse(line)
    return result


def _import_one(
    resolver: PathResolver,
    store: Store,
    reader: Reader,
    state: State,
    source: str,
    commit: str,
    limit: int,
    deadline: float,
    budget: Budget,
    result: Imported,
) -> list[tuple[tuple[int, float, str], str]]:
    """One machine's commit: its changed sessions, and those refused before. The offers of handoffs it brought."""
    retry = set(state.retry.get(source, []))
    entries, cut = _entries_to_read(store, reader, state.known.get(source), commit, retry, deadline)
    layout = Layout(entries, legacy=source == LEGACY_SOURCE)
    label = "the old shared ref" if source == LEGACY_SOURCE else f"machine {source[:8]}"
    if layout.oversized:  # what it brought is forgotten (``settle``), and fetched again next round
        mib = MAX_FILE_BYTES // (1024 * 1024)
        result.refused.append(f"{label}: holds files over {mib} MiB ({layout.oversized[0]}…); refused, nothing kept")
        result.complete = False
        create_exclusive(resolver.sync_file("unsettled"), "")
        return []
    result.refused += [f"{label}: {line}" for line in layout.problems] + ([f"{label}: {cut}"] if cut else [])
    ids = sorted(set(layout.sessions) - layout.spoiled)
    if source == LEGACY_SOURCE:  # this machine's own from before, or taken then: here already
        ids = [i for i in ids if not os.path.lexists(resolver.get_session_blackboard_dir(i))]
    if len(ids) > limit:
        result.refused.append(f"{label}: holds over {limit} sessions; those from {ids[limit]} on refused")
        ids = ids[:limit]
    retry = {i for i in retry if i in layout.sessions} | layout.spoiled  # gone from its ref: nothing to retry
    if layout.active is not None:
        _import_active(resolver, reader, source, layout.active)
    offers = []
    complete = True
    contents: dict[str, bytes | None] = {}
    for n, session_id in enumerate(ids):
        if time.monotonic() > deadline:
            complete = False  # the next round takes up from the same commit
            break
        files = layout.files_of(session_id)
        why = budget.over(sum(max(e.size, 0) for e in files))
        if why is not None:
            complete = False
            result.refused.append(f"{label}: {why}")
            break
        if files[0].sha not in contents:  # the next few sessions' files, read in one exchange with git
            contents = _read_ahead(reader, layout, ids[n:])
        taken = _take(resolver, layout, contents, source, session_id, budget)
        if isinstance(taken, Refused):
            result.refused.append(f"{label}: {session_id}: {taken.detail}")
            retry.add(session_id)
            continue
        retry.discard(session_id)
        result.sessions.append(session_id)
        if taken.order is not None and taken.handoff is not None:
            offers.append((taken.order, taken.handoff))
    state.retry[source] = sorted(retry)[:MAX_RETRIES]
    if not state.retry[source]:
        del state.retry[source]
    if complete and cut is None:
        store.run(["update-ref", f"{IMPORTED}{source}", commit], deadline=deadline)
        state.known[source] = commit
    else:
        result.complete = False
    return offers


def _entries_to_read(
    store: Store, reader: Reader, old: str | None, new: str, retry: set[str], deadline: float
) -> tuple[list[Entry], str | None]:
    """The files of ``new`` worth a look, with their sizes: all of them the first time, else the sessions that
    changed since ``old`` (whole) and those refused before; and why the listing stops short, if it does."""
    changed: set[str] | None = None
    others: list[Entry] = []  # what changed outside the board layout: refused, and said so
    if old is not None and old != new:
        try:
            diff = store.diff(old, new, deadline)
            changed = _changed_sessions(diff)
            others = [e for status, e in diff if status != "D" and e.kind != "tree" and not _in_layout(e.path)]
        except GitFailed as exc:
            if isinstance(exc, GitTimeout):
                raise
            changed = None  # the old commit is gone: the whole tree is read
    elif old == new:
        changed = set()
    if changed is None or len(changed | retry) > MAX_LISTED_SESSIONS:
        return _whole_tree(store, new, deadline)
    wanted = sorted(changed | retry)
    paths = [p for i in wanted for p in (f"sessions/{i}", f"handoff/handoff-{i}.md")] + ["active.json"]
    entries = store.tree(new, paths, deadline) + others
    blobs = [e for e in entries if e.kind == BLOB]
    for entry, size in zip(blobs, reader.sizes([e.sha for e in blobs])):
        entry.size = size
    return entries, None


def _read_ahead(reader: Reader, layout: Layout, ids: list[str]) -> dict[str, bytes | None]:
    """The files of the first of ``ids`` and of those after it, up to ``READ_AHEAD`` sessions or bytes: one
    exchange with git for many small sessions (each costs a round trip), a bounded one for large ones."""
    shas: dict[str, None] = {}  # in order, each once: sessions often share a blob (an empty board file)
    held = 0
    for session_id in ids[:READ_AHEAD_SESSIONS]:
        files = layout.files_of(session_id)
        held += sum(max(e.size, 0) for e in files)
        if shas and held > READ_AHEAD_BYTES:
            break
        shas.update(dict.fromkeys(e.sha for e in files))
    names, found = list(shas), []
    for start in range(0, len(names), reader.AT_ONCE):
        found += reader.read_many(names[start : start + reader.AT_ONCE], MAX_FILE_BYTES)
    return dict(zip(names, found))


def _in_layout(path: str) -> bool:
    return path == "active.json" or path.startswith(("sessions/", "handoff/"))


def _changed_sessions(changes: list[tuple[str, Entry]]) -> set[str]:
    """The sessions a diff touches: a file of their folder, or their handoff."""
    found = set()
    for _, entry in changes:
        parts = entry.path.split("/")
        if parts[0] == "sessions" and len(parts) >= 2:
            found.add(parts[1])
        elif parts[0] == "handoff" and len(parts) == 2:
            found.add(handoff.handoff_id(parts[1]) or parts[1])
    return found


def _whole_tree(store: Store, commit: str, deadline: float) -> tuple[list[Entry], str | None]:
    """Every file of ``commit``; past ``gitstore.MAX_ENTRIES``, the first of them and a refusal of the rest.

    Git lists in path order, a folder's files together: the session it stopped in may be cut
    part-way, and is left out whole.
    """
    entries, more = store.tree_head(commit, deadline=deadline)
    if not more:
        return entries, None
    last = entries[-1].path.split("/")[:2]
    cut = f"its tree holds over {len(entries)} files; those from {inline('/'.join(last), 80)} on refused"
    return [e for e in entries if e.path.split("/")[:2] != last], cut


def _take(
    resolver: PathResolver,
    layout: Layout,
    contents: dict[str, bytes | None],
    source: str,
    session_id: str,
    budget: Budget,
) -> Refused | Accepted:
    """Check one session of ``source`` and keep it under that machine's id, whole; what was taken, or why not."""
    files = {name: contents.get(entry.sha) for name, entry in layout.sessions[session_id].items()}
    handoff_entry = layout.handoffs.get(session_id)
    handoff_data = False if handoff_entry is None else contents.get(handoff_entry.sha)
    checked = check_session(resolver.project, session_id, files, handoff_data)  # type: ignore[arg-type]
    if isinstance(checked, Refused):
        return checked
    folder = copy_dir(resolver, source, session_id)
    if not _same(folder, checked.files):
        budget.spend(sum(len(data) for data in checked.files.values()))
        _move_in(resolver, folder, checked.files)
    text = checked.handoff
    path = copy_handoff(resolver, source, session_id)
    if text is not None and read_bounded(path, handoff.MAX_HANDOFF_READ) != text.encode():
        budget.spend(len(text.encode()))
        refuse_links(resolver.root, os.path.dirname(path))
        make_dirs(os.path.dirname(path))
        atomic_write(path, text, durable=False)
    else:
        checked.order = None  # nothing new to offer
    return checked


def _same(folder: str, files: dict[str, bytes]) -> bool:
    """Whether the copy here holds exactly ``files``: a board file the update no longer holds counts too."""
    try:
        present = {n for n in os.listdir(folder) if n in SESSION_FILES}
    except OSError:
        return False
    if present != files.keys():
        return False
    return all(read_bounded(os.path.join(folder, name), MAX_FILE_BYTES + 1) == data for name, data in files.items())


def _move_in(resolver: PathResolver, target: str, files: dict[str, bytes]) -> None:
    """Assemble the copy beside its place and rename it in, in one step; an older copy goes after."""
    incoming = f"{target}.incoming-{os.getpid()}"
    refuse_links(resolver.root, os.path.dirname(target))
    make_dirs(os.path.dirname(target))
    shutil.rmtree(incoming, ignore_errors=True)  # left by a process of the same pid that died half-way
    make_dirs(incoming)
    for name, data in files.items():  # a folder of its own, renamed in whole: each file written once, plainly
        _write_new(os.path.join(incoming, name), data)
    if os.path.isdir(target):
        old = f"{target}.replaced-{os.getpid()}"
        os.rename(target, old)
        os.rename(incoming, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(incoming, target)


def _write_new(path: str, data: bytes) -> None:
    """Create ``path`` (never through a link, never over a file), private to this user, holding ``data``.

    Not synced to disk: a copy is another machine's, to be had again from its ref (ADR 30).
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def clear_leftovers(resolver: PathResolver) -> None:
    """Remove the half-assembled copies a killed import left (``*.incoming-*``, ``*.replaced-*``), and the
    folders of markers a version before ADR 30 kept (``removed``, ``touched``, ``incoming``)."""
    for old in ("removed", "touched", "incoming"):
        shutil.rmtree(os.path.join(resolver.sync_dir, old), ignore_errors=True)
    for source in os.listdir(copies_dir(resolver)) if os.path.isdir(copies_dir(resolver)) else []:
        folder = os.path.join(copies_dir(resolver), source, "sessions")
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            if ".incoming-" in name or ".replaced-" in name:
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _import_active(resolver: PathResolver, reader: Reader, source: str, entry: Entry) -> None:
    """A machine's active sessions, checked and bounded, into ``_sync/remote-active.json``: under its id, so no
    machine can speak for another; a record is dropped once a day old; the most recently updated kept."""
    known = read_json(resolver.sync_file("remote-active.json")).get("machines")
    machines = {k: v for k, v in known.items() if isinstance(v, list)} if isinstance(known, dict) else {}
    machines[source] = active_records(reader.read(entry.sha, MAX_ACTIVE_BYTES))
    fresh = {k: v for k, v in machines.items() if v and still_active(updated(v))}
    newest = sorted(fresh, key=lambda k: updated(fresh[k]), reverse=True)[:MAX_ACTIVE_RECORDS]
    atomic_write(
        resolver.sync_file("remote-active.json"), json.dumps({"machines": {k: fresh[k] for k in newest}}) + "\n"
    )
