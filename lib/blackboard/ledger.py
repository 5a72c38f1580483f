"""Open work that outlives its session: every open task stays in the project's handoffs until done or dropped.

An item's key names where it was born: ``{session id}/t3`` for a board task,
``{session id}/cc2`` for a task of Claude Code's own list. Each handoff carries the open
items (``open_work``) and the keys closed lately (``closed_work``) in its front matter; a
session's handoff merges its own board and task list into the project's latest handoff, and
publishing merges again under the latest handoff's lock, so idle sessions, ``/clear``,
parallel sessions and handoffs that arrive by sync all keep what is open and forget what
any of them closed (docs/adr/0022-open-work-ledger.md). Pure functions: data in, data out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .ids import SESSION_ID, is_session_id

MAX_SHOWN = 100  # open items a handoff's body shows, the newest; the older are counted there
MAX_BYTES = 1024 * 1024  # of open work in a handoff's front matter: past it, the oldest are counted, not kept
MAX_CLOSED = 500
MAX_CUT = 1_000_000
MAX_TEXT = 200
MAX_UNREAD_SESSIONS = 20  # sessions whose Claude Code task files a handoff counts as unread, the newest
LOCAL_ID = r"(?:t|cc)[0-9]{1,9}"
KEY = rf"({SESSION_ID})/({LOCAL_ID})"
CLOSED_STATUSES = ("done", "dropped")
KINDS = ("t", "cc")  # a board task, a task of Claude Code's own list  # a board task in either has left the open work


class Item:
    """One piece of open work: its key, what it says, ``open`` or ``claimed`` (and by whom)."""

    __slots__ = ("key", "text", "status", "by")

    def __init__(self, key: str, text: str, status: str = "open", by: str = "") -> None:
        self.key = key
        self.text = text
        self.status = status
        self.by = by

    @property
    def origin(self) -> str:
        """The session the item was born in."""
        return self.key.rpartition("/")[0]

    @property
    def local_id(self) -> str:
        """Its id there: ``t3`` (a board task) or ``cc2`` (Claude Code's task 2)."""
        return self.key.rpartition("/")[2]

    @property
    def kind(self) -> str:
        """``t`` for a board task, ``cc`` for one of Claude Code's list."""
        return self.local_id.rstrip("0123456789")

    @property
    def short_key(self) -> str:
        """``5f1c8a2e/t3``: what a person types to act on it."""
        return f"{self.origin[:8]}/{self.local_id}"

    def to_json(self) -> dict[str, str]:
        data = {"key": self.key, "text": self.text, "status": self.status}
        return {**data, "by": self.by} if self.by else data

    def __repr__(self) -> str:
        return f"Item({self.key!r}, {self.text!r}, {self.status!r}, {self.by!r})"


def is_key(value: object) -> bool:
    """``{session id}/t3`` or ``{session id}/cc2``."""
    if not isinstance(value, str):
        return False
    match = re.fullmatch(KEY, value)
    return match is not None and is_session_id(match.group(1))


def board_key(session_id: str, fields: Mapping[str, str], task_id: str) -> str:
    """The key of a board task: its ``origin`` when it was carried here, else ``{session}/{id}``."""
    origin = fields.get("origin", "")
    return origin if is_key(origin) else f"{session_id}/{task_id}"


def clip(text: str) -> str:
    """One line, at most ``MAX_TEXT`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= MAX_TEXT else line[: MAX_TEXT - 1] + "…"


def items_from(value: object) -> list[Item]:
    """The items of a handoff's ``open_work``; anything malformed (a hand edit, another machine) is skipped."""
    found: list[Item] = []
    seen: set[str] = set()
    for raw in value if isinstance(value, list) else []:
        if not isinstance(raw, dict) or not is_key(raw.get("key")) or raw["key"] in seen:
            continue
        text, status, by = raw.get("text"), raw.get("status"), raw.get("by")
        if not isinstance(text, str) or not text.strip():
            continue
        seen.add(raw["key"])
        claimed = status == "claimed"
        found.append(
            Item(
                raw["key"],
                clip(text),
                "claimed" if claimed else "open",
                clip(by) if claimed and isinstance(by, str) else "",
            )
        )
    return found


def keys_from(value: object) -> list[str]:
    """The keys of a handoff's ``closed_work``; anything else is skipped."""
    return [key for key in value if is_key(key)] if isinstance(value, list) else []


UNREAD_FILES = "claude_tasks_unread"  # ["{session id}:{count}", …]: scalars, which any version's reader takes


def unread_files_from(value: object) -> dict[str, int]:
    """A handoff's ``claude_tasks_unread``: session -> task files left unread; anything malformed is skipped."""
    found: dict[str, int] = {}
    for raw in value if isinstance(value, list) else []:
        match = re.fullmatch(rf"({SESSION_ID}):([1-9][0-9]{{0,8}})", raw) if isinstance(raw, str) else None
        if match and is_session_id(match.group(1)) and len(found) < MAX_UNREAD_SESSIONS:
            found.setdefault(match.group(1), int(match.group(2)))
    return found


class Ledger:
    """The open items and recently closed keys a handoff carries.

    ``speaks_for`` is the session whose own items the ledger lists completely (its whole
    board and task list were read): what an older ledger says of that session's items is stale.
    """

    __slots__ = ("open", "closed", "cut", "speaks_for", "unread", "unread_files")

    def __init__(
        self,
        open_items: list[Item],
        closed: list[str],
        cut: int = 0,
        speaks_for: str = "",
        unread: tuple[str, ...] = (),
        unread_files: dict[str, int] | None = None,
    ) -> None:
        self.open = open_items
        self.closed = closed  # newest first
        self.cut = cut  # the oldest open items left out past MAX_BYTES, said in the handoff
        self.speaks_for = speaks_for
        # kinds of its own items it did not read whole (``cc``: Claude Code's list): it speaks for none of those
        self.unread = unread
        # session -> task files of its Claude Code list a bound left unread (``claude_tasks``): said in the handoff
        self.unread_files = unread_files or {}

    @property
    def claimed(self) -> int:
        """How many open items someone has claimed."""
        return sum(1 for item in self.open if item.status == "claimed")

    @classmethod
    def from_fields(cls, fields: Mapping[str, object]) -> Ledger:
        """The ledger in a handoff's front matter."""
        cut = fields.get("open_work_cut")
        cut = min(cut, MAX_CUT) if type(cut) is int and cut > 0 else 0
        session_id = fields.get("session_id")
        whole = fields.get("open_work_partial") is not True and isinstance(session_id, str) and "open_work" in fields
        speaks_for = session_id if whole and isinstance(session_id, str) else ""
        unread = fields.get("open_work_unread")
        kinds = tuple(kind for kind in KINDS if isinstance(unread, list) and kind in unread)
        open_items, closed = items_from(fields.get("open_work")), keys_from(fields.get("closed_work"))
        return cls(open_items, closed, cut, speaks_for, kinds, unread_files_from(fields.get(UNREAD_FILES)))

    def to_fields(self) -> dict[str, object]:
        fields: dict[str, object] = {"open_work": [item.to_json() for item in self.open], "closed_work": self.closed}
        if self.cut:
            fields["open_work_cut"] = self.cut
        if not self.speaks_for:
            fields["open_work_partial"] = True
        if self.unread:
            fields["open_work_unread"] = list(self.unread)
        counts = [f"{session_id}:{count}" for session_id, count in self.unread_files.items() if count > 0]
        if counts:
            fields[UNREAD_FILES] = counts
        return fields


def merge(newer: Ledger, older: Ledger) -> Ledger:
    """Both ledgers' open items (the newer's word and items first: newest first) less every key either closed.

    Every open item is kept, however many: only a handoff's front matter bounds them
    (``handoff.fit_open_work``), and what it leaves out is counted in ``cut``, once.

    When the newer one speaks for its session, the older's word on that session's items is
    stale: an item of it that the newer no longer lists open is closed (a task Claude Code
    deleted, a board task removed by hand), and so leaves every later handoff too.
    """
    own = newer.speaks_for
    listed = {item.key for item in newer.open}
    stale = [
        item.key
        for item in older.open
        if own and item.origin == own and item.key not in listed and item.kind not in newer.unread
    ]
    closed = _unique(newer.closed + stale + older.closed)
    gone = set(closed)
    items: dict[str, Item] = {}
    for item in newer.open + older.open:
        if item.key not in gone and item.key not in items:
            items[item.key] = item
    cut = min(max(newer.cut, older.cut), MAX_CUT)
    unread_files = _unread_files(newer, older)
    return Ledger(list(items.values()), closed[:MAX_CLOSED], cut, newer.speaks_for, newer.unread, unread_files)


def _unread_files(newer: Ledger, older: Ledger) -> dict[str, int]:
    """Each session's count of Claude Code task files left unread, the newer's word first.

    A session that read its whole list since says nothing is left unread: the older count of it is stale.
    """
    read_whole = newer.speaks_for if "cc" not in newer.unread else ""
    counts = dict(newer.unread_files)
    for session_id, count in older.unread_files.items():
        if session_id != read_whole:
            counts.setdefault(session_id, count)
    return dict(list(counts.items())[:MAX_UNREAD_SESSIONS])


def _unique(keys: list[str]) -> list[str]:
    return list(dict.fromkeys(keys))


def find(items: list[Item], wanted: str) -> Item | None:
    """The item ``wanted`` names: its whole key, or its short key (``5f1c8a2e/t3``) when only one matches."""
    exact = [item for item in items if item.key == wanted]
    if exact:
        return exact[0]
    origin, _, local = wanted.rpartition("/")
    matches = [item for item in items if item.local_id == local and origin and item.origin.startswith(origin)]
    return matches[0] if len(matches) == 1 else None
