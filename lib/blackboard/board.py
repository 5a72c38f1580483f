"""One session's board as agents use it: notes, tasks with claims, keyed shared context."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Callable

from . import claims, entries, handoff, ledger
from .clock import now_iso
from .entries import Entry
from .errors import BlackboardError
from .fsutil import read_text
from .ids import validate_session_id
from .ledger import CLOSED_STATUSES, Item, Ledger, board_key
from .live import Liveness
from .machines import CopyResolver, continue_from, copies_of
from .meta import ACTIVE, Meta, read_meta, read_meta_or_none, update_meta, written_here
from .paths import BOARD_FILES, PathResolver
from .registry import active_session_ids, find_owner, last_active, list_sessions, session_dir
from .settings import DEFAULT_MAX_VALUE_CHARS, Settings

CAPACITY_WARNING_BYTES = 20 * 1024 * 1024
ACTIVITY_RESOLUTION_SECONDS = 60


class Changed:
    """A task a command changed: the entry, its key (``{session}/t3``), and whether it is on the caller's board."""

    __slots__ = ("task", "key", "here")

    def __init__(self, task: Entry, key: str, here: bool) -> None:
        self.task, self.key, self.here = task, key, here

    @property
    def name(self) -> str:
        """What an answer calls it: ``t1`` on the caller's own board (``t4 (carried: 5f1c8a2e/t3)`` when taken up
        from another session), else the short key, ``5f1c8a2e/t1``: never another session's task by a bare id."""
        origin, _, local = self.key.rpartition("/")
        short = f"{origin[:8]}/{local}"
        if not self.here:
            return short
        return f"{self.task.id} (carried: {short})" if self.task.fields.get("origin") == self.key else self.task.id


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
        liveness: Liveness | None = None,
    ) -> None:
        self.resolver = resolver
        self.max_chars = max_chars
        self.directory = session_dir(resolver, session_id)
        self.session_id = session_id
        self.found_by = found_by
        self.liveness = liveness  # which other sessions are live; None: this board alone is seen

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

    def claim_task(self, task_id: str, author: str) -> Changed:
        """Claim an open task: exactly one of many concurrent claimants succeeds, across the project's live sessions.

        A claim whose session has ended or died is free again.
        """
        claimant = self.session_id

        def claim(task: Entry, board_session: str) -> Entry:
            _refuse_closed(task_id, task)
            holder = task.fields.get("claimed_by")
            if holder and task.fields.get("status") == "claimed":
                held_in = task.fields.get("claimed_in") or board_session
                if held_in == claimant or self._is_live(held_in):
                    since = task.fields.get("claimed_at", "?")
                    where = "" if held_in == claimant else f" in session {held_in[:8]}"
                    raise BlackboardError(
                        f"task {task_id} is already claimed by {holder}{where} since {since}; pick another task"
                    )
            fields = {**task.fields, "status": "claimed", "claimed_by": author, "claimed_in": claimant}
            return Entry(task.id, {**fields, "claimed_at": now_iso()}, task.body)

        return self._change_task(task_id, claim, author, claiming=True)

    def finish_task(self, task_id: str, author: str, force: bool = False) -> Changed:
        """Mark a task done: this board's (``t3``), another live session's or one carried from an earlier one
        (``5f1c8a2e/t3``). A task another live session has claimed is its to close, but with ``force``."""

        def finish(task: Entry, board_session: str) -> Entry:
            return Entry(task.id, {**task.fields, "status": "done", "done_by": author, "done_at": now_iso()}, task.body)

        return self._closed(self._change_task(task_id, self._closing(task_id, finish, "finish", force), author))

    def drop_task(self, task_id: str, author: str, reason: str, force: bool = False) -> Changed:
        """Drop a task that will not be done, saying why; like done, it leaves every later handoff. A task another
        live session has claimed is its to drop, but with ``force``."""
        check_value(reason, self.max_chars)

        def drop(task: Entry, board_session: str) -> Entry:
            fields = {**task.fields, "status": "dropped", "dropped_by": author, "dropped_at": now_iso()}
            return Entry(task.id, {**fields, "drop_reason": reason}, task.body)

        return self._closed(self._change_task(task_id, self._closing(task_id, drop, "drop", force), author))

    def _closing(
        self, task_id: str, close: Callable[[Entry, str], Entry], verb: str, force: bool
    ) -> Callable[[Entry, str], Entry]:
        """``close``, applied under the task file's lock only when no other live session holds the task's claim.

        With ``force`` it is applied anyway, and the claim it overrode is recorded on the task
        (``overrode_claim``), where the holder's ``task list --all`` and the answer show it.
        """

        def closing(task: Entry, board_session: str) -> Entry:
            _refuse_closed(task_id, task)
            held = self._held_elsewhere(task, board_session)
            if held is None:
                return close(task, board_session)
            if not force:
                raise BlackboardError(
                    f"task {task_id} is claimed by {held}: that session closes it; ask it (`blackboard who`), or "
                    f"pass --force to {verb} it anyway"
                )
            closed = close(task, board_session)
            return Entry(closed.id, {**closed.fields, "overrode_claim": held}, closed.body)

        return closing

    def _held_elsewhere(self, task: Entry, board_session: str) -> str | None:
        """``main in live session 5f1c8a2e since …`` when another live session holds ``task``'s claim; else None."""
        if task.fields.get("status") != "claimed" or not task.fields.get("claimed_by"):
            return None
        held_in = task.fields.get("claimed_in") or board_session
        if held_in == self.session_id or not self._is_live(held_in):
            return None
        by, since = task.fields["claimed_by"], task.fields.get("claimed_at", "?")
        return f"{by} in live session {held_in[:8]} since {since}"

    def latest_ledger(self) -> Ledger:
        """The open work the project's latest handoff carries, every item of it (newest first)."""
        latest = handoff.read_handoff(self.resolver.latest_handoff_path())
        return Ledger.from_fields(latest[0]) if latest else Ledger([], [])

    def carried(self, latest: Ledger | None = None) -> list[Item]:
        """Open work of earlier sessions (``latest``, else the latest handoff's) that no live board has taken up."""
        items = (latest or self.latest_ledger()).open
        if not items:
            return []
        boards = [(self.session_id, self.entries("tasks")[0])] + [(b.session_id, t) for b, t in self._live_boards()]
        here = {board_key(session_id, t.fields, t.id) for session_id, tasks in boards for t in tasks}
        return [i for i in items if i.origin != self.session_id and i.key not in here]

    def live_tasks(self) -> list[tuple[str, str, Entry]]:
        """The open and claimed tasks of the project's other live sessions: ``(key, its board's session, task)``."""
        found = []
        for board, tasks in self._live_boards():
            for task in tasks:
                if task.fields.get("status") not in CLOSED_STATUSES:
                    found.append((board_key(board.session_id, task.fields, task.id), board.session_id, task))
        return found

    def _live_boards(self) -> list[tuple[Board, list[Entry]]]:
        """The boards of the project's other live sessions, with their tasks."""
        if self.liveness is None:
            return []
        found = []
        for meta in self.liveness.others(exclude=self.session_id):
            try:
                board = Board(self.resolver, meta["session_id"], max_chars=self.max_chars, liveness=self.liveness)
                found.append((board, board.entries("tasks")[0]))
            except (BlackboardError, OSError):  # a board that cannot be read is no one's to take from
                continue
        return found

    def _is_live(self, session_id: str) -> bool:
        """Whether a session holding a claim still runs; without a ``liveness``, every holder does."""
        return self.liveness is None or self.liveness.session_is_live(session_id)

    def _closed(self, changed: Changed) -> Changed:
        origin = changed.task.fields.get("origin")
        if origin:  # carried work, done or dropped: no one's to claim any more
            claims.release(self.resolver, origin)
        return changed

    def _change_task(
        self, task_id: str, change: Callable[[Entry, str], Entry], author: str, claiming: bool = False
    ) -> Changed:
        """Apply ``change`` to a task: this board's, another live session's by key (``5f1c8a2e/t2``), or one
        carried from an ended session, first taken onto this board (its claim recorded in ``claims``)."""
        if "/" not in task_id:
            return self._changed(self, task_id, change)
        here = {task.id: _as_item(self.session_id, task) for task in self.entries("tasks")[0]}
        taken = ledger.find(list(here.values()), task_id)
        if taken is not None:
            entry_id = next(i for i, item in here.items() if item is taken)
            return self._changed(self, entry_id, change)
        elsewhere = self._on_a_live_board(task_id)
        if elsewhere is not None:
            return self._changed(*elsewhere, change)
        item = ledger.find(self.carried(), task_id)
        if item is None:
            raise BlackboardError(
                f"no open task {task_id!r} carried into this project or on a live session's board (or more "
                "than one starts so); `blackboard task list` shows them"
            )
        held: dict[str, str] = {}
        if claiming:
            claims.hold(self.resolver, item.key, self.session_id, author, self._is_live)
        else:  # its claim is seen as the task's own, and a refusal comes before anything is taken up
            held = _claim_fields(claims.holder(self.resolver, item.key), self.session_id)
            if held:
                change(Entry("", {"status": "open", "origin": item.key, **held}, item.text), self.session_id)
        header = entries.initial_text("tasks", self.session_id)
        fields = {"status": "open", "origin": item.key, "author": "an earlier session"}
        new_id = entries.append_once(
            self.path("tasks"), "t", fields, item.text, header, lambda e: _taken_up(e, item.key)
        )
        return self._changed(
            self, new_id, lambda task, board: change(Entry(task.id, {**task.fields, **held}, task.body), board)
        )

    def _changed(self, board: Board, entry_id: str, change: Callable[[Entry, str], Entry]) -> Changed:
        task = board._update("tasks", entry_id, lambda task: change(task, board.session_id))
        return Changed(task, board_key(board.session_id, task.fields, task.id), board is self)

    def _on_a_live_board(self, task_id: str) -> tuple[Board, str] | None:
        """The board and id of the task another live session holds under ``task_id``, if one does."""
        found: dict[int, tuple[Board, str]] = {}
        items = []
        for board, tasks in self._live_boards():
            for task in tasks:
                if task.fields.get("status") not in CLOSED_STATUSES:
                    item = _as_item(board.session_id, task)
                    found[id(item)] = (board, task.id)
                    items.append(item)
        chosen = ledger.find(items, task_id)
        return found[id(chosen)] if chosen is not None else None

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
        with contextlib.suppress(BlackboardError, OSError):
            update_meta(path, lambda m: m.update({"last_activity": now_iso()}))


def _claim_fields(claim: claims.Claim | None, session_id: str) -> dict[str, str]:
    """A recorded claim of carried work as a task's fields; none when there is none or ``session_id`` holds it."""
    if claim is None or claim.session_id == session_id:
        return {}
    return {"status": "claimed", "claimed_by": claim.by, "claimed_in": claim.session_id, "claimed_at": claim.at}


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
        raise BlackboardError("the text is not valid UTF-8; convert it (e.g. with iconv) and try again") from None
    if len(text) > cap:
        raise BlackboardError(
            f"value is {len(text)} characters, over the cap of {cap}; write it to a file and post the path "
            "(or raise BLACKBOARD_MAX_VALUE_CHARS)"
        )


def locate(settings: Settings, cwd: str, explicit: str | None = None, writing: bool = False) -> Board:
    """The board a command means: ``--session``, the session env vars, else this project's latest.

    It sees the project's other live sessions (``live.Liveness``): their tasks, their claims.
    ``writing``: the command writes to it; a session only another machine sent is then copied
    here first, saying where it came from (``machines.continue_from``), and the command writes there.
    """
    resolver, cap = PathResolver.for_cwd(cwd, settings), settings.max_value_chars
    if explicit:
        return _find(resolver, validate_session_id(explicit), "--session", cap, settings, writing)
    if settings.named_session:
        variable, session_id = settings.named_session
        return _find(resolver, validate_session_id(session_id), variable, cap, settings, writing)
    board = latest_board(resolver, settings.host, cap)
    board.liveness = Liveness(resolver, settings)
    return board


def _find(resolver: PathResolver, session_id: str, source: str, cap: int, settings: Settings, writing: bool) -> Board:
    owner = find_owner(resolver, session_id)
    if owner is None and writing and continue_from(resolver, session_id):
        owner = resolver  # another machine's session: writing to it goes on in a copy here (ADR 30)
    held = copies_of(resolver, session_id) if owner is None and not writing else []
    if held:  # another machine's session, read where sync keeps it
        source = held[0][0]
        return Board(CopyResolver(resolver, source), session_id, f"{source} (another machine's, by sync)", cap)
    if owner is resolver:
        return Board(resolver, session_id, source, cap, Liveness(resolver, settings))
    if owner is not None:  # the agent changed directory into another project
        found_by = f"{source} (found in {owner.project.org}/{owner.project.name})"
        return Board(owner, session_id, found_by, cap, Liveness(owner, settings))
    raise BlackboardError(
        f"session {session_id} (from {source}) has no board under {resolver.root}; "
        "`blackboard sessions --all-projects` lists the sessions"
    )


def latest_board(resolver: PathResolver, host: str, cap: int = DEFAULT_MAX_VALUE_CHARS) -> Board:
    """The board of the project's most recently active session; of this machine's newest when none is active."""
    found_by = "the most recently active session of this project"
    metas = [read_meta_or_none(resolver.meta_path(i)) for i in active_session_ids(resolver)]
    live = [m for m in metas if m]
    if not live:  # none active: the newest of this machine's own (what came by sync is to read, whatever its host)
        live = [e.meta for e in list_sessions(resolver) if e.meta and written_here(e.meta, host)]
    if not live:
        name = f"{resolver.project.org}/{resolver.project.name}"
        raise BlackboardError(f"no session of {name} yet; start Claude Code here or pass --session ID")
    newest = max(live, key=lambda m: (last_active(resolver, m["session_id"]), str(m.get("started") or "")))
    return Board(resolver, newest["session_id"], found_by, cap)
