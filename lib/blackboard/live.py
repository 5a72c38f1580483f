"""The live sessions of one project on this machine, and what each is doing (docs/adr/0029-live-sessions.md).

A session is live while it has not ended and its Claude Code process (``CLAUDE_PID``, on
this host) still runs: the same process, since the kernel's start time is kept beside the
pid, so a reused pid does not count, nor a pid of 1 or another user's. Where the start time
cannot be read (no ``/proc``), or the session recorded no pid, it is live while its last hook
is recent (``BLACKBOARD_ABANDON_AFTER``, the limit after which recovery abandons it).

What a session is doing is in its ``_live.jsonl``: its hooks append, without a lock, the
request typed (redacted and shortened, as the digest keeps it), each file an edit tool wrote
(its checkout and its path there) and the HEAD its checkout was at. Other sessions read only
the tail of that small file, so asking costs the same whatever a session did before.
"""

from __future__ import annotations

import json
import os
import time

from .fsutil import append_line, read_tail
from .gitinfo import checkout_around
from .meta import ACTIVE, Meta, read_meta_or_none
from .paths import PathResolver
from .registry import active_session_ids, last_active
from .settings import Settings

TAIL_BYTES = 32 * 1024  # about 200 records: a live session's recent requests, edits and HEADs
MAX_REQUEST_CHARS = 300
MAX_FILES_SHOWN = 8


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, in the kernel's clock ticks since boot (``/proc/{pid}/stat``); None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read(4096)
    except (OSError, ValueError):
        return None
    fields = data.rpartition(b")")[2].split()  # the command name before it may hold spaces and parentheses
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else None


def same_process(pid: object, started: object) -> bool | None:
    """Whether ``pid`` is still the process that started at ``started`` (``process_start``), owned by this user.

    None when this system cannot tell a reused pid from the first (no ``/proc``, or no start
    time was recorded): the caller then asks how recent the session's last hook is.
    """
    if type(pid) is not int or pid <= 1:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError, OverflowError):  # gone, another user's, or no pid at all
        return False
    if not isinstance(started, str) or not os.path.isdir("/proc/self"):
        return None
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid():  # root may signal anyone's: the owner says
            return False
    except OSError:
        return False
    return process_start(pid) == started


class Liveness:
    """Which sessions of a project are live: ``Liveness(resolver, settings).others(exclude="abc")``."""

    def __init__(self, resolver: PathResolver, settings: Settings) -> None:
        self.resolver = resolver
        self.host = settings.host
        self.stale_after = settings.abandon_after

    def is_live(self, meta: Meta | None) -> bool:
        """Whether the session ``meta`` describes is live (see the module's docstring)."""
        if not meta or meta.get("status") != ACTIVE:
            return False
        pid = meta.get("claude_pid")
        if pid is not None:
            if meta.get("host") != self.host:
                return False  # another machine's process, which means nothing here
            same = same_process(pid, meta.get("claude_started"))
            if same is not None:
                return same
        return time.time() - last_active(self.resolver, meta["session_id"]) <= self.stale_after

    def session_is_live(self, session_id: str) -> bool:
        return self.is_live(read_meta_or_none(self.resolver.meta_path(session_id)))

    def others(self, exclude: str) -> list[Meta]:
        """The project's live sessions but ``exclude``, from the active markers: their metadata, newest start last."""
        found = []
        for session_id in active_session_ids(self.resolver):
            if session_id == exclude:
                continue
            meta = read_meta_or_none(self.resolver.meta_path(session_id))
            if meta is not None and self.is_live(meta):
                found.append(meta)
        return sorted(found, key=lambda m: str(m.get("started") or ""))


# --- what a session is doing: its _live.jsonl ----------------------------------------------------


def record_request(path: str, text: str) -> None:
    """UserPromptSubmit: the request, already redacted and shortened (``digest.shorten``)."""
    _append(path, {"kind": "ask", "text": text})


def record_edit(path: str, top: str, relative: str) -> None:
    """PostToolUse of an edit tool: the checkout ``top`` and the file's path there."""
    _append(path, {"kind": "edit", "top": top, "path": relative})


def record_head(path: str, top: str, head: tuple[str, str]) -> None:
    """The HEAD the session saw its checkout at: ``(branch or "", sha or "")``."""
    _append(path, {"kind": "head", "top": top, "branch": head[0], "sha": head[1]})


def _append(path: str, record: dict[str, object]) -> None:
    record["at"] = round(time.time(), 3)
    append_line(path, json.dumps(record, ensure_ascii=False))  # one write, no lock: after every turn and edit


def locate(file_path: str) -> tuple[str, str] | None:
    """``(checkout, path there)`` of a file an edit tool names, its links resolved; None outside any checkout.

    The file need not exist yet (Write creates it). A ``.git`` that cannot be read, a NUL or a
    path that is no path gives None: such a file is nobody's to guard.
    """
    if not os.path.isabs(file_path) or "\0" in file_path:
        return None
    real = os.path.realpath(file_path)
    top, readable = checkout_around(os.path.dirname(real))
    if top is None or not readable:
        return None
    relative = os.path.relpath(real, top)
    return None if relative.startswith("..") or relative.startswith(".git" + os.sep) else (top, relative)


class Presence:
    """What a session's ``_live.jsonl`` says lately: its latest request, the files it edited, its last HEAD."""

    __slots__ = ("request", "edits", "head")

    def __init__(self) -> None:
        self.request: str | None = None
        self.edits: dict[tuple[str, str], float] = {}  # (checkout, path) -> when it was last edited, newest first
        self.head: tuple[str, str, str] | None = None  # (checkout, branch, sha)


def read_presence(path: str, since: float) -> Presence:
    """The latest request and HEAD, and the files edited after ``since``, from the file's tail, newest first."""
    found = Presence()
    try:
        tail, _ = read_tail(path, TAIL_BYTES)
    except OSError:
        return found
    for line in reversed(tail.split("\n")):
        record = _record(line)
        if record is None:
            continue
        kind, at = record.get("kind"), record["at"]
        if kind == "edit" and at >= since and _strings(record, "top", "path"):
            found.edits.setdefault((record["top"], record["path"]), at)
        elif kind == "ask" and found.request is None and _strings(record, "text"):
            found.request = record["text"]
        elif kind == "head" and found.head is None and _strings(record, "top", "branch", "sha"):
            found.head = (record["top"], record["branch"], record["sha"])
        if at < since and found.request is not None and found.head is not None:
            break  # older records say nothing more
    return found


def edited_since(path: str, top: str, relative: str, since: float) -> tuple[str, float] | None:
    """When the session of ``path`` (``_live.jsonl``) last edited ``relative`` after ``since``: ``(checkout, time)``.

    The same file in this checkout wins over the same path in another checkout. Only lines
    naming the path are parsed: a session that edited thousands of other files costs a search.
    """
    try:
        tail, _ = read_tail(path, TAIL_BYTES)
    except OSError:
        return None
    needle = json.dumps(relative, ensure_ascii=False)
    if needle not in tail:
        return None
    here: tuple[str, float] | None = None
    elsewhere: tuple[str, float] | None = None
    for line in tail.split("\n"):
        if needle not in line:
            continue
        record = _record(line)
        if record is None or record.get("kind") != "edit" or record.get("path") != relative:
            continue
        where = record.get("top")
        if not isinstance(where, str) or record["at"] < since:
            continue
        found = (where, float(record["at"]))  # lines come oldest first: the last one is the latest
        if where == top:
            here = found
        else:
            elsewhere = found
    return here or elsewhere


def _record(line: str) -> dict | None:
    """A record of ``_live.jsonl``: a JSON object with a time; anything else (a torn line, a hand edit) is None.

    Its other values are checked where they are used.
    """
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or type(record.get("at")) not in (int, float):
        return None
    return record


def _strings(record: dict, *keys: str) -> bool:
    return all(isinstance(record.get(key), str) for key in keys)
