"""The live sessions of one project on this machine, and what each is doing (docs/adr/0029-live-sessions.md).

A session is live while it has not ended and its Claude Code process (``CLAUDE_PID``, on
this host) still runs: the same process, since the kernel's start time is kept beside the
pid, so a reused pid does not count, nor a pid of 1, another user's or a zombie. Where the
start time cannot be read (no ``/proc``), or the session recorded no pid, it is live while
its last hook is recent (``BLACKBOARD_ABANDON_AFTER``). One process runs one conversation:
a session of the viewer's own process is the viewer's past (``/clear``), never another.

What a session is doing is in its ``_live.jsonl``: its hooks append, without a lock, the
request typed (redacted), each file it wrote (its checkout and its path there) and the HEADs
it saw and moved. Every ``FOLD_EVERY`` bytes the appender that crosses the mark folds the log
into ``_live.json`` (each file once, with its latest time), so other sessions read the fold
and the few records after it: every edit in the window counts, at the cost of the files
touched, not of the edits made.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time

from .errors import BlackboardError
from .fsutil import append_line, atomic_write, open_regular, read_bounded
from .gitinfo import checkout_around
from .meta import ACTIVE, Meta, read_meta_or_none
from .paths import PathResolver
from .registry import active_session_ids, last_active
from .settings import Settings

FOLD_EVERY = 16 * 1024  # about 100 records between folds: what a reader parses line by line at most
MAX_LOG_READ = 1 << 20  # of the log past the fold, when folding has failed for long
MAX_STATE_BYTES = 4 << 20  # a fold of MAX_KEPT files of monorepo-length paths is about 2 MiB
KEEP_SECONDS = 7 * 86400  # a fold forgets edits older than any edit window in use
MAX_KEPT = 10_000  # files a fold keeps, the newest: far more than a session touches in a window
MAX_REQUEST_CHARS = 300  # of a request kept here, cut after it was redacted whole
DEAD_STATES = (b"Z", b"X")  # a zombie, or a process being reaped: it runs no more


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/{pid}/stat`` after the command name (state first); None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read(4096)
    except (OSError, ValueError):
        return None
    return data.rpartition(b")")[2].split()  # the command name before it may hold spaces and parentheses


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, in the kernel's clock ticks since boot (``/proc/{pid}/stat``); None elsewhere."""
    fields = _stat_fields(pid)
    return fields[19].decode("ascii", "replace") if fields and len(fields) > 19 else None


def same_process(pid: object, started: object) -> bool | None:
    """Whether ``pid`` is still the process that started at ``started`` (``process_start``), owned by this user
    and not a zombie.

    None when this system cannot tell a reused pid from the first (no ``/proc``, or no start
    time was recorded): the caller then asks how recent the session's last hook is.
    """
    if type(pid) is not int or pid <= 1:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError, OverflowError):  # gone, another user's, or no pid at all
        return False
    if not os.path.isdir("/proc/self"):
        return None
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid():  # root may signal anyone's: the owner says
            return False
    except OSError:
        return False
    fields = _stat_fields(pid)
    if not fields or len(fields) <= 19 or fields[0] in DEAD_STATES:
        return False
    if not isinstance(started, str):
        return None
    return fields[19].decode("ascii", "replace") == started


def own_process(settings: Settings) -> tuple[int, str | None] | None:
    """The Claude Code process this hook or command runs under (``CLAUDE_PID``) and its start; None without one."""
    pid = settings.claude_pid
    if not pid or not pid.isascii() or not pid.isdigit():
        return None
    return int(pid), process_start(int(pid))


def of_process(meta: Meta, process: tuple[int, str | None] | None, host: str) -> bool:
    """Whether the session ``meta`` describes was run by ``process`` (``own_process``) on this host."""
    if process is None or meta.get("claude_pid") != process[0] or meta.get("host") != host:
        return False
    started = meta.get("claude_started")
    return started is None or process[1] is None or started == process[1]


class Liveness:
    """Which sessions of a project are live: ``Liveness(resolver, settings).others(exclude="abc")``."""

    def __init__(self, resolver: PathResolver, settings: Settings) -> None:
        self.resolver = resolver
        self.host = settings.host
        self.stale_after = settings.abandon_after
        self.process = own_process(settings)
        self._metas: dict[str, Meta | None] = {}
        self._running: dict[str, bool | None] = {}

    def meta(self, session_id: str) -> Meta | None:
        """A session's metadata as first read through this ``Liveness``: SessionStart's recovery, the closing of
        its past and its list of the others read each live session's once (issue 37)."""
        if session_id not in self._metas:
            self._metas[session_id] = read_meta_or_none(self.resolver.meta_path(session_id))
        return self._metas[session_id]

    def forget(self, session_id: str) -> None:
        """A session whose metadata changed (ended, abandoned): read it again when asked."""
        self._metas.pop(session_id, None)
        self._running.pop(session_id, None)

    def running(self, meta: Meta) -> bool | None:
        """``same_process`` for the session's recorded process, asked once; None where the system cannot tell."""
        session_id = meta["session_id"]
        if session_id not in self._running:
            self._running[session_id] = same_process(meta.get("claude_pid"), meta.get("claude_started"))
        return self._running[session_id]

    def is_live(self, meta: Meta | None) -> bool:
        """Whether the session ``meta`` describes is live (see the module's docstring); the viewer's past is not."""
        if not meta or meta.get("status") != ACTIVE or of_process(meta, self.process, self.host):
            return False
        pid = meta.get("claude_pid")
        if pid is not None:
            if meta.get("host") != self.host:
                return False  # another machine's process, which means nothing here
            same = self.running(meta)
            if same is not None:
                return same
        return time.time() - last_active(self.resolver, meta["session_id"]) <= self.stale_after

    def session_is_live(self, session_id: str) -> bool:
        """Whether the session is live now: asked afresh, whatever was read before."""
        self.forget(session_id)
        return self.is_live(self.meta(session_id))

    def others(self, exclude: str) -> list[Meta]:
        """The project's live sessions but ``exclude``, from the active markers: their metadata, newest start last."""
        found = []
        for session_id in active_session_ids(self.resolver):
            if session_id == exclude:
                continue
            meta = self.meta(session_id)
            if meta is not None and self.is_live(meta):
                found.append(meta)
        return sorted(found, key=lambda m: str(m.get("started") or ""))


# --- what a session is doing: its _live.jsonl and the state folded from it ------------------------


def record_request(path: str, text: str) -> None:
    """UserPromptSubmit: the request, already redacted (``digest.record_prompt``), whole."""
    _append(path, {"kind": "ask", "text": text})


def record_edit(path: str, top: str, relative: str) -> None:
    """PostToolUse of an edit tool, or a shell command that wrote a file: the checkout ``top`` and the path there."""
    _append(path, {"kind": "edit", "top": top, "path": relative})


def record_head(path: str, top: str, head: tuple[str, str], own: bool = False) -> None:
    """The HEAD the session saw its checkout at, ``(branch or "", sha or "")``; ``own`` when it moved it itself."""
    _append(path, {"kind": "move" if own else "head", "top": top, "branch": head[0], "sha": head[1]})


def _append(path: str, record: dict[str, object]) -> None:
    record["at"] = round(time.time(), 3)
    line = json.dumps(record, ensure_ascii=False)
    append_line(path, line)  # one write, no lock: after every turn and edit
    with contextlib.suppress(OSError, BlackboardError):  # the state is derived: the next fold catches up
        size = os.stat(path).st_size
        if size // FOLD_EVERY != max(size - len(line.encode("utf-8")) - 2, 0) // FOLD_EVERY:
            _fold_into_state(path)  # one appender in FOLD_EVERY bytes crosses the mark


def record_hold(path: str, top: str, patterns: list[str], reason: str, until: float | None) -> None:
    """``blackboard hold``: paths or globs of checkout ``top`` it holds, why, and until when (None: its end)."""
    _append(path, {"kind": "hold", "top": top, "patterns": patterns, "reason": reason, "until": until})


def record_release(path: str, top: str, patterns: list[str]) -> None:
    """``blackboard release``: the holds of ``patterns`` in ``top`` are let go; of every one when it is empty."""
    _append(path, {"kind": "release", "top": top, "patterns": patterns})


def state_path(path: str) -> str:
    """``_live.json`` beside ``_live.jsonl``: what the log said up to an offset, folded."""
    return path[: -len("l")] if path.endswith(".jsonl") else path + ".state"


def locate(file_path: str, within: str | None = None) -> tuple[str, str] | None:
    """``(checkout, path there)`` of a file an edit tool names, its links resolved; None outside any checkout.

    ``within`` is the session's own checkout: a file under it, in a submodule or a nested
    repository included, is named by its path from there (``vendor/hal/gpio.c``). The file
    need not exist yet (Write creates it). A ``.git`` that cannot be read, a NUL or a path that
    is no path gives None: such a file is nobody's to guard.
    """
    if not os.path.isabs(file_path) or "\0" in file_path:
        return None
    real = os.path.realpath(file_path)
    if within is not None:
        own = os.path.realpath(within)
        inside = os.path.relpath(real, own)
        if not inside.startswith(".."):
            return None if _in_git_dir(inside) else (own, inside)
    top, readable = checkout_around(os.path.dirname(real))
    if top is None or not readable:
        return None
    relative = os.path.relpath(real, top)
    return None if relative.startswith("..") or _in_git_dir(relative) else (top, relative)


def _in_git_dir(relative: str) -> bool:
    return relative == ".git" or relative.startswith(".git" + os.sep) or (os.sep + ".git" + os.sep) in relative


class Presence:
    """What a session's ``_live.jsonl`` says: its latest request, the files it edited, the HEADs it saw and moved."""

    __slots__ = ("request", "edits", "head", "moves", "holds")

    def __init__(self) -> None:
        self.request: str | None = None
        self.edits: dict[tuple[str, str], float] = {}  # (checkout, path) -> when it was last edited
        self.head: tuple[str, str, str] | None = None  # (checkout, branch, sha): the latest it saw
        self.moves: dict[str, tuple[str, str, float]] = {}  # checkout -> (branch, sha, when): its own latest move
        self.holds: dict[tuple[str, str], tuple[str, float | None, float]] = {}  # (checkout, glob) -> (why, until, at)

    def add(self, record: dict) -> None:
        """Fold one record of ``_live.jsonl`` in; a record of another shape (a hand edit) changes nothing."""
        kind, at = record.get("kind"), record["at"]
        if kind == "edit" and _strings(record, "top", "path"):
            key = (record["top"], record["path"])
            self.edits[key] = max(at, self.edits.get(key, at))
        elif kind == "ask" and _strings(record, "text"):
            self.request = record["text"]
        elif kind in ("head", "move") and _strings(record, "top", "branch", "sha"):
            self.head = (record["top"], record["branch"], record["sha"])
            if kind == "move":
                self.moves[record["top"]] = (record["branch"], record["sha"], float(at))
        elif kind in ("hold", "release") and _strings(record, "top") and isinstance(record.get("patterns"), list):
            self._hold(kind, record, float(at))

    def _hold(self, kind: str, record: dict, at: float) -> None:
        top, patterns = record["top"], [p for p in record["patterns"] if isinstance(p, str)]
        if kind == "release":
            gone = [key for key in self.holds if key[0] == top and (not patterns or key[1] in patterns)]
            for key in gone:
                del self.holds[key]
            return
        given = record.get("until")
        until = float(given) if _time(given) else None  # type: ignore[arg-type]
        for pattern in patterns:
            self.holds[(top, pattern)] = (str(record.get("reason") or ""), until, at)

    def held(self, now: float) -> dict[tuple[str, str], tuple[str, float | None, float]]:
        """The explicit holds still in force at ``now``."""
        return {key: hold for key, hold in self.holds.items() if hold[1] is None or hold[1] > now}

    def edited_since(self, since: float) -> dict[tuple[str, str], float]:
        """The files edited at or after ``since``, newest first."""
        kept = sorted(reversed([(key, at) for key, at in self.edits.items() if at >= since]), key=lambda e: -e[1])
        return dict(kept)  # of two at the same time, the one recorded later first

    def last_edit(self, top: str, relative: str) -> tuple[str, float] | None:
        """``(checkout, when)`` it last edited ``relative``: in checkout ``top`` if it did there, else elsewhere."""
        if (top, relative) in self.edits:
            return top, self.edits[(top, relative)]
        elsewhere = [(at, where) for (where, name), at in self.edits.items() if name == relative]
        return (max(elsewhere)[1], max(elsewhere)[0]) if elsewhere else None


def read_presence(path: str, since: float = 0.0, about: str | None = None) -> Presence:
    """Everything the session recorded (its edits after ``since``): the folded state, then the log past it.

    Every edit within the window counts, however many came after it: the state keeps each
    file once, so reading costs what the session touched, not how often. With ``about`` (a path
    in a checkout), a session whose files name neither that path nor a hold is not parsed, and
    is given as having recorded nothing: the edit guard asks about one file of 30 live sessions.
    """
    found = _read_all(path, about)[0]
    found.edits = found.edited_since(since)
    return found


def _read_all(path: str, about: str | None = None) -> tuple[Presence, int]:
    """The session's whole presence and the log's size it covers: the state file's fold, then the log after it.

    With ``about``, an empty presence when neither the state nor the log past it names that path or a hold.
    """
    raw = _state_bytes(state_path(path))
    state = _parse_state(raw)
    data, size, offset = _log_past(path, state["offset"] if state else 0)
    if offset == 0:
        state = None  # a log started again, or a state not folded from it: the log is read whole
    needle = _as_recorded(about)
    if needle is not None and not _may_name(needle, raw, state, data):
        return Presence(), size
    found = Presence()
    try:
        _load_state(found, state or {})
    except (TypeError, ValueError, AttributeError):  # a state edited by hand: the log is read again whole
        found = Presence()
        data, size, _ = _log_past(path, 0)
    for record in _records(data):
        found.add(record)
    return found, size


def _records(data: bytes) -> list[dict]:
    """The records of whole log lines: parsed as one JSON array when every line is an object on its own (the
    common case, one parse), else line by line, a torn or hand-edited line skipped."""
    lines = [line for line in data.decode("utf-8", errors="replace").split("\n") if line]
    if all(line.startswith("{") and line.endswith("}") for line in lines):
        try:
            parsed = json.loads("[" + ",".join(lines) + "]")
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, list) and len(parsed) == len(lines):
            return [record for record in parsed if isinstance(record, dict) and _time(record.get("at"))]
    return [record for record in map(_record, lines) if record is not None]


def _may_name(needle: bytes, raw: bytes, state: dict | None, data: bytes) -> bool:
    """Whether the fold (``raw``, parsed as ``state``) or the log past it may record ``needle`` or a hold."""
    return needle in raw or needle in data or bool(state and state.get("holds")) or b'"hold"' in data


def _log_past(path: str, offset: int) -> tuple[bytes, int, int]:
    """The whole records of the log from ``offset`` (0 when no line starts there), its size, and that offset."""
    try:
        with open_regular(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            if offset > size or (offset and not _line_starts(handle, offset)):
                offset = 0
            start = max(offset, size - MAX_LOG_READ)  # past the bound only when folding failed for long
            whole_lines = start == offset or _line_starts(handle, start)
            handle.seek(start)
            data = handle.read(size - start)
    except OSError:  # no log yet, or one that is no regular file
        return b"", offset, offset
    if not whole_lines:
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""  # never half a record
    return data, size, offset


def _line_starts(handle: io.BufferedReader, offset: int) -> bool:
    """Whether a line of the log starts at ``offset``."""
    handle.seek(offset - 1)
    return handle.read(1) == b"\n"


def _fold_into_state(path: str) -> None:
    """Write the state the log adds up to, dropping edits older than ``KEEP_SECONDS``.

    Two sessions' hooks may fold at once: each writes a state complete up to its own offset,
    and a reader goes on from whichever offset the state it finds names, so nothing is lost.
    """
    found, offset = _read_all(path)
    keep = time.time() - KEEP_SECONDS
    newest = sorted(((at, key) for key, at in found.edits.items() if at >= keep), reverse=True)[:MAX_KEPT]
    edits: dict[str, dict[str, float]] = {}
    for at, (top, name) in newest:
        edits.setdefault(top, {})[name] = at
    state = {
        "offset": offset,
        "request": found.request,
        "head": list(found.head) if found.head else None,
        "moves": {top: list(move) for top, move in found.moves.items()},
        "edits": edits,
        "holds": [[top, glob, *hold] for (top, glob), hold in found.held(time.time()).items()],
    }
    atomic_write(state_path(path), json.dumps(state, ensure_ascii=False), durable=False)


def _as_recorded(relative: str | None) -> bytes | None:
    """``relative`` as a record of the log or the state holds it (a JSON string's inside, UTF-8); None when it
    would be escaped there, or when there is no path to look for: then every session is parsed."""
    if relative is None:
        return None
    inside = json.dumps(relative, ensure_ascii=False)[1:-1]
    if inside != relative:
        return None
    try:
        return inside.encode("utf-8")
    except UnicodeEncodeError:  # a name with a surrogate: the record escaped it
        return None


def _state_bytes(path: str) -> bytes:
    try:
        data = read_bounded(path, MAX_STATE_BYTES + 1)
    except OSError:
        return b""
    return data if data is not None and len(data) <= MAX_STATE_BYTES else b""


def _parse_state(data: bytes) -> dict | None:
    """The folded state, with the log offset it covers; None when it is missing or not ours, or of shapes
    ``_load_state`` cannot take (a hand edit): the log is then read whole, and a reader looking for one file
    (``read_presence(about=…)``) looks there too, where that file may be recorded before the fold's offset."""
    try:
        state = json.loads(data) if data else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(state, dict) or type(state.get("offset")) is not int or state["offset"] < 0:
        return None
    edits, moves = state.get("edits") or {}, state.get("moves") or {}
    shaped = (
        isinstance(edits, dict)
        and all(isinstance(names, dict) for names in edits.values())
        and isinstance(moves, dict)
        and all(isinstance(move, list) and len(move) == 3 for move in moves.values())
    )
    return state if shaped else None


def _load_state(found: Presence, state: dict) -> None:
    request, head, moves, edits = state.get("request"), state.get("head"), state.get("moves"), state.get("edits")
    for top, glob, reason, until, at in list(state.get("holds") or []):
        if isinstance(top, str) and isinstance(glob, str) and isinstance(reason, str) and _time(at):
            found.holds[(top, glob)] = (reason, float(until) if _time(until) else None, float(at))
    if isinstance(request, str):
        found.request = request
    if isinstance(head, list) and len(head) == 3 and all(isinstance(part, str) for part in head):
        found.head = (head[0], head[1], head[2])
    for top, move in dict(moves or {}).items():
        branch, sha, at = move
        if isinstance(branch, str) and isinstance(sha, str) and _time(at):
            found.moves[str(top)] = (branch, sha, float(at))
    for top, names in dict(edits or {}).items():
        found.edits.update({(str(top), str(name)): float(at) for name, at in dict(names).items() if _time(at)})


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
    if not isinstance(record, dict) or not _time(record.get("at")):
        return None
    return record


def _time(value: object) -> bool:
    """Whether ``value`` is a time in seconds a record could hold: a number float() takes, not 1e400 or NaN."""
    return type(value) in (int, float) and -1e12 < value < 1e12  # type: ignore[operator]


def _strings(record: dict, *keys: str) -> bool:
    return all(isinstance(record.get(key), str) for key in keys)
