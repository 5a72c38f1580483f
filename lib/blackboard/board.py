"""One session's board as agents use it: notes, tasks with claims, keyed shared context."""

import os
from typing import Callable, List, Mapping, Optional, Tuple

from . import entries
from .clock import age_seconds, now_iso
from .entries import Entry
from .errors import BlackboardError
from .fsutil import read_text
from .ids import ENV_VARS, validate_session_id
from .meta import Meta, read_meta, read_meta_or_none, update_meta
from .paths import PathResolver

DEFAULT_MAX_VALUE_CHARS = 10_000
CAPACITY_WARNING_BYTES = 20 * 1024 * 1024
ACTIVITY_RESOLUTION_SECONDS = 60


class Board:
    """The files of one session: ``Board(resolver, "abc").note("text", "main")``."""

    def __init__(self, resolver: PathResolver, session_id: str, found_by: str = "--session") -> None:
        self.resolver = resolver
        self.session_id = validate_session_id(session_id)
        self.directory = resolver.get_session_blackboard_dir(session_id)
        self.found_by = found_by

    def path(self, kind: str) -> str:
        return os.path.join(self.directory, entries.BOARD_FILES[kind][0])

    def meta(self) -> Meta:
        meta = read_meta(self.resolver.meta_path(self.session_id))
        if meta is None:
            raise BlackboardError(f"session {self.session_id} has no _meta.json; run `blackboard doctor`")
        return meta

    def note(self, text: str, author: str) -> str:
        return self._append("notes", "n", {"author": author}, text)

    def add_task(self, text: str, author: str) -> str:
        return self._append("tasks", "t", {"status": "open", "author": author}, text)

    def claim_task(self, task_id: str, author: str) -> Entry:
        """Claim an open, unclaimed task; exactly one of many concurrent claimants succeeds."""

        def claim(task: Entry) -> Entry:
            if task.fields.get("status") == "done":
                raise BlackboardError(f"task {task_id} is already done")
            holder = task.fields.get("claimed_by")
            if holder:
                raise BlackboardError(f"task {task_id} is already claimed by {holder}; pick another task")
            fields = {**task.fields, "status": "claimed", "claimed_by": author, "claimed_at": now_iso()}
            return task._replace(fields=fields)

        return self._update("tasks", task_id, claim)

    def finish_task(self, task_id: str, author: str) -> Entry:
        def finish(task: Entry) -> Entry:
            if task.fields.get("status") == "done":
                raise BlackboardError(f"task {task_id} is already done")
            fields = {**task.fields, "status": "done", "done_by": author, "done_at": now_iso()}
            return task._replace(fields=fields)

        return self._update("tasks", task_id, finish)

    def post(self, key: str, value: str, author: str, replace: bool = False) -> None:
        """Add a keyed entry; an existing key is an error unless ``replace``."""
        check_value(value)
        entries.put(self.path("context"), key, {"author": author}, value, replace)
        self._touch()

    def read(self, key: str) -> Entry:
        for entry in self.entries("context")[0]:
            if entry.id == key:
                return entry
        raise BlackboardError(f"no key {key!r} on this board; `blackboard list` shows the keys")

    def claim_key(self, key: str) -> Entry:
        """Read and remove a keyed entry; exactly one of many concurrent claimants gets it."""
        claimed = self._update("context", key, lambda entry: None)
        self._touch()
        return claimed

    def entries(self, kind: str) -> Tuple[List[Entry], List[str]]:
        """All entries of a (small) board file, and the blocks that could not be read."""
        return entries.parse(read_text(self.path(kind)))

    def recent_notes(self, limit: int) -> List[Entry]:
        return entries.read_tail_entries(self.path("notes"), 256 * 1024)[-limit:]

    def capacity_warning(self) -> Optional[str]:
        for kind in entries.BOARD_FILES:
            size = os.path.getsize(self.path(kind)) if os.path.exists(self.path(kind)) else 0
            if size > CAPACITY_WARNING_BYTES:
                name = entries.BOARD_FILES[kind][0]
                return f"{name} is {size // (1024 * 1024)} MB; handoffs only read its tail"
        return None

    def _append(self, kind: str, prefix: str, fields: dict, text: str) -> str:
        check_value(text)
        entry_id = entries.append(self.path(kind), prefix, fields, text)
        self._touch()
        return entry_id

    def _update(self, kind: str, entry_id: str, change: Callable[[Entry], Optional[Entry]]) -> Entry:
        try:
            result = entries.update(self.path(kind), entry_id, change)
        except BlackboardError as exc:
            if str(exc).startswith("no entry") and kind == "tasks":
                raise BlackboardError(f"no task {entry_id!r}; `blackboard task list` shows the ids") from None
            raise
        self._touch()
        return result

    def _touch(self) -> None:
        """Record activity, at most once a minute so busy agents do not contend on the metadata lock."""
        path = self.resolver.meta_path(self.session_id)
        meta = read_meta_or_none(path)
        age = age_seconds((meta or {}).get("last_activity"))
        if meta is not None and (age is None or age > ACTIVITY_RESOLUTION_SECONDS):
            update_meta(path, lambda m: m.update(last_activity=now_iso()))


def max_value_chars(environ: Mapping[str, str] = os.environ) -> int:
    try:
        return int(environ.get("BLACKBOARD_MAX_VALUE_CHARS", DEFAULT_MAX_VALUE_CHARS))
    except ValueError:
        return DEFAULT_MAX_VALUE_CHARS


def check_value(text: str) -> None:
    """Refuse an empty or oversized value before anything is written."""
    if not text.strip():
        raise BlackboardError("nothing to write: the text is empty")
    cap = max_value_chars()
    if len(text) > cap:
        raise BlackboardError(
            f"value is {len(text)} characters, over the cap of {cap}; write it to a file and post the path "
            "(or raise BLACKBOARD_MAX_VALUE_CHARS)"
        )


def locate(environ: Mapping[str, str], cwd: str, explicit: Optional[str] = None) -> Board:
    """The board a command means: ``--session``, the session env vars, else this project's latest."""
    resolver = PathResolver.for_cwd(cwd, environ)
    named = [(explicit, "--session")] + [(environ.get(name), name) for name in ENV_VARS]
    for session_id, source in named:
        if session_id:
            return _find(resolver, validate_session_id(session_id), source)
    return _latest(resolver)


def _find(resolver: PathResolver, session_id: str, source: str) -> Board:
    owner = resolver.owner_of(session_id)
    if owner is resolver:
        return Board(resolver, session_id, source)
    if owner is not None:  # the agent changed directory into another project
        return Board(owner, session_id, f"{source} (found in {owner.project.org}/{owner.project.name})")
    raise BlackboardError(
        f"session {session_id} (from {source}) has no board under {resolver.root}; "
        "`blackboard sessions --all-projects` lists the sessions"
    )


def _latest(resolver: PathResolver) -> Board:
    candidates = resolver.active_session_ids()
    found_by = "the most recently active session of this project"
    metas = [read_meta_or_none(resolver.meta_path(i)) for i in candidates]
    live = [m for m in metas if m]
    if not live:
        live = [e.meta for e in resolver.list_session_blackboards() if e.meta]
    if not live:
        name = f"{resolver.project.org}/{resolver.project.name}"
        raise BlackboardError(f"no session of {name} yet; start Claude Code here or pass --session ID")
    newest = max(live, key=lambda m: (str(m.get("last_activity") or ""), str(m.get("started") or "")))
    return Board(resolver, newest["session_id"], found_by)
