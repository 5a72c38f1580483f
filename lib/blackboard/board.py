"""One session's board as agents use it: notes, tasks with claims, keyed shared context."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Callable

from . import entries, handoff, ledger
from .clock import now_iso
from .entries import Entry
from .errors import BlackboardError
from .fsutil import read_text
from .ids import validate_session_id
from .ledger import CLOSED_STATUSES, Item, Ledger, board_key
from .meta import ACTIVE, Meta, read_meta, read_meta_or_none, update_meta
from .paths import BOARD_FILES, PathResolver
from .registry import active_session_ids, find_owner, last_active, list_sessions, mark_touched, session_dir
from .settings import DEFAULT_MAX_VALUE_CHARS, Settings

CAPACITY_WARNING_BYTES = 20 * 1024 * 1024
ACTIVITY_RESOLUTION_SECONDS = 60


class Board:
    """The files of one session: ``Board(resolver, "abc").note("text", "main")``.

    ``max_chars`` is the longest note, task or value it takes (``Settings.max_value_chars``).
    """

    def __init__(
        self,
        resolver: PathResolver,
        session_id: str,
        found_by: str = "--session",
        max_chars: int = DEFAULT_MAX_VALUE_CHARS,
    ) -> None:
        self.resolver = resolver
        self.max_chars = max_chars
        self.directory = session_dir(resolver, session_id)
        self.session_id = session_id
        self.found_by = found_by

    def path(self, kind: str) -> str:
        """The file of ``tasks``, ``notes`` or ``context``."""
        return self.resolver.board_file(self.session_id, kind)

    def meta(self) -> Meta:
        """The session's metadata; an error when it has none."""
        meta = read_meta(self.resolver.meta_path(self.session_id))
        if meta is None:
            raise BlackboardError(f"session {self.session_id} has no _meta.json; run `blackboard doctor`")
        return meta

    def note(self, text: str, author: str) -> str:
        """Append a note; returns its id (``n1``)."""
        return self._append("notes", "n", {"author": author}, text)

    def add_task(self, text: str, author: str) -> str:
        """Add an open task; returns its id (``t1``)."""
        return self._append("tasks", "t", {"status": "open", "author": author}, text)

    def claim_task(self, task_id: str, author: str) -> Entry:
        """Claim an open, unclaimed task; exactly one of many concurrent claimants succeeds."""

        def claim(task: Entry) -> Entry:
            _refuse_closed(task_id, task)
            holder = task.fields.get("claimed_by")
            if holder:
                raise BlackboardError(f"task {task_id} is already claimed by {holder}; pick another task")
            return Entry(
                task.id, {**task.fields, "status": "claimed", "claimed_by": author, "claimed_at": now_iso()}, task.body
            )

        return self._change_task(task_id, claim)

    def finish_task(self, task_id: str, author: str) -> Entry:
        """Mark a task done: this board's (``t3``) or one carried from an earlier session (``5f1c8a2e/t3``)."""

        def finish(task: Entry) -> Entry:
            _refuse_closed(task_id, task)
            return Entry(task.id, {**task.fields, "status": "done", "done_by": author, "done_at": now_iso()}, task.body)

        return self._change_task(task_id, finish)

    def drop_task(self, task_id: str, author: str, reason: str) -> Entry:
        """Drop a task that will not be done, saying why; like done, it leaves every later handoff."""
        check_value(reason, self.max_chars)

        def drop(task: Entry) -> Entry:
            _refuse_closed(task_id, task)
            fields = {**task.fields, "status": "dropped", "dropped_by": author, "dropped_at": now_iso()}
            return Entry(task.id, {**fields, "drop_reason": reason}, task.body)

        return self._change_task(task_id, drop)

    def carried(self) -> list[Item]:
        """Open work of earlier sessions (the project's latest handoff) that this board has not taken up."""
        latest = handoff.read_handoff(self.resolver.latest_handoff_path())
        if latest is None:
            return []
        here = {board_key(self.session_id, t.fields, t.id) for t in self.entries("tasks")[0]}
        return [i for i in Ledger.from_fields(latest[0]).open if i.origin != self.session_id and i.key not in here]

    def _change_task(self, task_id: str, change: Callable[[Entry], Entry]) -> Entry:
        """Apply ``change`` to a task of this board; a carried one (``5f1c8a2e/t3``) is first taken onto it."""
        if "/" not in task_id:
            return self._update("tasks", task_id, change)
        here = {task.id: _as_item(self.session_id, task) for task in self.entries("tasks")[0]}
        taken = ledger.find(list(here.values()), task_id)
        if taken is not None:
            return self._update("tasks", next(i for i, item in here.items() if item is taken), change)
        item = ledger.find(self.carried(), task_id)
        if item is None:
            raise BlackboardError(
                f"no open task {task_id!r} carried into this project (or more than one starts so); "
                "`blackboard task list` shows them"
            )
        header = entries.initial_text("tasks", self.session_id)
        fields = {"status": "open", "origin": item.key, "author": "an earlier session"}
        new_id = entries.append_once(
            self.path("tasks"), "t", fields, item.text, header, lambda e: _taken_up(e, item.key)
        )
        return self._update("tasks", new_id, change)

    def post(self, key: str, value: str, author: str, replace: bool = False) -> None:
        """Add a keyed entry; an existing key is an error unless ``replace``."""
        check_value(value, self.max_chars)
        header = entries.initial_text("context", self.session_id)
        entries.put(self.path("context"), key, {"author": author}, value, replace, header)
        self._touch()

    def read(self, key: str) -> Entry:
        """The entry posted under ``key``."""
        for entry in self.entries("context")[0]:
            if entry.id == key:
                return entry
        raise BlackboardError(f"no key {key!r} on this board; `blackboard list` shows the keys")

    def claim_key(self, key: str) -> Entry:
        """Read and remove a keyed entry; exactly one of many concurrent claimants gets it."""
        claimed = self._update("context", key, lambda entry: None)
        self._touch()
        return claimed

    def entries(self, kind: str) -> tuple[list[Entry], list[str]]:
        """All entries of a (small) board file, and the blocks that could not be read."""
        return entries.parse(read_text(self.path(kind)))

    def recent_notes(self, limit: int) -> list[Entry]:
        """The last ``limit`` notes, read from the file's tail."""
        return entries.read_tail_entries(self.path("notes"), 256 * 1024)[0][-limit:]

    def capacity_warning(self) -> str | None:
        """A warning when a board file has grown past what handoffs read whole."""
        for kind, name in BOARD_FILES.items():
            size = os.path.getsize(self.path(kind)) if os.path.exists(self.path(kind)) else 0
            if size > CAPACITY_WARNING_BYTES:
                return f"{name} is {size // (1024 * 1024)} MB; handoffs only read its tail"
        return None

    def _append(self, kind: str, prefix: str, fields: dict[str, str], text: str) -> str:
        check_value(text, self.max_chars)
        entry_id = entries.append(self.path(kind), prefix, fields, text, entries.initial_text(kind, self.session_id))
        self._touch()
        return entry_id

    def _update(self, kind: str, entry_id: str, change: Callable[[Entry], Entry | None]) -> Entry:
        try:
            result = entries.update(self.path(kind), entry_id, change)
        except entries.NoEntry:
            if kind != "tasks":
                raise
            raise BlackboardError(f"no task {entry_id!r}; `blackboard task list` shows the ids") from None
        self._touch()
        return result

    def _touch(self) -> None:
        """Record activity: at most once a minute while the session runs, so busy agents do not contend
        on the metadata lock; at every write to a finished one, which sync notices by its metadata alone.

        Called after a write has succeeded: a failure here (a held lock, a full disk) must not
        turn that success into an error, or a retrying agent would write the entry twice.
        """
        path = self.resolver.meta_path(self.session_id)
        meta = read_meta_or_none(path)
        if meta is None:
            return
        recent = time.time() - last_active(self.resolver, self.session_id) <= ACTIVITY_RESOLUTION_SECONDS
        if recent and meta.get("status") == ACTIVE:
            return
        if meta.get("status") != ACTIVE:
            with contextlib.suppress(BlackboardError, OSError):
                mark_touched(self.resolver, self.session_id)  # sync sends it again
        with contextlib.suppress(BlackboardError, OSError):
            update_meta(path, lambda m: m.update({"last_activity": now_iso()}))


def _refuse_closed(task_id: str, task: Entry) -> None:
    status = task.fields.get("status")
    if status in CLOSED_STATUSES:
        raise BlackboardError(f"task {task_id} is already {status}")


def _as_item(session_id: str, task: Entry) -> Item:
    return Item(board_key(session_id, task.fields, task.id), task.body)


def _taken_up(tasks: list[Entry], key: str) -> str | None:
    """The id of the task taken up from ``key`` when another process did it first."""
    return next((task.id for task in tasks if task.fields.get("origin") == key), None)


def check_value(text: str, cap: int) -> None:
    """Refuse an empty or oversized value before anything is written."""
    if not text.strip():
        raise BlackboardError("nothing to write: the text is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a byte that was not UTF-8 on the command line
        raise BlackboardError("the text is not valid UTF-8; write it to a file and pass --file PATH") from None
    if len(text) > cap:
        raise BlackboardError(
            f"value is {len(text)} characters, over the cap of {cap}; write it to a file and post the path "
            "(or raise BLACKBOARD_MAX_VALUE_CHARS)"
        )


def locate(settings: Settings, cwd: str, explicit: str | None = None) -> Board:
    """The board a command means: ``--session``, the session env vars, else this project's latest."""
    resolver, cap = PathResolver.for_cwd(cwd, settings), settings.max_value_chars
    if explicit:
        return _find(resolver, validate_session_id(explicit), "--session", cap)
    if settings.named_session:
        variable, session_id = settings.named_session
        return _find(resolver, validate_session_id(session_id), variable, cap)
    return latest_board(resolver, settings.host, cap)


def _find(resolver: PathResolver, session_id: str, source: str, cap: int) -> Board:
    owner = find_owner(resolver, session_id)
    if owner is resolver:
        return Board(resolver, session_id, source, cap)
    if owner is not None:  # the agent changed directory into another project
        return Board(owner, session_id, f"{source} (found in {owner.project.org}/{owner.project.name})", cap)
    raise BlackboardError(
        f"session {session_id} (from {source}) has no board under {resolver.root}; "
        "`blackboard sessions --all-projects` lists the sessions"
    )


def latest_board(resolver: PathResolver, host: str, cap: int = DEFAULT_MAX_VALUE_CHARS) -> Board:
    """The board of the project's most recently active session; of this machine's newest when none is active."""
    found_by = "the most recently active session of this project"
    metas = [read_meta_or_none(resolver.meta_path(i)) for i in active_session_ids(resolver)]
    live = [m for m in metas if m]
    if not live:  # none active: the newest of this machine's own (another machine's came by sync, to read)
        live = [e.meta for e in list_sessions(resolver) if e.meta and e.meta.get("host") in (None, host)]
    if not live:
        name = f"{resolver.project.org}/{resolver.project.name}"
        raise BlackboardError(f"no session of {name} yet; start Claude Code here or pass --session ID")
    newest = max(live, key=lambda m: (last_active(resolver, m["session_id"]), str(m.get("started") or "")))
    return Board(resolver, newest["session_id"], found_by, cap)
