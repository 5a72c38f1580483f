"""What this machine knows of the remote: ``_sync/state.json``, and ``_sync/status.json`` for ``sync status``."""

from __future__ import annotations

import json
import os

from ..clock import now_iso
from ..errors import BlackboardError
from ..fsutil import atomic_write, json_object, read_bounded, read_json_object
from ..paths import PathResolver
from ..redact import redact_remote
from .inbound import MAX_REFUSALS, SESSION_FILES

MAX_STATE_BYTES = 16 * 1024 * 1024
MAX_RETRIES = 1_000  # refused sessions of one machine looked at again every round


def read_json(path: str) -> dict:
    """A state file of ours as a dict; ``{}`` when it is missing, damaged or over 16 MiB."""
    return read_json_object(path, 16 * 1024 * 1024)


class StatePaused(BlackboardError):
    """``state.json`` cannot be read whole: sync waits rather than send everything again."""


class State:
    """What this machine knows of the remote: ``_sync/state.json``, at most ``MAX_STATE_BYTES`` (ADR 30).

    ``mine``: the commit this machine last pushed to its own ref (the lease of its next push);
    ``pushing``: the commit it was pushing when it last wrote this file (a round killed after
    its push landed left the remote at it: that is this machine's own, not someone else's
    change); ``pushed``: the signature of each session its ref holds as sent; ``known``: the
    commit of each other machine's ref imported last; ``retry``: sessions of each machine
    refused, looked at again every round; ``legacy``: the old shared ref's commit, once read.
    """

    def __init__(self, data: dict) -> None:
        self.remote = _str(data, "remote")
        self.mine = _str(data, "mine")
        self.pushing = _str(data, "pushing")
        self.legacy = _str(data, "legacy")
        self.pushed: dict[str, str] = {k: v for k, v in _dict(data, "pushed").items() if isinstance(v, str)}
        self.known: dict[str, str] = {k: v for k, v in _dict(data, "known").items() if isinstance(v, str)}
        self.retry: dict[str, list[str]] = {
            k: [i for i in v if isinstance(i, str)][:MAX_RETRIES]
            for k, v in _dict(data, "retry").items()
            if isinstance(v, list)
        }
        self.refused: list[str] = [r for r in _list(data, "refused") if isinstance(r, str)][-MAX_REFUSALS:]
        self.active: list[str] = [i for i in _list(data, "active_pushed") if isinstance(i, str)]
        self.overwritten = _str(data, "overwritten")  # when this machine's ref was last found changed by another
        held = data.get("held")
        self.held = held if type(held) is int and held >= 0 else 0  # what copies hold here, as last measured
        looked = data.get("looked")  # the copies' folders as the last round left them (``round._copies_changed``)
        self.looked = looked if type(looked) is int else None
        measured = data.get("measured")  # when ``held`` was last measured whole, by this machine's clock
        self.measured = float(measured) if isinstance(measured, (int, float)) and measured == measured else None

    @classmethod
    def load(cls, resolver: PathResolver, remote: str | None = None) -> State:
        """The state on disk, of ``remote`` (the configured one unless given); a fresh one only when there is none
        (StatePaused when it cannot be read whole)."""
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
        if not loaded and data.strip() != b"{}" or _misshapen(loaded):
            raise StatePaused(f"{path} is damaged; {fix}")
        if "imported_commit" in loaded:  # written before ADR 30: nothing of it describes the refs of now
            loaded = {"remote": loaded.get("remote")}
        state = cls(loaded)
        state.follow(_configured_remote(resolver) if remote is None else remote)
        return state

    def follow(self, remote: str | None) -> None:
        """Make this the state of ``remote``: another remote holds nothing this machine sent or read.

        The same remote written another way (``file://``, a trailing slash) is no other.
        """
        if remote is None or self.remote is not None and _same_remote(self.remote, remote):
            return
        if self.remote is not None:
            self.mine = self.pushing = self.legacy = self.overwritten = None
            self.pushed, self.known, self.retry, self.refused, self.active = {}, {}, {}, [], []
        self.remote = remote

    def save(self, resolver: PathResolver) -> None:
        data = {
            "remote": self.remote,
            "mine": self.mine,
            "pushing": self.pushing,
            "legacy": self.legacy,
            "pushed": self.pushed,
            "known": self.known,
            "retry": self.retry,
            "refused": self.refused,
            "active_pushed": self.active,
            "overwritten": self.overwritten,
            "held": self.held,
            "measured": self.measured,
            "looked": self.looked,
        }
        atomic_write(resolver.sync_file("state.json"), json.dumps(data) + "\n")  # no indent: the C encoder

    def refuse(self, line: str) -> None:
        """Remember a refusal for ``sync status``: the last ``MAX_REFUSALS`` kept, so each call is short."""
        if line in self.refused:
            self.refused.remove(line)
        self.refused.append(line)
        del self.refused[:-MAX_REFUSALS]


# What each field of state.json holds: a field of another shape (a hand edit, a bug) would be read
# as empty, which sends everything again: damage, and sync waits.
SHAPES: dict[str, tuple[type | tuple[type, ...], type]] = {
    "remote": ((str, type(None)), object),
    "mine": ((str, type(None)), object),
    "pushing": ((str, type(None)), object),
    "legacy": ((str, type(None)), object),
    "pushed": (dict, str),
    "known": (dict, str),
    "retry": (dict, list),
    "refused": (list, str),
    "active_pushed": (list, str),
    "overwritten": ((str, type(None)), object),
    "held": (int, object),
    "measured": ((int, float, type(None)), object),
    "looked": ((int, type(None)), object),
}


def _misshapen(data: dict) -> bool:
    """Whether a known field holds another kind of value, or a collection holds what it should not."""
    for key, (shape, item) in SHAPES.items():
        if key not in data:
            continue
        value = data[key]
        if not isinstance(value, shape):
            return True
        items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
        if any(not isinstance(v, item) for v in items):
            return True
    return False


def _str(data: dict, key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


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


def _stamp(path: str) -> str:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return ""
    return f"{os.path.basename(path)}:{info.st_size}:{info.st_mtime_ns}"
