"""What this machine sends to its own ref: its sessions, redacted, its newest to the bound; its active record.

Its ref holds the sessions this machine wrote and nothing else: those in ``sessions/`` (a
copy of another machine's session it went on from included, which says so in
``continues``), never one that came by sync. A session gone from ``sessions/`` (a cleanup,
a hand) leaves the ref in the next push: no removal marker, and no other machine's ref is
touched. Nothing sent names a path of this machine (ADR 30).
"""

from __future__ import annotations

import json
import os
import re

from .. import handoff
from ..clock import now_iso
from ..fsutil import read_bounded
from ..ids import is_session_id
from ..meta import FINISHED, Meta, arrived_by_sync, read_meta_or_none
from ..paths import BOARD_FILES, META_FILE, PathResolver
from ..redact import redact
from ..registry import active_session_ids, session_folders
from .inbound import MAX_ACTIVE_RECORDS, MAX_FILE_BYTES
from .state import State, session_signature

MAX_SESSIONS_PER_PUSH = 5_000  # newest first; a round sends them in well under its time
# Fields of _meta.json that name this machine's paths or processes: of no use elsewhere, and
# nothing of this machine's file system leaves it.
LOCAL_FIELDS = ("cwd", "transcript_path", "claude_dir", "claude_pid", "claude_started", "via")


class Outgoing:
    """The changes one push carries to this machine's ref, and what to remember once it lands."""

    __slots__ = ("changes", "signatures", "gone", "active", "skipped", "later", "kept")

    def __init__(self) -> None:
        self.changes: list[tuple[str, bytes | None]] = []  # (path, content; None deletes)
        self.signatures: dict[str, str] = {}  # the sessions sent, as they were
        self.gone: list[str] = []  # sessions the ref holds no more: removed here, or past the bound
        self.active: list[str] | None = None
        self.skipped: list[str] = []
        self.later = 0  # sessions within the bound left for a later push
        self.kept = 0  # this machine's oldest sessions, past the bound: kept here only


def outgoing(
    resolver: PathResolver, state: State, host: str, limit: int, folders: list[str] | None = None, home: str = ""
) -> Outgoing:
    """What this machine's ref lacks: its finished sessions changed since sent, those it holds no more, and its
    active sessions if they changed. ``limit``: the sessions the ref holds, the newest.

    ``folders``: the names under ``sessions/``, when the caller has listed them already; ``home``: this
    user's home, written ``~`` in what is sent.
    """
    out = Outgoing()
    present = set(session_folders(resolver) if folders is None else folders)
    ranked: list[tuple[int, str, str]] = []  # (when its metadata was written, id, signature)
    for name in present:
        if not is_session_id(name):
            continue  # a board a cleanup set aside
        signature = session_signature(resolver, name)
        ranked.append((_written(signature), name, signature))
    ranked.sort(reverse=True)
    within: set[str] = set()
    wanted: list[tuple[str, Meta, str]] = []
    for _, name, signature in ranked:
        if len(within) == limit:
            out.kept += 1
            continue
        if state.pushed.get(name) == signature:
            within.add(name)  # as the ref has it: most folders of a synced project
            continue
        meta = read_meta_or_none(resolver.meta_path(name))
        if meta is None or arrived_by_sync(meta):
            continue  # unreadable, or taken in by a version before ADR 30: not this machine's to send
        if meta.get("status") not in FINISHED:
            if name in state.pushed:
                within.add(name)  # resumed here: the ref keeps it as it was until it ends again
            continue
        within.add(name)
        wanted.append((name, meta, signature))
    out.gone = sorted(i for i in state.pushed if i not in within)
    for session_id in out.gone:
        out.changes += [(f"sessions/{session_id}", None), (f"handoff/handoff-{session_id}.md", None)]
    out.later = max(len(wanted) - MAX_SESSIONS_PER_PUSH, 0)
    for name, meta, signature in wanted[:MAX_SESSIONS_PER_PUSH]:
        out.changes += _session_files(resolver, meta, host, out, home)
        out.signatures[name] = signature
    active = sorted(active_session_ids(resolver))
    if active != state.active:
        out.active = active
        out.changes.append(("active.json", _active_file(resolver, active, host)))
    return out


def _written(signature: str) -> int:
    """When a session's ``_meta.json`` was written, from its signature (nanoseconds; 0 if it does not say)."""
    stamp = signature.split(";")[0].rsplit(":", 1)[-1]
    return int(stamp) if stamp.isdigit() else 0


def sent_meta(meta: Meta, host: str, home: str = "") -> bytes:
    """A session's ``_meta.json`` as it leaves this machine: redacted, with no path or process of this machine."""
    cwd = meta.get("cwd")
    sent = {
        k: (unrooted(redact(v), cwd, home) if isinstance(v, str) else v)
        for k, v in meta.items()
        if k not in LOCAL_FIELDS
    }
    sent["host"] = host
    return (json.dumps(sent, indent=2) + "\n").encode()


def unrooted(text: str, cwd: object, home: str) -> str:
    """``text`` without this machine's paths: those under the session's working directory relative to it (the
    directory itself ``.``), those under the home directory from ``~``."""
    for base, name in ((cwd, "."), (home, "~")):
        if isinstance(base, str) and os.path.isabs(base) and base.rstrip("/"):
            root = re.escape(base.rstrip("/"))
            text = re.sub(root + r"/(?=[^/\s])", "" if name == "." else "~/", text)
            text = re.sub(root + r"(?![\w./-])", name, text)
    return text


def _session_files(
    resolver: PathResolver, meta: Meta, host: str, out: Outgoing, home: str
) -> list[tuple[str, bytes | None]]:
    session_id = meta["session_id"]
    files: list[tuple[str, bytes | None]] = [(f"sessions/{session_id}/{META_FILE}", sent_meta(meta, host, home))]
    for kind in BOARD_FILES:
        path = resolver.board_file(session_id, kind)
        data = read_bounded(path, MAX_FILE_BYTES + 1)
        if data is None:
            files.append((f"sessions/{session_id}/{BOARD_FILES[kind]}", None))
            continue
        if len(data) > MAX_FILE_BYTES:
            out.skipped.append(
                f"{session_id}/{BOARD_FILES[kind]}: over {MAX_FILE_BYTES // (1024 * 1024)} MiB, kept here"
            )
            files.append((f"sessions/{session_id}/{BOARD_FILES[kind]}", None))
            continue
        text = unrooted(redact(data.decode("utf-8", "surrogateescape")), meta.get("cwd"), home)
        files.append((f"sessions/{session_id}/{BOARD_FILES[kind]}", text.encode("utf-8", "surrogateescape")))
    written = read_bounded(resolver.handoff_path(session_id), handoff.MAX_HANDOFF_READ)
    if written is not None:  # redacted again: an older plugin or a person may have written it
        text = unrooted(redact(written.decode("utf-8", "surrogateescape")), meta.get("cwd"), home)
        files.append((f"handoff/handoff-{session_id}.md", text.encode("utf-8", "surrogateescape")))
    return files


def _active_file(resolver: PathResolver, active: list[str], host: str) -> bytes:
    sessions = []
    for session_id in active[:MAX_ACTIVE_RECORDS]:
        meta = read_meta_or_none(resolver.meta_path(session_id)) or {}
        sessions.append({"session_id": session_id, "started": meta.get("started")})
    return (json.dumps({"host": host, "updated": now_iso(), "sessions": sessions}, indent=1) + "\n").encode()
