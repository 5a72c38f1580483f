"""What this machine knows of the remote: ``_sync/state.json``, and ``_sync/status.json`` for ``sync status``."""

from __future__ import annotations

import json
import os

from ..clock import now_iso
from ..errors import BlackboardError
from ..fsutil import atomic_write, json_object, read_bounded, read_json_object
from ..paths import META_FILE, PathResolver
from ..redact import redact_remote
from .inbound import MAX_FILE_BYTES, MAX_REFUSALS, SESSION_FILES

MAX_STATE_BYTES = 16 * 1024 * 1024
MAX_REMOVED = 100_000  # about 4 MiB of state.json


def read_json(path: str) -> dict:
    """A state file of ours as a dict; ``{}`` when it is missing, damaged or over 16 MiB."""
    return read_json_object(path, 16 * 1024 * 1024)


class StatePaused(BlackboardError):
    """``state.json`` cannot be read whole: sync waits rather than send everything again and forget removals."""


class State:
    """What this machine knows of the remote: ``_sync/state.json``, at most ``MAX_STATE_BYTES``.

    It stays bounded: sessions gone from this machine are forgotten (the remote's own
    ``removed/`` markers keep a removal), and only the newest ``MAX_REMOVED`` removals are kept.
    """

    def __init__(self, data: dict) -> None:
        self.remote = data.get("remote") if isinstance(data.get("remote"), str) else None  # what the rest is of
        self.imported = data.get("imported_commit") if isinstance(data.get("imported_commit"), str) else None
        self.pushed: dict[str, str] = {k: v for k, v in _dict(data, "pushed").items() if isinstance(v, str)}
        # sessions imported from other machines, with the bytes each import wrote here (MAX_HELD_BYTES)
        self.foreign: dict[str, int] = {k: v for k, v in _dict(data, "foreign").items() if isinstance(v, int)}
        # sessions that left this machine (a cleanup, a hand), with what they held: the remote may hold them
        # still, until a removal lands or its tree drops them
        self.left: dict[str, int] = {k: v for k, v in _dict(data, "left").items() if isinstance(v, int)}
        self.removed: dict[str, None] = dict.fromkeys(i for i in _list(data, "removed") if isinstance(i, str))
        # this machine's sessions, sent once, that it took off the remote to keep it within the bound (outbound)
        self.dropped: dict[str, None] = dict.fromkeys(i for i in _list(data, "dropped") if isinstance(i, str))
        # this machine's sessions sent to an earlier remote, to be sent to this one (``follow``)
        self.resend: dict[str, None] = dict.fromkeys(i for i in _list(data, "resend") if isinstance(i, str))
        # the removal markers this machine put on the remote, oldest first: it keeps the newest there (outbound)
        self.markers: dict[str, None] = dict.fromkeys(i for i in _list(data, "markers") if isinstance(i, str))
        self.conflicts: dict[str, str] = {k: v for k, v in _dict(data, "conflicts").items() if isinstance(v, str)}
        self.refused: list[str] = [r for r in _list(data, "refused") if isinstance(r, str)][-MAX_REFUSALS:]
        self.active: list[str] = [i for i in _list(data, "active_pushed") if isinstance(i, str)]

    @classmethod
    def load(cls, resolver: PathResolver, remote: str | None = None) -> State:
        """The state on disk, of ``remote`` (the configured one unless given: the one a round talks to);
        a fresh one only when there is none (StatePaused when it cannot be read whole)."""
        path = resolver.sync_file("state.json")
        fix = f"sync is paused; move {path} aside to start afresh (every session is then sent again)"
        try:
            data = read_bounded(path, MAX_STATE_BYTES + 1)
        except OSError as exc:
            raise StatePaused(f"cannot read {path} ({exc.strerror}); {fix}") from None
        if data is None:
            data = b"{}"
        if len(data) > MAX_STATE_BYTES:
            raise StatePaused(f"{path} is over {MAX_STATE_BYTES // (1024 * 1024)} MiB; {fix}")
        loaded = json_object(data)
        foreign = loaded.get("foreign")
        if isinstance(foreign, list) and all(isinstance(i, str) for i in foreign):  # before sizes were kept
            loaded["foreign"] = dict.fromkeys(foreign, 0)
        if not loaded and data.strip() != b"{}" or _misshapen(loaded):
            raise StatePaused(f"{path} is damaged; {fix}")
        state = cls(loaded)
        state.follow(_configured_remote(resolver) if remote is None else remote)
        return state

    def follow(self, remote: str | None) -> None:
        """Make this the state of ``remote`` (the configured one): what it held of another remote does not count.

        Another remote (``sync enable --remote NEW``) holds none of what was sent to or read from the
        old one: this machine's sessions are sent again (``resend``), its tree is read whole, and its
        conflicts, refusals and active records start afresh. What this machine holds (sessions
        imported, their sizes as they came, removals done here, what each session was when last
        synced, by which a copy another machine went on in is told from a conflict) stays. The
        same remote written another way (``file://``, a trailing slash) is no other. A state from
        before remotes were kept is taken to be the configured remote's.
        """
        if remote is None or self.remote is not None and _same_remote(self.remote, remote):
            return
        if self.remote is not None:
            self.imported = None
            self.resend.update(dict.fromkeys(i for i in self.pushed if i not in self.foreign))
            self.left, self.conflicts, self.refused, self.active, self.dropped = {}, {}, [], [], {}
            self.markers = {}
        self.remote = remote

    def forget_missing(self, folders: list[str]) -> None:
        """Forget sessions gone from this machine (``folders``: those under ``sessions/``), keeping what they
        held in ``left``; keep the newest ``MAX_REMOVED`` removals and sessions that left."""
        present = set(folders)
        self.left = {i: size for i, size in self.left.items() if i not in present}
        for session_id in [i for i in self.pushed if i not in present]:
            self.left[session_id] = self.foreign.get(session_id) or signature_bytes(self.pushed[session_id])
        for known in (self.pushed, self.conflicts, self.dropped, self.resend):
            for session_id in [i for i in known if i not in present]:
                del known[session_id]
        self.foreign = {i: size for i, size in self.foreign.items() if i in present}
        for session_id in list(self.removed)[: max(len(self.removed) - MAX_REMOVED, 0)]:
            del self.removed[session_id]
        for session_id in list(self.left)[: max(len(self.left) - MAX_REMOVED, 0)]:
            del self.left[session_id]

    def save(self, resolver: PathResolver) -> None:
        data = {
            "remote": self.remote,
            "imported_commit": self.imported,
            "pushed": self.pushed,
            "foreign": self.foreign,
            "left": self.left,
            "removed": list(self.removed),  # oldest first
            "dropped": list(self.dropped),
            "resend": list(self.resend),
            "markers": list(self.markers),
            "conflicts": self.conflicts,
            "refused": self.refused,
            "active_pushed": self.active,
        }
        atomic_write(resolver.sync_file("state.json"), json.dumps(data) + "\n")  # no indent: the C encoder

    def refuse(self, line: str) -> None:
        """Remember a refusal for ``sync status``: the last ``MAX_REFUSALS`` kept, so each call is short."""
        if line not in self.refused:
            self.refused.append(line)
            del self.refused[:-MAX_REFUSALS]


# What each field of state.json holds: a field of another shape (a hand edit, a bug) would be read
# as empty, which sends everything again and forgets removals: damage, and sync waits.
MAX_SIZE = 2**53  # of one imported session, in state.json: beyond it, a number JSON readers round
# Each field: (its type, the type of the items or values it holds).
SHAPES: dict[str, tuple[type | tuple[type, ...], type]] = {
    "remote": ((str, type(None)), object),
    "imported_commit": ((str, type(None)), object),
    "pushed": (dict, str),
    "foreign": (dict, int),
    "left": (dict, int),
    "removed": (list, str),
    "dropped": (list, str),
    "resend": (list, str),
    "markers": (list, str),
    "conflicts": (dict, str),
    "refused": (list, str),
    "active_pushed": (list, str),
}


def _misshapen(data: dict) -> bool:
    """Whether a known field holds another kind of value, or a collection holds what it should not."""
    for key, (shape, item) in SHAPES.items():
        value = data.get(key)
        if key not in data:
            continue
        if not isinstance(value, shape):
            return True
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        if any(not isinstance(v, item) for v in items):
            return True
        if key in ("foreign", "left") and any(type(v) is not int or not 0 <= v < MAX_SIZE for v in items):
            return True  # a negative size would lift the bound on what imports hold; True is no size
    return False


def _dict(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _list(data: dict, key: str) -> list:
    value = data.get(key)
    return value if isinstance(value, list) else []


def _same_remote(one: str, other: str) -> bool:
    """Whether two spellings name one remote: a path with or without ``file://`` and trailing slashes."""

    def plain(url: str) -> str:
        return (url[len("file://") :] if url.startswith("file://") else url).rstrip("/") or "/"

    return plain(one) == plain(other)


def _configured_remote(resolver: PathResolver) -> str | None:
    """The remote ``sync enable`` last named (None when sync is off or its config is damaged)."""
    remote = read_json(resolver.sync_file("config.json")).get("remote")
    return remote if isinstance(remote, str) else None


def note_status(resolver: PathResolver, step: str, ok: bool, detail: str) -> None:
    """Record the outcome of a fetch or push in ``_sync/status.json``; never raises."""
    try:
        status = read_json(resolver.sync_file("status.json"))
        status[step] = {"at": now_iso(), "ok": ok, "detail": redact_remote(detail)}
        atomic_write(resolver.sync_file("status.json"), json.dumps(status, indent=1) + "\n")
    except Exception:  # noqa: BLE001 - a status line must never cost a session anything
        pass


def session_signature(resolver: PathResolver, session_id: str) -> str:
    """The sizes and times of a session's files and its handoff: it changes whenever one of them does.

    The handoff counts: a round that ran between the end's metadata and its handoff must
    not keep the next round from sending the handoff.
    """
    directory = resolver.get_session_blackboard_dir(session_id)
    paths = [os.path.join(directory, name) for name in SESSION_FILES] + [resolver.handoff_path(session_id)]
    return ";".join(filter(None, map(_stamp, paths)))  # _meta.json's first: ``metadata_unchanged`` reads it


def signature_bytes(signature: str) -> int:
    """The bytes of the files a ``session_signature`` (or a ``metadata_stamp``) names, as they were then;
    each at most ``MAX_FILE_BYTES``, over which a file is not sent (a hand-edited state lifts no bound)."""
    sizes = (part.split(":")[-2] for part in signature.split(";") if part.count(":") >= 2)
    return sum(min(int(size), MAX_FILE_BYTES) for size in sizes if size.isdigit())


def metadata_stamp(resolver: PathResolver, session_id: str) -> str:
    """The first part of a ``session_signature``: what is kept of a session another machine sent (short).

    ``session_id`` is a folder name already checked: thousands are asked in a round.
    """
    return _stamp(os.path.join(resolver.sessions_dir, session_id, META_FILE))


def metadata_unchanged(resolver: PathResolver, session_id: str, recorded: str | None) -> bool:
    """Whether a session's ``_meta.json`` is as ``recorded`` (a ``session_signature``) has it: one ``lstat``.

    Work on a session another machine sent rewrites its metadata (resuming makes this machine
    its host; an entry records its activity; an end its status), so this is enough to tell
    that the thousands of sessions a project imported are as they came.
    """
    return recorded is not None and recorded.split(";")[0] == metadata_stamp(resolver, session_id)


def _stamp(path: str) -> str:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ""
    return f"{os.path.basename(path)}:{info.st_size}:{info.st_mtime_ns}"
