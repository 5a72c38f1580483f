"""The markdown entry format shared by the three board files.

Each entry is a ``## {id}`` heading, ``- key: value`` field lines, a blank line, then a free
text body; docs/adr/0007-board-file-format.md describes it. Body lines that would read as a
heading are escaped with a backslash so any text round-trips unchanged.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from .clock import now_iso
from .errors import BlackboardError
from .fsutil import append_text, atomic_write, read_tail, read_text
from .locks import file_lock


class NoEntry(BlackboardError):
    """A board file holds no entry of the id asked for."""


TITLES = {"tasks": "Active tasks", "notes": "Session notes", "context": "Shared context"}
_HEADING = r"## (\S+)[ \t]*"
_FIELD = r"- ([A-Za-z_][A-Za-z0-9_]*): ?(.*)"
_ESCAPED = r"(\\*)## "
KEY = r"[A-Za-z0-9_]{1,64}"
_ID_NUMBER = r"(?m)^## [a-z](\d+)[ \t\r]*$"
NEWLINES_AT_END = "newlines_at_end"  # a field of ours: how many newlines end the body


class Entry:
    """One ``## {id}`` block: its fields and its body."""

    __slots__ = ("id", "fields", "body")

    def __init__(self, entry_id: str, fields: dict[str, str], body: str) -> None:
        self.id = entry_id
        self.fields = fields
        self.body = body

    def __repr__(self) -> str:
        return f"Entry({self.id!r}, {self.fields!r}, {self.body!r})"


def initial_text(kind: str, session_id: str) -> str:
    """The header a board file starts with; it is written with the file's first entry."""
    return (
        f"# {TITLES[kind]} — session {session_id}\n\n"
        "<!-- Entries start at '## id'. Edit freely; keep each heading and its '- key: value' lines. -->\n"
    )


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` line spans of each ``## `` block."""
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    return list(zip(starts, starts[1:] + [len(lines)]))


def _parse_block(lines: list[str], start: int, end: int) -> tuple[Entry | None, str | None]:
    block = lines[start:end]
    if block[0].endswith("\r"):  # saved by an editor with CRLF endings: we never write a CR in a heading
        block = [line[:-1] if line.endswith("\r") else line for line in block]
    heading = re.fullmatch(_HEADING, block[0])
    if not heading:
        return None, f"line {start + 1}: heading {block[0][:60]!r} is not '## id'"
    fields: dict[str, str] = {}
    i = 1
    while i < len(block) and block[i].strip():
        field = re.fullmatch(_FIELD, block[i])
        if not field:
            return None, f"line {start + i + 1}: expected '- key: value' or a blank line after the heading"
        fields[field.group(1)] = field.group(2)
        i += 1
    body = "\n".join(_unescape(line) for line in block[i + 1 :]).rstrip("\n")
    newlines = fields.pop(NEWLINES_AT_END, "")
    body += "\n" * (int(newlines) if newlines.isdigit() and len(newlines) < 6 else 0)
    return Entry(heading.group(1), fields, body), None


def parse(text: str) -> tuple[list[Entry], list[str]]:
    """Entries in file order, and one message per block that could not be read (with its line)."""
    lines = text.split("\n")
    entries: list[Entry] = []
    problems: list[str] = []
    for start, end in _blocks(lines):
        entry, problem = _parse_block(lines, start, end)
        if entry:
            entries.append(entry)
        if problem:
            problems.append(problem)
    return entries, problems


def read_tail_entries(path: str, max_bytes: int) -> tuple[list[Entry], list[str]]:
    """The entries in the last ``max_bytes`` of a file (from the first whole one), and the blocks there unreadable."""
    text, cut = read_tail(path, max_bytes)
    if cut:
        text = text[text.find("\n## ") + 1 :] if "\n## " in text else ""
    return parse(text)


def render(entry_id: str, fields: dict[str, str], body: str) -> str:
    """One entry as markdown, ending with a blank line; ``parse`` gives back exactly this body.

    A body line that would read as a heading is escaped; newlines that end the body, which
    the blank lines between entries would swallow, are counted in a field.
    """
    trimmed = body.rstrip("\n")
    fields = dict(fields)
    if len(trimmed) < len(body):
        fields[NEWLINES_AT_END] = str(len(body) - len(trimmed))
    lines = [f"## {entry_id}"]
    lines += [f"- {key}: {_one_line(value)}" for key, value in fields.items()]
    lines.append("")
    lines += [_escape(line) for line in trimmed.split("\n")]
    return "\n" + "\n".join(lines) + "\n"


def append(path: str, prefix: str, fields: dict[str, str], body: str, header: str = "") -> str:
    """Append a new entry with the next ``{prefix}{n}`` id under the file's lock; returns the id.

    A file that does not exist yet starts with ``header``, in the same single write.
    """
    with file_lock(path):
        entry_id = f"{prefix}{_last_number(path) + 1}"
        _append_new(path, render(entry_id, _stamped(fields), body), header)
    return entry_id


def append_once(
    path: str,
    prefix: str,
    fields: dict[str, str],
    body: str,
    header: str,
    existing: Callable[[list[Entry]], str | None],
) -> str:
    """``append``, unless ``existing`` (given the file's entries, under the same lock) finds it there: its id."""
    with file_lock(path):
        found = existing(parse(read_text(path))[0])
        if found:
            return found
        entry_id = f"{prefix}{_last_number(path) + 1}"
        _append_new(path, render(entry_id, _stamped(fields), body), header)
    return entry_id


def _append_new(path: str, text: str, header: str) -> None:
    append_text(path, text if os.path.exists(path) else header + text)


def put(path: str, key: str, fields: dict[str, str], body: str, replace: bool = False, header: str = "") -> None:
    """Write the entry ``key`` under the file's lock; an existing key is an error unless ``replace``.

    A file that does not exist yet starts with ``header``, in the same single write.
    """
    if not re.fullmatch(KEY, key):
        raise BlackboardError(f"invalid key {key[:70]!r}: use 1-64 letters, digits or '_'")
    new = Entry(key, _stamped(fields), body)
    with file_lock(path):
        lines = read_text(path).split("\n")
        for start, end in _blocks(lines):
            entry, _ = _parse_block(lines, start, end)
            if entry and entry.id == key:
                if not replace:
                    raise BlackboardError(f"key {key!r} already exists; pass --replace to overwrite it")
                atomic_write(path, "\n".join(lines[:start] + _replacement(lines[start:end], new) + lines[end:]))
                return
        _append_new(path, render(key, new.fields, body), header)


def update(path: str, entry_id: str, change: Callable[[Entry], Entry | None]) -> Entry:
    """Under the file's lock, replace one entry's block with ``change(entry)``, or remove it on None.

    Every other byte of the file is kept; ``change`` may raise BlackboardError to refuse.
    """
    with file_lock(path):
        lines = read_text(path).split("\n")
        for start, end in _blocks(lines):
            entry, _ = _parse_block(lines, start, end)
            if entry and entry.id == entry_id:
                new = change(entry)
                block = _replacement(lines[start:end], new)
                atomic_write(path, "\n".join(lines[:start] + block + lines[end:]))
                return new or entry
    raise NoEntry(f"no entry {entry_id!r} in {os.path.basename(path)}; list the ids with `blackboard list`")


def _replacement(old: list[str], new: Entry | None) -> list[str]:
    if new is None:
        return []
    trailing = len(old) - len("\n".join(old).rstrip("\n").split("\n"))
    return render(new.id, new.fields, new.body).strip("\n").split("\n") + [""] * trailing


def _last_number(path: str) -> int:
    """The highest ``## x{n}`` id near the end of the file, reading further back until one is found."""
    size = 256 * 1024
    while True:
        tail, cut = read_tail(path, size)
        numbers = [int(m) for m in re.findall(_ID_NUMBER, tail)]
        if numbers or not cut:
            return max(numbers, default=0)
        size *= 4


def _stamped(fields: dict[str, str]) -> dict[str, str]:
    """Every entry records when it was written (UTC)."""
    return {**fields, "at": fields.get("at") or now_iso()}


def _one_line(value: str) -> str:
    return " ".join(str(value).split())


def _escape(line: str) -> str:
    return "\\" + line if re.match(_ESCAPED, line) else line


def _unescape(line: str) -> str:
    return line[1:] if line.startswith("\\") and re.match(_ESCAPED, line) else line
