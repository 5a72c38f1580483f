"""The markdown entry format shared by the three board files.

Each entry is a ``## {id}`` heading, ``- key: value`` field lines, a blank line, then a free
text body; docs/adr/0007-board-file-format.md describes it. Body lines that would read as a
heading are escaped with a backslash so any text round-trips unchanged.
"""

import re
from typing import Dict, List, NamedTuple, Tuple

from .clock import now_iso
from .errors import BlackboardError
from .fsutil import append_text, file_lock, read_tail, read_text

BOARD_FILES = {
    "tasks": ("active-tasks.md", "Active tasks"),
    "notes": ("session-notes.md", "Session notes"),
    "context": ("shared-context.md", "Shared context"),
}
_HEADING = re.compile(r"^## (\S+)[ \t]*$")
_FIELD = re.compile(r"^- ([A-Za-z_][A-Za-z0-9_]*): ?(.*)$")
_ESCAPED = re.compile(r"^(\\*)## ")
KEY_PATTERN = re.compile(r"[A-Za-z0-9_]{1,64}")
_ID_NUMBER = re.compile(r"^## [a-z](\d+)[ \t]*$", re.MULTILINE)


class Entry(NamedTuple):
    id: str
    fields: Dict[str, str]
    body: str
    line: int


def initial_text(kind: str, session_id: str) -> str:
    """The header a new board file starts with."""
    title = BOARD_FILES[kind][1]
    return (
        f"# {title} — session {session_id}\n\n"
        "<!-- Entries start at '## id'. Edit freely; keep each heading and its '- key: value' lines. -->\n"
    )


def parse(text: str) -> Tuple[List[Entry], List[str]]:
    """Entries in file order, and one message per block that could not be read (with its line)."""
    entries: List[Entry] = []
    problems: List[str] = []
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        heading = _HEADING.match(lines[start])
        if not heading:
            problems.append(f"line {start + 1}: heading {lines[start][:60]!r} is not '## id'")
            continue
        fields: Dict[str, str] = {}
        i = start + 1
        while i < end and lines[i].strip():
            field = _FIELD.match(lines[i])
            if not field:
                problems.append(f"line {i + 1}: expected '- key: value' or a blank line")
                break
            fields[field.group(1)] = field.group(2)
            i += 1
        body = "\n".join(_unescape(line) for line in lines[i + 1 : end]).rstrip("\n")
        entries.append(Entry(heading.group(1), fields, body, start + 1))
    return entries, problems


def render(entry_id: str, fields: Dict[str, str], body: str) -> str:
    """One entry as markdown, ending with a blank line."""
    lines = [f"## {entry_id}"]
    lines += [f"- {key}: {_one_line(value)}" for key, value in fields.items()]
    lines.append("")
    lines += [_escape(line) for line in body.rstrip("\n").split("\n")]
    return "\n" + "\n".join(lines) + "\n"


def append(path: str, prefix: str, fields: Dict[str, str], body: str) -> str:
    """Append a new entry with the next ``{prefix}{n}`` id under the file's lock; returns the id."""
    with file_lock(path):
        tail, _ = read_tail(path, 256 * 1024)
        numbers = [int(m) for m in _ID_NUMBER.findall(tail)]
        entry_id = f"{prefix}{max(numbers, default=0) + 1}"
        append_text(path, render(entry_id, _stamped(fields), body))
    return entry_id


def append_keyed(path: str, key: str, fields: Dict[str, str], body: str) -> None:
    """Append an entry under ``key``; BlackboardError if the file already holds that key."""
    if not KEY_PATTERN.fullmatch(key):
        raise BlackboardError(f"invalid key {key[:70]!r}: use 1-64 letters, digits or '_'")
    with file_lock(path):
        if any(entry.id == key for entry in parse(read_text(path))[0]):
            raise BlackboardError(f"key {key!r} already exists; pass --replace to overwrite it")
        append_text(path, render(key, _stamped(fields), body))


def _stamped(fields: Dict[str, str]) -> Dict[str, str]:
    """Every entry records when it was written (UTC)."""
    return {**fields, "at": fields.get("at") or now_iso()}


def _one_line(value: str) -> str:
    return " ".join(str(value).split())


def _escape(line: str) -> str:
    return "\\" + line if _ESCAPED.match(line) else line


def _unescape(line: str) -> str:
    return line[1:] if line.startswith("\\") and _ESCAPED.match(line) else line
