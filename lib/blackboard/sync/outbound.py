"""What this machine sends: its finished sessions not yet pushed, redacted; its removals; its active record."""

from __future__ import annotations

import json
import os

from .. import handoff
from ..clock import now_iso
from ..fsutil import create_exclusive, make_dirs, names_in, read_bounded, refuse_links
from ..ids import is_session_id
from ..meta import FINISHED, Meta, arrived_by_sync, read_meta_or_none
from ..paths import BOARD_FILES, META_FILE, PathResolver
from ..project import safe_segment
from ..redact import redact
from ..registry import active_session_ids, session_folders
from .inbound import MAX_ACTIVE_RECORDS, MAX_FILE_BYTES, MAX_SESSIONS_SENT, MIN_SESSIONS_SENT
from .state import State, metadata_stamp, metadata_unchanged, session_signature

MAX_SESSIONS_PER_PUSH = 5_000  # newest first; a round sends them in well under its time
MAX_MARKERS_SENT = 10_000  # removal markers this machine keeps on the remote, the newest


class Outgoing:
    """The changes one push carries, and what to remember once it lands."""

    __slots__ = (
        "sessions",
        "others",
        "signatures",
        "removals",
        "active",
        "skipped",
        "dropped",
        "later",
        "kept",
        "pruned",
    )

    def __init__(self) -> None:
        self.sessions: dict[str, list[tuple[str, bytes | None]]] = {}  # each session's files
        self.others: list[tuple[str, bytes | None]] = []  # removals, this machine's active record
        self.signatures: dict[str, str] = {}
        self.removals: list[str] = []
        self.active: list[str] | None = None
        self.skipped: list[str] = []
        self.dropped: list[str] = []  # this machine's oldest, taken off the remote to keep it within the bound
        self.later = 0  # sessions within the bound left for a later push
        self.kept = 0  # this machine's sessions over the bound: kept here only
        self.pruned: list[str] = []  # this machine's oldest removal markers, taken off the remote

    @property
    def changes(self) -> list[tuple[str, bytes | None]]:
        sent = [change for files in self.sessions.values() for change in files]
        dropped: list[tuple[str, bytes | None]] = []
        for session_id in self.dropped:  # off the remote's tree, with no removal marker
            dropped += [(f"sessions/{session_id}", None), (f"handoff/handoff-{session_id}.md", None)]
        return sent + dropped + self.others

    def drop_settled(self, state: State, imported: list[str], theirs: list[str]) -> None:
        """Leave out sessions an import has just brought in (another machine went on in them) or found in
        conflict: neither sent, nor taken off the remote; nor is one the remote holds from another host."""
        settled = state.conflicts.keys() | set(imported)
        for session_id in [i for i in self.sessions if i in settled]:
            del self.sessions[session_id]
            del self.signatures[session_id]
        self.dropped = [i for i in self.dropped if i not in settled and i not in theirs]


def outgoing(resolver: PathResolver, state: State, host: str, folders: list[str] | None = None) -> Outgoing:
    """This machine's finished sessions not yet pushed, its removals, and its active sessions if they changed.

    ``folders``: the names under ``sessions/``, when the caller has listed them already.
    """
    out = Outgoing()
    touched = set(names_in(os.path.join(resolver.sync_dir, "touched")))
    wanted: list[tuple[int, str, Meta, str]] = []  # (when its metadata was written, id, metadata, signature)
    for name in session_folders(resolver) if folders is None else folders:
        if name in state.conflicts or not is_session_id(name):
            continue  # in conflict, or a board a cleanup set aside
        settled = name in state.foreign or name in state.removed
        if settled and (name not in touched or metadata_unchanged(resolver, name, state.pushed.get(name))):
            continue  # another machine's (or removed), as it came: not worked on here
        signature = session_signature(resolver, name)
        if state.pushed.get(name) == signature and name not in state.resend:
            continue  # as the remote has it: most folders of a synced project
        meta = read_meta_or_none(resolver.meta_path(name))
        if meta is not None and (meta.get("host", host) != host or arrived_by_sync(meta)):
            state.pushed[name] = metadata_stamp(resolver, name)  # another machine's, not resumed here
            continue
        if meta is None or meta.get("status") not in FINISHED:
            continue  # another machine's session resumed here is this machine's now (session.start)
        wanted.append((_written(signature), name, meta, signature))
    for _, name, meta, signature in _within_bound(resolver, state, host, wanted, out):
        _add_session(resolver, meta, host, out)
        out.signatures[name] = signature
    for session_id in _removal_markers(resolver):
        out.removals.append(session_id)
        out.others += [
            (f"removed/{session_id}", b""),
            (f"sessions/{session_id}", None),
            (f"handoff/handoff-{session_id}.md", None),
        ]
    # A marker keeps machines from importing a removed session again and tells them of the removal;
    # kept for ever, cleanups would fill the files every machine may read. This machine keeps its newest.
    older = [i for i in state.markers if i not in out.removals]  # one removed again is added anew
    out.pruned = older[: max(len(older) + len(out.removals) - MAX_MARKERS_SENT, 0)]
    out.others += [(f"removed/{session_id}", None) for session_id in out.pruned]
    active = sorted(active_session_ids(resolver))
    if active != state.active:
        out.active = active
        out.others.append((f"active/{safe_segment(host)}.json", _active_file(resolver, active, host)))
    return out


def _within_bound(
    resolver: PathResolver, state: State, host: str, wanted: list[tuple[int, str, Meta, str]], out: Outgoing
) -> list[tuple[int, str, Meta, str]]:
    """What of ``wanted`` this push sends, newest first: the remote holds at most ``MAX_SESSIONS_SENT`` sessions.

    Every machine reads the remote's tree whole at times, and refuses what is over its bound:
    a machine that sent all of 20 000 sessions would keep every other one out. So this
    machine keeps on the remote its newest sessions (by when their metadata was written), as
    many as the bound leaves beside those imported from others (and ``MIN_SESSIONS_SENT``
    whatever they hold). Its oldest there go from the remote's tree (not from any machine: no
    removal) to make room, and the rest stay here only (``sync status`` counts them). One push
    sends ``MAX_SESSIONS_PER_PUSH`` of them, so a round stays short; the next round sends more.
    """
    room = max(MAX_SESSIONS_SENT - len(state.foreign), MIN_SESSIONS_SENT)
    sending = {name for _, name, _, _ in wanted}
    there = [  # this machine's sessions the remote holds as sent
        (_written(signature), name)
        for name, signature in state.pushed.items()
        if name not in sending and name not in state.foreign and name not in state.dropped and name not in state.resend
    ]
    if len(there) + len(wanted) <= room:  # most rounds
        chosen = sorted(wanted, reverse=True)
    else:
        ranked = sorted([(when, name) for when, name, _, _ in wanted] + there, reverse=True)
        keep = {name for _, name in ranked[:room]}
        chosen = sorted((w for w in wanted if w[1] in keep), reverse=True)
        out.kept = len(wanted) - len(chosen)
        out.dropped = [name for _, name in ranked[room:] if name not in sending and _ours(resolver, name, host)]
    out.later = max(len(chosen) - MAX_SESSIONS_PER_PUSH, 0)
    return chosen[:MAX_SESSIONS_PER_PUSH]


def _written(signature: str) -> int:
    """When a session's ``_meta.json`` was written, from its signature (nanoseconds; 0 if it does not say)."""
    stamp = signature.split(";")[0].rsplit(":", 1)[-1]
    return int(stamp) if stamp.isdigit() else 0


def _ours(resolver: PathResolver, session_id: str, host: str) -> bool:
    """Whether a session sent from here is still this machine's (never another's, whatever the state says)."""
    meta = read_meta_or_none(resolver.meta_path(session_id))
    return meta is not None and meta.get("host") == host and not arrived_by_sync(meta)


def _add_session(resolver: PathResolver, meta: Meta, host: str, out: Outgoing) -> None:
    session_id = meta["session_id"]
    files = out.sessions[session_id] = []
    sent: Meta = {k: (redact(v) if isinstance(v, str) else v) for k, v in meta.items()}  # type: ignore[assignment]
    sent.pop("transcript_path", None)  # a path on this machine, of no use elsewhere
    sent.pop("via", None)  # each machine marks what it takes in
    sent["host"] = host
    files.append((f"sessions/{session_id}/{META_FILE}", (json.dumps(sent, indent=2) + "\n").encode()))
    for kind in BOARD_FILES:
        path = resolver.board_file(session_id, kind)
        data = read_bounded(path, MAX_FILE_BYTES + 1)
        if data is None:
            continue
        if len(data) > MAX_FILE_BYTES:
            out.skipped.append(
                f"{session_id}/{BOARD_FILES[kind]}: over {MAX_FILE_BYTES // (1024 * 1024)} MiB, kept here"
            )
            continue
        text = redact(data.decode("utf-8", "surrogateescape"))
        files.append((f"sessions/{session_id}/{BOARD_FILES[kind]}", text.encode("utf-8", "surrogateescape")))
    written = read_bounded(resolver.handoff_path(session_id), handoff.MAX_HANDOFF_READ)
    if written is not None:  # redacted again: an older plugin or a person may have written it
        text = redact(written.decode("utf-8", "surrogateescape"))
        files.append((f"handoff/handoff-{session_id}.md", text.encode("utf-8", "surrogateescape")))
    # A removal the remote holds for a session this machine sends was never a cleanup's (those
    # it takes, and sends no more): the session goes out, and the marker that would hide it goes.
    files.append((f"removed/{session_id}", None))


def _removal_markers(resolver: PathResolver) -> list[str]:
    try:
        return sorted(n for n in os.listdir(resolver.sync_removed_dir) if is_session_id(n))
    except FileNotFoundError:
        return []


def _active_file(resolver: PathResolver, active: list[str], host: str) -> bytes:
    sessions = []
    for session_id in active[:MAX_ACTIVE_RECORDS]:
        meta = read_meta_or_none(resolver.meta_path(session_id)) or {}
        sessions.append({"session_id": session_id, "started": meta.get("started")})
    return (json.dumps({"host": host, "updated": now_iso(), "sessions": sessions}, indent=1) + "\n").encode()


def record_removal(resolver: PathResolver, session_id: str) -> None:
    """Cleanup removed ``session_id`` here: the next push removes it from the remote too (if this project syncs)."""
    if not os.path.isdir(resolver.sync_dir) or not is_session_id(session_id):
        return
    refuse_links(resolver.root, resolver.sync_removed_dir)
    make_dirs(resolver.sync_removed_dir)
    create_exclusive(resolver.sync_removed_marker(session_id), "")
