"""Taking what the remote holds that this machine lacks: checked by ``inbound``, moved in whole (ADR 19)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable

from .. import handoff
from ..fsutil import atomic_write, create_exclusive, json_object, make_dirs, read_bounded, refuse_links
from ..gitstore import BLOB, Entry, GitFailed, GitTimeout, Reader, Store, TooLarge
from ..meta import FINISHED, read_meta_or_none, written_here
from ..paths import META_FILE, PathResolver
from ..project import safe_segment
from ..registry import still_active
from ..render import inline
from .inbound import (
    MAX_ACTIVE_BYTES,
    MAX_ACTIVE_RECORDS,
    MAX_FILE_BYTES,
    MAX_UNHELD_BYTES,
    SESSION_FILES,
    Accepted,
    Layout,
    Refused,
    active_records,
    check_session,
    updated,
)
from .state import State, metadata_stamp, metadata_unchanged, read_json, session_signature, signature_bytes


class Imported:
    """What an import brought: sessions, conflicts, refusals, and whether it finished.

    A plain class, as every record a hook makes: ``dataclasses`` imports ``inspect`` (ADR 28).
    """

    __slots__ = ("sessions", "conflicts", "refused", "complete", "theirs")

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.conflicts: list[str] = []
        self.refused: list[str] = []
        self.complete = True
        self.theirs: list[str] = []  # ids this machine wrote that the remote holds from another host


def import_commit(
    resolver: PathResolver,
    store: Store,
    state: State,
    commit: str | None,
    host: str,
    deadline: float,
    compared: Callable[[], object] = lambda: None,
) -> Imported:
    """Take what ``commit`` holds that this machine lacks, checking every file; stops at ``deadline``.

    What moved in is recorded in ``state`` at once, so an import that stops half-way (a
    deadline, a disk error) never mistakes its own arrivals for this machine's sessions.
    ``compared`` is called once the commit the last import came from is read no more.
    """
    result = Imported()
    if commit is None or commit == state.imported:
        return result
    _remove_tree(os.path.join(resolver.sync_dir, "incoming"))  # what an import killed half-way left
    handoff.publish_what_an_import_left(resolver)
    publishing = resolver.sync_file("publishing")  # until its handoffs are published: a kill leaves it
    create_exclusive(publishing, "")
    offers: list[tuple[tuple[int, float, str], str]] = []
    with store.reader(deadline) as reader:  # one git for every blob, started while the trees are compared
        listing = _entries_to_read(store, reader, state.imported, commit, deadline)
        compared()
        layout = Layout(listing.entries)
        _measure_unmeasured(resolver, state)
        held = sum(size for i, size in state.foreign.items() if i not in layout.sessions)  # the rest it replaces
        ids = [i for i in sorted(layout.sessions) if i not in layout.removed and i not in layout.spoiled]
        ids = [i for i in ids if not _removed(resolver, state, i, listing.unremoved)]
        ours = [i for i in ids if _written_here(resolver, state, i, host)]
        clashes, continued, planted = _clashes(resolver, state, reader, layout, ours, host)
        result.theirs = continued + [line.split(":")[0].split("/")[-1] for line in clashes + planted]
        mine = set(ours) - set(continued)
        # This machine's own sessions, as the remote holds them, are not written here: only what
        # the import takes counts (all of the tree when it is read whole, say after a rewrite).
        written = layout.taken_bytes - layout.bytes_of(mine)
        # Those the state does not know as sent (it was started afresh) may sit in the repository
        # too: as much room for each as it holds here, no more.
        unsent = [i for i in mine if i not in state.pushed or i in state.resend] if state.imported is None else []
        room = written + sum(min(layout.bytes_of([i]), _board_bytes(resolver, i)) for i in unsent)
        too_large = layout.too_large(held, written) or _keeps_too_much(store, state, room, commit, deadline)
        if too_large:
            raise TooLarge(f"{too_large}; refused, nothing kept")
        result.refused += layout.problems + planted + ([listing.cut] if listing.cut else [])
        result.complete = listing.cut is None  # what is past the cut is read again next time, in case it fits
        result.refused += _take_removals(resolver, state, layout.removed, host)
        for session_id in listing.unremoved:  # a machine went on in a removed session and sent it again
            state.removed.pop(session_id, None)
        if listing.dropped is None:  # the whole tree was read: what it lacks, the remote holds no more
            gone = state.left.keys() - layout.sessions.keys() - layout.spoiled
        else:
            gone = state.left.keys() & listing.dropped
        for session_id in gone | (state.left.keys() & layout.removed):
            del state.left[session_id]
        try:
            _import_active(resolver, reader, layout, host)
            result.conflicts += clashes
            theirs = [i for i in ids if i not in mine]
            for session_id in theirs:  # one session's files in memory at a time
                if time.monotonic() > deadline:
                    result.complete = False  # the next round takes up from the same commit
                    break
                shas = [e.sha for e in layout.files_of(session_id)]
                contents = dict(zip(shas, reader.read_many(shas, MAX_FILE_BYTES)))
                taken = _import_session(resolver, state, layout, contents, session_id)
                if isinstance(taken, Refused):
                    if taken.kind == "conflict":
                        result.conflicts.append(f"{session_id}: conflict: {taken.detail}")
                    else:
                        result.refused.append(f"{session_id}: {taken.detail}")
                    continue
                result.sessions.append(session_id)
                if taken.order is not None and taken.handoff is not None:
                    offers.append((taken.order, taken.handoff))
        finally:
            # the newest few, oldest first: the newest is the latest, and each brings its open work
            # and closings into it (docs/adr/0022-open-work-ledger.md); the rest are archived
            if offers:
                newest = sorted(offers)[-handoff.MAX_OFFERS_PUBLISHED :]
                handoff.publish_latest(resolver, *(text for _, text in newest))
            handoff.remove_marker(publishing)
            for line in result.refused:
                state.refuse(line)
            for line in result.conflicts:
                session_id, _, detail = line.partition(": ")
                state.conflicts[session_id] = detail
    if result.complete:
        state.imported = commit
    return result


def _keeps_too_much(store: Store, state: State, taken: int, commit: str, deadline: float) -> str | None:
    """Why ``commit`` is refused for what it would keep in the private repository, or None.

    The repository keeps the remote's newest commit and the last one imported, whole. The
    bounds above read what changed, so a remote that keeps what is refused here (files no
    board takes, folders of long names) and adds more in each commit would grow it by up to
    a fetch a round. What the commit's objects take on disk is bounded by what the boards
    here hold (this machine's sessions as last sent, those imported) or held before they
    left (``state.left``: the remote may hold them until a removal lands or its tree drops
    them, or for good when a person deleted them), what this import writes and this
    machine's sessions the state does not know as sent hold here (``taken``), and
    ``MAX_UNHELD_BYTES``. Packs are counted first: they hold every object here, so while
    they are under the bound the commit is, and nothing is listed.
    """
    room = taken + MAX_UNHELD_BYTES
    on_disk = sum(store.pack_sizes().values())
    if on_disk <= room:
        return None
    ours = (signature for i, signature in state.pushed.items() if i not in state.foreign)
    room += sum(state.foreign.values()) + sum(map(signature_bytes, ours)) + sum(state.left.values())
    if on_disk <= room or store.disk_bytes(commit, deadline) <= room:
        return None
    mib = 1024 * 1024
    return (
        f"the remote's commit takes over {room // mib} MiB here, {MAX_UNHELD_BYTES // mib} MiB more than "
        "the boards here hold and its import writes (refused files, or what no board holds)"
    )


def _take_removals(resolver: PathResolver, state: State, removed: set[str], host: str) -> list[str]:
    """Remember the remote's removals of sessions the remote had from here or another machine; refuse the rest.

    A removal of a session this machine wrote but never sent is no cleanup's: the remote never
    held it. Taking it would keep that session from ever being sent. Removals of sessions this
    machine never had are not remembered (the tree's own ``removed/`` keeps them from import).
    """
    refused = []
    for session_id in sorted(removed):
        written_here = _written_here(resolver, state, session_id, host)  # False, too, for one imported earlier
        sent = session_id in state.pushed and session_id not in state.resend  # resend: not sent to this remote
        if session_id in state.foreign or sent:
            state.removed[session_id] = None
        elif written_here:
            refused.append(f"removed/{session_id}: this machine's session was never sent; the removal is ignored")
    return refused


def _written_here(resolver: PathResolver, state: State, session_id: str, host: str) -> bool:
    """Whether the local session of that id is this machine's own: by the host its metadata names,
    unless sync brought it (a remote may name this machine)."""
    if session_id in state.foreign or not os.path.lexists(resolver.get_session_blackboard_dir(session_id)):
        return False
    local = read_meta_or_none(resolver.meta_path(session_id)) or {}
    if not written_here(local, host):
        state.foreign[session_id] = 0  # brought in by an import that stopped before it was recorded
        return False
    return True


def _clashes(
    resolver: PathResolver, state: State, reader: Reader, layout: Layout, ours: list[str], host: str
) -> tuple[list[str], list[str], list[str]]:
    """Sessions the remote holds under ids this machine also wrote: ``(conflicts, continued, planted)``.

    Fine when the remote's copy is ours, pushed earlier. One another machine sent is a
    continuation when this machine's copy is finished and unchanged since it was synced, and
    theirs goes on from it (that machine resumed it): it is imported. While this machine works
    in its copy, or holds work in it not yet sent (a session it began, one it resumed), another
    copy takes nothing from it: a remote can plant one under an id this machine's active record
    names. That copy is refused, and this machine's is sent in its place. A copy that does not go
    on from this machine's unchanged one is a conflict: ours is kept here and sent no more. A
    state started afresh knows nothing synced, so there any other copy is a conflict.
    """
    clashes, continued, planted = [], [], []
    for session_id in ours:
        entry = layout.sessions[session_id].get(META_FILE)
        theirs = json_object(reader.read(entry.sha, 64 * 1024) if entry is not None else None)
        other = theirs.get("host")
        if other == host:
            continue
        unchanged = _unchanged_since_sync(resolver, state, session_id)
        if unchanged and _goes_on_from(theirs, resolver, session_id):
            continued.append(session_id)
        elif not unchanged and state.imported is not None:
            planted.append(
                f"sessions/{session_id}: a copy from {inline(other, 64)} of a session this machine works in or "
                "has not sent yet; refused, and this machine's sent in its place"
            )
        else:
            clashes.append(f"{session_id}: conflict: also written by {inline(other, 64)}; kept this machine's")
    return clashes, continued, planted


def _goes_on_from(theirs: dict, resolver: PathResolver, session_id: str) -> bool:
    """Whether a remote copy of a session goes on from this machine's: the same start, resumed since.

    Another copy (a session begun elsewhere under the same id, by `--session-id` or by a
    remote) is no continuation: taking it would lose this machine's.
    """
    local = read_meta_or_none(resolver.meta_path(session_id)) or {}
    resumed = theirs.get("resumed_at")
    before = local.get("resumed_at") or []
    return theirs.get("started") == local.get("started") and isinstance(resumed, list) and len(resumed) > len(before)


def _unchanged_since_sync(resolver: PathResolver, state: State, session_id: str) -> bool:
    """Whether the local session is finished, not active here, and as it was when last pushed or imported."""
    if os.path.lexists(resolver.active_marker(session_id)):
        return False
    local = read_meta_or_none(resolver.meta_path(session_id)) or {}
    recorded = state.pushed.get(session_id)
    if session_id in state.foreign:  # recorded by its metadata alone (``metadata_stamp``)
        return local.get("status") in FINISHED and metadata_unchanged(resolver, session_id, recorded)
    return local.get("status") in FINISHED and recorded == session_signature(resolver, session_id)


class Listing:
    """The files of a commit an import looks at, and what else changed since the last import's commit."""

    __slots__ = ("entries", "unremoved", "dropped", "cut")

    def __init__(self, entries: list[Entry], unremoved: set[str], dropped: set[str] | None = None) -> None:
        self.entries = entries
        self.unremoved = unremoved  # sessions whose removal marker went (sent again by a machine that resumed them)
        self.dropped = dropped  # session folders the commit deleted; None when the whole tree is listed
        self.cut: str | None = None  # why the listing stops short of the tree: the rest is refused


def _whole_tree(store: Store, commit: str, deadline: float) -> Listing:
    """Every file of ``commit``; past ``gitstore.MAX_ENTRIES``, the first of them and a refusal of the rest.

    A remote over the bound (an older version sent every session of a machine, or a remote
    filled on purpose) costs what is past it, not the round: what this machine sends still
    goes. Git lists in path order, a folder's files together: the session it stopped in may
    be cut part-way, and is left out whole.
    """
    entries, more = store.tree_head(commit, deadline=deadline)
    cut = None
    if more:
        last = entries[-1].path.split("/")[:2]
        cut = f"the remote's tree holds over {len(entries)} files; those from {inline('/'.join(last), 80)} on refused"
        if last[0] == "sessions":
            entries = [e for e in entries if e.path.split("/")[:2] != last]
    held = {e.path.split("/")[1] for e in entries if e.path.startswith("sessions/")}
    listing = Listing(entries, held - {e.path.split("/")[1] for e in entries if e.path.startswith("removed/")})
    if cut is not None:
        listing.dropped, listing.cut = set(), cut  # what the tree lacks is not known: nothing counts as gone
    return listing


def _entries_to_read(store: Store, reader: Reader, old: str | None, new: str, deadline: float) -> Listing:
    """The files of ``new`` worth a look, with their sizes: all of them the first time, else what changed since
    ``old``; the sessions whose removal marker went since ``old``, and the session folders that went.

    A new session folder comes whole in the diff. One that changed, or lost a file, is listed
    whole, since an import replaces a folder whole; so is the folder of a handoff that changed alone (a
    round that ran between a session's end and its final handoff). A diff names no sizes:
    they are asked for before any content, so an oversized file is refused unread.
    """
    changes = None
    if old:
        try:
            changes = store.diff(old, new, deadline)
        except GitFailed as exc:
            if isinstance(exc, GitTimeout):
                raise
            changes = None  # the old commit is gone (the remote was rewritten), or it changed past the bound
    if changes is None:
        return _whole_tree(store, new, deadline)
    whole = {e.path for status, e in changes if status == "A" and e.kind == "tree"}
    entries = []
    relist: set[str] = set()
    unremoved, dropped = set(), set()
    for status, entry in changes:
        if status == "D" and entry.path.startswith("removed/"):
            unremoved.add(entry.path[len("removed/") :])
        if status == "D" and entry.kind == "tree" and entry.path.startswith("sessions/"):
            dropped.add(entry.path[len("sessions/") :])
        if entry.kind == "tree":
            continue
        parts = entry.path.split("/")
        folder = "/".join(parts[:2])
        if parts[0] == "sessions" and len(parts) > 2 and folder not in whole:
            relist.add(folder)  # a file that went as well: the copy here loses it too
            continue
        if status == "D":
            continue
        entries.append(entry)
        handed_off = handoff.handoff_id(parts[1]) if parts[0] == "handoff" and len(parts) == 2 else None
        if handed_off is not None and f"sessions/{handed_off}" not in whole:
            relist.add(f"sessions/{handed_off}")
    if len(relist) >= 1000:  # one listing of the whole tree is cheaper than a long argument list
        listing = _whole_tree(store, new, deadline)
        listing.unremoved = unremoved
        return listing
    blobs = [e for e in entries if e.kind == BLOB]
    for entry, size in zip(blobs, reader.sizes([e.sha for e in blobs])):
        entry.size = size
    return Listing(entries + (store.tree(new, sorted(relist), deadline) if relist else []), unremoved, dropped)


def _removed(resolver: PathResolver, state: State, session_id: str, unremoved: set[str]) -> bool:
    """Whether a cleanup removed the session: here (its marker waits to be pushed), or on another machine
    unless one went on in it since (``unremoved``). Then it is never imported again."""
    if os.path.lexists(resolver.sync_removed_marker(session_id)):
        return True
    return session_id in state.removed and session_id not in unremoved


def _import_session(
    resolver: PathResolver, state: State, layout: Layout, contents: dict[str, bytes | None], session_id: str
) -> Refused | Accepted:
    """Check one remote session (not one of this machine's) and move it in whole; what was taken, or why not."""
    files = {name: contents.get(entry.sha) for name, entry in layout.sessions[session_id].items()}
    handoff_entry = layout.handoffs.get(session_id)
    if handoff_entry is None:
        checked = check_session(resolver.project, session_id, files, False)
    else:
        checked = check_session(resolver.project, session_id, files, contents.get(handoff_entry.sha))
    if isinstance(checked, Refused):
        return checked
    same = False
    if os.path.lexists(resolver.get_session_blackboard_dir(session_id)):  # imported before: an update from its machine
        existing = read_meta_or_none(resolver.meta_path(session_id)) or {}
        if existing.get("status") not in FINISHED or os.path.lexists(resolver.active_marker(session_id)):
            return Refused("resumed on this machine, which is working in it; kept this machine's", "conflict")
        if existing.get("host") != checked.meta.get("host") and not _unchanged_since_sync(resolver, state, session_id):
            return Refused(f"also sent by {inline(existing.get('host'), 64)}; kept the first one", "conflict")
        same = _same(resolver, session_id, checked.files)
    state.foreign.setdefault(session_id, 0)  # before the move: an import cut short must not take it for ours
    state.dropped.pop(session_id, None)
    state.resend.pop(session_id, None)
    if not same:
        _move_in(resolver, session_id, checked.files)
    state.pushed[session_id] = metadata_stamp(resolver, session_id)  # as it came: sent again once worked on here
    state.conflicts.pop(session_id, None)
    text = checked.handoff
    if text is not None and read_bounded(resolver.handoff_path(session_id), handoff.MAX_HANDOFF_READ) != text.encode():
        handoff.write_session_handoff(resolver, session_id, text)
    else:
        checked.order = None  # nothing new to offer
    state.foreign[session_id] = _bytes_held(resolver, session_id)
    return checked


def _bytes_held(resolver: PathResolver, session_id: str) -> int:
    """What an imported session takes here: its folder's files and its handoff, as they are on disk."""
    with os.scandir(resolver.get_session_blackboard_dir(session_id)) as found:
        held = sum(entry.stat(follow_symlinks=False).st_size for entry in found)
    with contextlib.suppress(FileNotFoundError):
        held += os.lstat(resolver.handoff_path(session_id)).st_size
    return held


def _board_bytes(resolver: PathResolver, session_id: str) -> int:
    """What this machine would send of its own session: its board files and handoff, each at most the cap;
    nothing for a folder that is a link or no folder (sync never sends one)."""
    directory = resolver.get_session_blackboard_dir(session_id)
    if os.path.islink(directory) or not os.path.isdir(directory):
        return 0
    return signature_bytes(session_signature(resolver, session_id))


def _measure_unmeasured(resolver: PathResolver, state: State) -> None:
    """Measure the imported sessions recorded at 0 bytes: by an import killed before it measured them,
    or in a state written before sizes were kept. Left at 0, they would not count towards the bound."""
    for session_id, size in state.foreign.items():
        if size == 0 and os.path.isdir(resolver.get_session_blackboard_dir(session_id)):
            state.foreign[session_id] = _bytes_held(resolver, session_id)


def _same(resolver: PathResolver, session_id: str, files: dict[str, bytes]) -> bool:
    """Whether the copy here holds exactly ``files``: a board file the update no longer holds counts too."""
    directory = resolver.get_session_blackboard_dir(session_id)
    if {n for n in os.listdir(directory) if n in SESSION_FILES} != files.keys():
        return False
    return all(read_bounded(os.path.join(directory, name), MAX_FILE_BYTES + 1) == data for name, data in files.items())


def _move_in(resolver: PathResolver, session_id: str, files: dict[str, bytes]) -> None:
    """Assemble the session under ``_sync/incoming`` and rename it into ``sessions/`` in one step."""
    incoming = resolver.sync_incoming(session_id, os.getpid())
    target = resolver.get_session_blackboard_dir(session_id)
    refuse_links(resolver.root, incoming)
    refuse_links(resolver.root, target)
    if os.path.lexists(incoming):  # left by a process of the same pid that died half-way
        _remove_tree(incoming)
    make_dirs(incoming)
    for name, data in files.items():
        atomic_write(os.path.join(incoming, name), data)
    make_dirs(resolver.sessions_dir)
    if os.path.isdir(target):  # a newer copy of a session imported before: set the old one aside first
        old = incoming + ".replaced"  # under _sync, not sessions/: a kill here leaves no twin there
        os.rename(target, old)
        os.rename(incoming, target)
        _remove_tree(old)
    else:
        os.rename(incoming, target)


def _remove_tree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _import_active(resolver: PathResolver, reader: Reader, layout: Layout, host: str) -> None:
    """Other machines' active sessions, checked and bounded, into ``_sync/remote-active.json``.

    Each machine's file replaces what was known of that machine. A record names the host
    of the file it came from, is dropped once it is a day old, and the most recently
    updated machines are kept: fake files cannot crowd out real ones for good.
    """
    theirs = {name: entry for name, entry in layout.active.items() if name != safe_segment(host)}
    if not theirs:
        return
    known = read_json(resolver.sync_file("remote-active.json")).get("machines")
    machines = {k: v for k, v in known.items() if isinstance(v, list)} if isinstance(known, dict) else {}
    for name, entry in theirs.items():
        machines[name] = active_records(name, reader.read(entry.sha, MAX_ACTIVE_BYTES))
    fresh = {k: v for k, v in machines.items() if v and still_active(updated(v))}
    newest = sorted(fresh, key=lambda k: updated(fresh[k]), reverse=True)[:MAX_ACTIVE_RECORDS]
    text = json.dumps({"machines": {k: fresh[k] for k in newest}}, indent=1) + "\n"
    atomic_write(resolver.sync_file("remote-active.json"), text)
