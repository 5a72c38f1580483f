"""A session's board as people and models read it: the sections of a handoff, ``show`` and the context.

Everything here is bounded: files are read from their tail, items and sections are capped,
and secrets are redacted before text is cut, so no token is left half-shown.
"""

from __future__ import annotations

import re

from . import entries
from .claude_tasks import MAX_TASK_BYTES, MAX_TASKS, MAX_TOTAL_BYTES
from .entries import Entry
from .ids import is_session_id
from .ledger import CLOSED_STATUSES, MAX_BYTES, MAX_SHOWN, Item, Ledger
from .meta import read_meta_or_none
from .paths import BOARD_FILES, PathResolver
from .redact import redact, redact_prefix
from .registry import active_session_ids, remote_active

MAX_ITEM_CHARS = 1200
MAX_ITEMS = {"open": 100, "done": 50, "context": 50, "notes": 12, "active": 10}
TAIL_BYTES = {"tasks": 256 * 1024, "context": 128 * 1024, "notes": 96 * 1024}
TITLES = {
    "open": "Open tasks",
    "done": "Tasks closed this session",
    "context": "Shared context",
    "notes": "Notes, newest first",
}
ACTIVE_HEADING = "## Sessions still active in this project"
_NOTE_NUMBER = r"n(\d+)"


class BoardState:
    """What a session's board holds, as its file tails show it."""

    __slots__ = ("open", "done", "context", "notes", "note_count", "problems")

    def __init__(
        self,
        open_tasks: list[Entry],
        done_tasks: list[Entry],
        context: list[Entry],
        notes: list[Entry],
        note_count: int,
        problems: list[str] | None = None,
    ) -> None:
        self.open = open_tasks
        self.done = done_tasks
        self.context = context
        self.notes = notes  # the most recent ones
        self.note_count = note_count
        self.problems = problems or []  # "active-tasks.md line 12: …" for each block that could not be read

    def section(self, name: str) -> list[Entry]:
        """The entries of ``open``, ``done``, ``context`` or ``notes``."""
        return {"open": self.open, "done": self.done, "context": self.context, "notes": self.notes}[name]


def board_state(resolver: PathResolver, session_id: str) -> BoardState:
    """Open and done tasks, shared context and recent notes of a session, read from file tails."""
    found = {
        kind: entries.read_tail_entries(resolver.board_file(session_id, kind), TAIL_BYTES[kind]) for kind in TAIL_BYTES
    }
    (tasks, _), (context, _), (notes, _) = found["tasks"], found["context"], found["notes"]
    problems = [
        f"{BOARD_FILES[kind]} {problem}" for kind, (_, kind_problems) in found.items() for problem in kind_problems
    ]
    numbers = (re.fullmatch(_NOTE_NUMBER, note.id) for note in notes)
    last_number = max((int(m.group(1)) for m in numbers if m), default=0)
    open_tasks, done_tasks = split_tasks(tasks)
    recent = notes[-MAX_ITEMS["notes"] :]
    return BoardState(open_tasks, done_tasks, context, recent, max(last_number, len(notes)), problems)


def split_tasks(tasks: list[Entry]) -> tuple[list[Entry], list[Entry]]:
    """``(open or claimed, done or dropped)``."""
    closed = [t for t in tasks if t.fields.get("status") in CLOSED_STATUSES]
    return [t for t in tasks if t.fields.get("status") not in CLOSED_STATUSES], closed


def render_sections(state: BoardState, sections: tuple[str, ...]) -> str:
    """The named body sections (``open``, ``done``, ``context``, ``notes``) as markdown, bounded."""
    render = {"open": _task_line, "done": _task_line, "context": _context_line, "notes": _note_line}
    parts = []
    for name in sections:
        items = state.section(name)
        shown = items[::-1][: MAX_ITEMS[name]] if name == "notes" else items[: MAX_ITEMS[name]]
        lines = [render[name](item) for item in shown]
        if len(items) > len(shown):
            lines.append(f"- … and {len(items) - len(shown)} more (`blackboard show` lists them all)")
        parts.append(f"## {TITLES[name]}\n\n" + ("\n".join(lines) if lines else "_none_") + "\n")
    return "\n".join(parts)


def _task_line(task: Entry) -> str:
    who, status = task.fields.get("claimed_by"), task.fields.get("status")
    if status in CLOSED_STATUSES:
        reason = task.fields.get("drop_reason")
        claim = f" — dropped: {inline(reason)}" if status == "dropped" else " — done"
    else:
        claim = f" — claimed by {inline(who, 64)}" if who else " — unclaimed"
    origin = task.fields.get("origin")
    carried = f" (carried: {inline(origin, 160)})" if origin else ""
    return f"- **{task.id}** {_item(task.body)}{claim}{carried}"


def _context_line(entry: Entry) -> str:
    return f"- **{inline(entry.id, 1000)}** (by {inline(entry.fields.get('author', '?'), 64)}): {_item(entry.body)}"


def _note_line(note: Entry) -> str:
    at, by = inline(note.fields.get("at", "?"), 64), inline(note.fields.get("author", "?"), 64)
    return f"- {at} · {by}: {_item(note.body)}"


def bullet(text: str) -> str:
    """One item of a handoff's list: ``- text``, its further lines indented (``continued``)."""
    return "- " + continued(text.strip())


def continued(text: str) -> str:
    """``text`` as one list item: every line after the first indented, and escaped so none starts a block.

    A line break other than LF or CRLF (a lone CR, U+2028…) and every control character a terminal
    acts on (``printable``) become U+FFFD, and a line that
    would open a heading, a list item, a quote or a fence gets a backslash, so no text can
    pose as the handoff's own however a reader splits lines.
    """
    text = re.sub("[\u2028\u2029]", "\ufffd", printable(text.replace("\r\n", "\n")))
    first, *rest = text.split("\n")
    return "\n".join([first] + ["  " + _inert(line.strip()) for line in rest])


def _inert(line: str) -> str:
    return "\\" + line if re.match(r"(?:[#>*+=|`~-]|\d+[.)])", line) else line


def _item(text: str) -> str:
    """One entry's text, secrets redacted before it is cut so no token is left half-shown."""
    text = text.strip()
    shown, cut = redact_prefix(text, MAX_ITEM_CHARS)
    if cut:
        shown += f" … [{len(text) - len(shown)} characters cut]"
    return continued(shown)


def unreadable_section(state: BoardState) -> str:
    """A warning naming the blocks that could not be read, so nothing is dropped without a word."""
    if not state.problems:
        return ""
    shown = [f"- {_item(problem)}" for problem in state.problems[: MAX_ITEMS["open"]]]
    more = len(state.problems) - len(shown)
    tail = [f"- … and {more} more"] if more else []
    lines = "\n".join(shown + tail)
    return f"## Unreadable blocks\n\nThese could not be read and are left out; fix them by hand:\n\n{lines}\n\n"


def active_sessions_section(resolver: PathResolver, exclude: str) -> str:
    """The project's other active sessions, from the active markers."""
    others = [i for i in active_session_ids(resolver) if i != exclude]
    lines = []
    for session_id in others[: MAX_ITEMS["active"]]:
        meta = read_meta_or_none(resolver.meta_path(session_id)) or {}
        started, branch = inline(meta.get("started", "?"), 32), inline(meta.get("git_branch") or "?", 80)
        lines.append(f"- {session_id} (started {started}, branch {branch})")
    if len(others) > len(lines):
        lines.append(f"- … and {len(others) - len(lines)} more (`blackboard sessions --status active`)")
    lines += remote_active_lines(resolver)
    return f"{ACTIVE_HEADING}\n\n" + ("\n".join(lines) or "_none_") + "\n"


def remote_active_lines(resolver: PathResolver) -> list[str]:
    """Other machines' active sessions as sync last fetched them; none when sync is off."""
    lines = []
    for record in remote_active(resolver)[: MAX_ITEMS["active"]]:
        where, since = inline(record["host"], 64) or "?", inline(record["since"], 64) or "?"
        lines.append(f"- {_inline_id(record['session_id'])} active on host {where} since {since}")
    return lines


def _inline_id(value: str) -> str:
    return value if is_session_id(value) else "?"


def inline(value: object, limit: int = 120) -> str:
    """A value from a file, from git or from another machine, made safe inside one of the plugin's own lines.

    Line breaks and other unprintable characters become spaces, so nothing can start a line
    of its own; long values are cut with a mark.
    """
    text = " ".join("".join(c if c.isprintable() else " " for c in str(value)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(value: object, limit: int = 120) -> str:
    """Another session's words (a request, a branch, a file name) as data inside the plugin's sentence.

    Redacted whole first, then cut, then written as a JSON string is: a quotation mark, a
    backslash, a line break, a control or format character (bidi overrides) and any space but
    the plain one become escapes, so nothing in it can close the quotation, start a line, or
    look like the plugin's words: ``fix\u2003NOTE: "x"`` -> ``"fix\\u2003NOTE: \\"x\\""``.
    """
    text = redact(str(value))
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    if text.isprintable():  # nearly always: only a quotation mark and a backslash to escape
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return '"' + "".join(_escaped(c) for c in text) + '"'


def _escaped(char: str) -> str:
    if char in ('"', "\\"):
        return "\\" + char
    if char == " " or char.isprintable():  # everything but "Other" and "Separator" characters
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str) -> str:
    """Text from a board or another machine, safe to print on a terminal, line breaks and tabs kept.

    Every other control character becomes U+FFFD, so no escape sequence in a note can set
    the terminal's title, move its cursor, clear it or overwrite a line (a carriage return).
    """
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", "\ufffd", text)


OPEN_WORK = "Open work"


def open_section(ledger: Ledger, session_id: str) -> str:
    """A handoff's open work, newest first, each item with where it came from; past ``MAX_SHOWN``, the older counted.

    The count comes first, so a context that has to leave items out keeps it (``context.fill``).
    """
    shown = ledger.open[:MAX_SHOWN]
    lines = [bullet(open_line(item, session_id)) for item in shown]
    unread = [unread_line(origin, count) for origin, count in ledger.unread_files.items()]
    return section(OPEN_WORK, hidden_lines(len(ledger.open) - len(shown), ledger.cut) + unread + lines)


def unread_line(origin: str, count: int) -> str:
    """What a handoff says of Claude Code task files a bound left unread (``claude_tasks``): how many, whose."""
    files = f"{count} task file{'s' if count > 1 else ''}"
    bounds = f"{MAX_TASKS} files, {MAX_TOTAL_BYTES >> 20} MiB in all, {MAX_TASK_BYTES >> 10} KiB each"
    return bullet(
        f"{files} of Claude Code's task list in session {origin[:8]} left unread, past what a handoff reads "
        f"({bounds}): no handoff carries what they hold; that session's own list in Claude Code still has them"
    )


def hidden_lines(older: int, cut: int) -> list[str]:
    """What a handoff says of the open items it does not show: ``older`` listed elsewhere, ``cut`` left out."""
    lines = []
    if older:
        lines.append(
            bullet(
                f"{older} older open item{'s' if older > 1 else ''} not shown here, the newest {MAX_SHOWN} follow: "
                "`blackboard task list` lists every one, and `blackboard task done|drop KEY` closes it"
            )
        )
    if cut:
        lines.append(
            bullet(
                f"{cut} older open item{'s' if cut > 1 else ''} left out, past the {MAX_BYTES >> 10} KiB of open "
                "work a handoff carries: no handoff or `task list` names them any more"
            )
        )
    return lines


def section(title: str, lines: list[str]) -> str:
    """A handoff's ``## title`` section of list items, ``_none_`` when it has none."""
    return f"## {title}\n\n" + ("\n".join(lines) if lines else "_none_") + "\n\n"


def open_line(item: Item, session_id: str) -> str:
    """``**t2** write the parser — claimed by explorer (from the board)``; a carried item by its short key."""
    own = item.origin == session_id
    name = item.local_id if own else item.short_key
    claim = f" — claimed by {inline(item.by, 64)}" if item.by else ""
    kind = "Claude Code's task list" if item.local_id.startswith("cc") else "the board"
    where = f"from {kind}" if own else f"carried from session {item.origin[:8]}, {kind}"
    return f"**{name}** {inline(item.text, 240)}{claim} ({where})"


def replace_section(body: str, title: str, section: str) -> str:
    """``body`` with its ``## title`` section (up to the next ``## ``) replaced by ``section``; added when missing."""
    start = body.find(f"\n## {title}\n")
    if start < 0:
        return body.rstrip("\n") + "\n\n" + section
    end = body.find("\n## ", start + 1)
    return body[: start + 1] + section + (body[end + 1 :] if end >= 0 else "")


def size_text(size: int) -> str:
    """``512 B``, ``1.5 KiB``, ``3.2 MiB``, ``1.1 GiB``."""
    if size < 1024:
        return f"{size} B"
    amount = size / 1024
    for unit in ("KiB", "MiB"):
        if amount < 1024:
            return f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} GiB"
