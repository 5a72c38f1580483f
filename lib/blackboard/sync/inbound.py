"""What another machine's ref holds, checked: a pure function of tree entries and blob contents.

Nothing here reads the disk or runs git; ``importing`` applies what this accepts. Every
refusal says why, and a session with any refused file is refused whole (ADR 19, ADR 30).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping

from .. import handoff
from ..clock import epoch_seconds
from ..errors import BlackboardError
from ..fsutil import json_object
from ..gitstore import BLOB, Entry
from ..ids import is_session_id
from ..meta import FINISHED, MAX_META_BYTES, Meta, upgrade
from ..paths import BOARD_FILES, META_FILE
from ..project import Project
from ..registry import CLOCK_AHEAD_SECONDS
from ..render import inline

TYPE_CHECKING = False  # as in ``meta``: typing only for mypy, never imported by a hook
if TYPE_CHECKING:
    from typing import Literal

SESSION_FILES = (META_FILE, *BOARD_FILES.values())
MAX_FILE_BYTES = 8 * 1024 * 1024  # larger board files stay on their machine; status says so
MAX_ACTIVE_BYTES = 64 * 1024
# One round's import writes at most this, a file counted each time a tree uses it: a 46 KiB pack
# that names one 8 MiB blob 300 times must not write 2.4 GiB.
MAX_IMPORT_BYTES = 256 * 1024 * 1024
MAX_HELD_BYTES = 1024 * 1024 * 1024  # what copies of other machines' sessions may hold here in all
MAX_ACTIVE_RECORDS = 50
DEFAULT_MAX_SESSIONS = 5_000  # of one ref: ``BLACKBOARD_SYNC_MAX_SESSIONS``
MAX_REFS = 64  # other machines' refs one project reads: the newest by commit time
MAX_REFUSALS = 50  # lines of one round's refusals, and of those ``sync status`` keeps
HOST_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"


def max_sessions(environ: Mapping[str, str]) -> int:
    """``BLACKBOARD_SYNC_MAX_SESSIONS`` (default 5 000): the sessions one ref holds, and a reader takes of it."""
    value = environ.get("BLACKBOARD_SYNC_MAX_SESSIONS", "")
    return int(value) if value.isdigit() and 1 <= int(value) <= 100_000 else DEFAULT_MAX_SESSIONS


class Layout:
    """A machine's tree sorted into sessions, handoffs and its active record; anything else is refused.

    ``legacy``: the old shared ref's tree, whose ``removed/`` markers and ``active/`` records are
    passed over (nothing of them is taken any more).
    """

    def __init__(self, entries: list[Entry], legacy: bool = False) -> None:
        self.sessions: dict[str, dict[str, Entry]] = {}
        self.handoffs: dict[str, Entry] = {}
        self.active: Entry | None = None
        self.problems: list[str] = []
        self.spoiled: set[str] = set()  # sessions with a refused file: refused whole
        self.oversized: list[
            str
        ] = []  # files over MAX_FILE_BYTES: the machine's whole commit is refused, and forgotten
        self.legacy = legacy
        refused = 0
        for entry in entries:
            problem = self._place(entry)
            if problem:
                refused += 1
                if refused <= MAX_REFUSALS:
                    self.problems.append(f"{inline(entry.path, 200)}: {problem}")
                parts = entry.path.split("/")
                if parts[0] in ("sessions", "handoff") and len(parts) > 1:
                    self.spoiled.add(parts[1] if parts[0] == "sessions" else handoff.handoff_id(parts[1]) or parts[1])
        if refused > MAX_REFUSALS:
            self.problems.append(f"and {refused - MAX_REFUSALS} more entries refused")

    def files_of(self, session_id: str) -> list[Entry]:
        """A session's entries: its folder's files, then its handoff when it has one."""
        files = list(self.sessions[session_id].values())
        return files + [self.handoffs[session_id]] if session_id in self.handoffs else files

    def _place(self, entry: Entry) -> str | None:
        path, kind, mode, size = entry.path, entry.kind, entry.mode, entry.size
        parts = path.split("/")
        if kind != BLOB or mode not in ("100644", "100755"):
            return "not a regular file (a link or a submodule); refused"
        if self.legacy and parts[0] in ("removed", "active"):
            return None  # markers and records of the old design: nothing takes them any more
        if size > MAX_FILE_BYTES:
            self.oversized.append(inline(path, 200))
            return f"over {MAX_FILE_BYTES // (1024 * 1024)} MiB; refused"
        if parts[0] == "sessions" and len(parts) == 3 and is_session_id(parts[1]) and parts[2] in SESSION_FILES:
            self.sessions.setdefault(parts[1], {})[parts[2]] = entry
            return None
        if parts[0] == "handoff" and len(parts) == 2:
            session_id = handoff.handoff_id(parts[1])
            if session_id is not None:
                self.handoffs[session_id] = entry
                return None
        if path == "active.json" and size <= MAX_ACTIVE_BYTES:
            self.active = entry
            return None
        return "not part of the board layout; refused"


class Refused:
    """Why a session another machine sent was not taken (it is looked at again next round)."""

    __slots__ = ("detail",)

    def __init__(self, detail: str) -> None:
        self.detail = detail

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Refused) and self.detail == other.detail

    def __repr__(self) -> str:
        return f"Refused({self.detail!r})"


class Accepted:
    """A remote session that passed every check: its files, its metadata, and its handoff if it has one."""

    __slots__ = ("files", "meta", "handoff", "order")

    def __init__(self, files: dict[str, bytes], meta: Meta) -> None:
        self.files = files
        self.meta = meta
        self.handoff: str | None = None
        self.order: tuple[int, float, str] | None = None  # ``handoff.order``; None for a handoff with no end


def check_session(
    project: Project, session_id: str, files: dict[str, bytes | None], handoff_data: bytes | None | Literal[False]
) -> Accepted | Refused:
    """One remote session, its files read (None: missing or over the cap), and its handoff's bytes
    (None: missing or over the cap; ``False`` when the tree has none)."""
    if any(data is None for data in files.values()):
        return Refused("a file is missing or too large; refused")
    meta = check_meta(project, session_id, files.get(META_FILE))
    if isinstance(meta, Refused):
        return meta
    meta["via"] = "sync"  # marked on arrival: shown as another machine's wherever it is read
    files = {**files, META_FILE: (json.dumps(meta) + "\n").encode()}
    accepted = Accepted({name: data or b"" for name, data in files.items()}, meta)
    if handoff_data is False:
        return accepted
    checked = check_handoff(session_id, meta, handoff_data)
    if isinstance(checked, Refused):
        return checked
    accepted.handoff, accepted.order = checked
    return accepted


def check_meta(project: Project, session_id: str, data: bytes | None) -> Meta | Refused:
    """The metadata of a remote session of ``project``, finished, with sane times and a host; or why not."""
    if data is None:
        return Refused("no _meta.json; refused")
    if len(data) > MAX_META_BYTES:
        return Refused("its _meta.json is too large; refused")
    try:
        loaded = json.loads(data.decode("utf-8"))
        meta = upgrade(loaded if isinstance(loaded, dict) else {}, f"{session_id}/_meta.json")
    except (ValueError, RecursionError, BlackboardError) as exc:
        return Refused(f"unreadable _meta.json ({inline(exc, 80)}); refused")
    if meta.get("session_id") != session_id:
        return Refused("its _meta.json names another session; refused")
    if (meta.get("org"), meta.get("project")) != (project.org, project.name):
        return Refused("its _meta.json names another project; refused")
    if meta.get("status") not in FINISHED:
        return Refused("not a finished session; refused")
    if not isinstance(meta.get("host"), str) or not re.fullmatch(HOST_NAME, meta["host"]):
        return Refused("its _meta.json names no host, or not as a host name; refused")
    if any(isinstance(v, str) and not v.isprintable() for v in meta.values()):
        return Refused("its _meta.json holds control characters; refused")  # `sessions` and `show` print them
    stamps = [meta.get("started"), meta.get("ended"), meta.get("last_activity")]
    times = [epoch_seconds(str(stamp)) for stamp in stamps if stamp]
    if any(t is None for t in times):
        return Refused("its _meta.json has a time that is not one; refused")
    if any(t is not None and t > time.time() + CLOCK_AHEAD_SECONDS for t in times):
        return Refused("its _meta.json has a time in the future; refused")
    return meta


def check_handoff(
    session_id: str, meta: Meta, data: bytes | None
) -> tuple[str, tuple[int, float, str] | None] | Refused:
    """A remote handoff that agrees with its checked ``meta``: its text and its order (None for a
    handoff with no end to be ordered by); or why not."""
    if data is None or len(data) > handoff.MAX_HANDOFF_READ:
        return Refused("its handoff is missing or too large; refused")
    try:
        text = data.decode("utf-8")  # never with U+FFFD: that would write three bytes for each one read
    except UnicodeDecodeError:
        return Refused("its handoff is not UTF-8; refused")
    try:
        fields, body = handoff.split_front_matter(text, yaml_allowed=False)
    except ValueError:
        return Refused("its handoff's front matter is not the plugin's own; refused")
    if fields.get("session_id") != session_id:
        return Refused("its handoff names another session; refused")
    if any(key in fields and fields[key] != meta.get(key) for key in ("org", "project")):
        return Refused("its handoff names another project or host than its _meta.json; refused")
    if fields.get("host") not in (None, meta.get("host")):  # none: written before sessions named their host
        return Refused("its handoff names another project or host than its _meta.json; refused")
    end = handoff.effective_end(fields)
    if end is not None and end > time.time() + CLOCK_AHEAD_SECONDS:
        return Refused("its handoff ends in the future; refused")
    fields["host"] = meta.get("host")  # the machine it came from, said the same way as its metadata says it
    fields["via"] = "sync"  # and so is its handoff, which the next session's context is built from
    return handoff.dump_front_matter(fields) + body, handoff.order(fields) if end is not None else None


def updated(records: list) -> float:
    stamps = [r.get("updated") for r in records if isinstance(r, dict)]
    return max((t for t in stamps if isinstance(t, (int, float))), default=0.0)


def active_records(data: bytes | None) -> list[dict[str, object]]:
    """The records of a machine's ``active.json``: its active sessions, under the host it names."""
    loaded = json_object(data)
    host = loaded.get("host")
    if not isinstance(host, str) or not re.fullmatch(HOST_NAME, host):
        return []
    updated = epoch_seconds(str(loaded.get("updated") or ""))
    if updated is None or updated > time.time() + CLOCK_AHEAD_SECONDS:  # a future stamp would never expire
        return []
    items = loaded.get("sessions")
    records: list[dict[str, object]] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and is_session_id(item.get("session_id")):
            started = item.get("started")
            since = started if isinstance(started, str) and epoch_seconds(started) is not None else "?"
            records.append({"host": host, "session_id": str(item["session_id"]), "since": since, "updated": updated})
    return records[:MAX_ACTIVE_RECORDS]
