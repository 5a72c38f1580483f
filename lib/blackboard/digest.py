"""What Claude Code told the hooks about a session, kept for its handoff (docs/adr/0021-session-digest.md).

UserPromptSubmit, PostToolUse and Stop each append one JSON line to the session's
``_digest.jsonl``: the typed prompt, a file an edit tool wrote, the last assistant message.
Text is redacted before it is written and every record is shortened, so the file holds no
secret the handoff would have to hide and grows by a bounded amount per event. It stays on
this machine (sync sends the handoff built from it, not the file).

It is read through a running summary beside it (``_digest-summary.json``): the requests
counted, the first and latest ones, the last message, every file edited, and how far into
the digest that goes. Each read folds in only what was added since, so a session of any
length has exact counts for the cost of its last turn. A summary that does not match its
digest (cut, rewritten, replaced, edited by hand) is set aside and the digest counted again.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import zlib
from collections.abc import Mapping

from .clock import now_iso
from .errors import BlackboardError
from .fsutil import append_line, atomic_write, open_regular, read_json_object, read_up_to
from .redact import redact_prefix

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
MAX_PROMPT_CHARS = 2000
MAX_MESSAGE_CHARS = 4000
MAX_PATH_CHARS = 500
LATEST_PROMPTS = 3
MAX_FILES = 50  # files a handoff names; the others are counted
MAX_NAMED_FILES = 5000  # files the summary names; edits to any other are counted
CATCH_UP_BYTES = 2 * 1024 * 1024  # what one read takes of the digest: about 2 000 turns, 20 to 90 ms
TAIL_BYTES = 512 * 1024  # the latest records, read when more than CATCH_UP_BYTES is new
MAX_LINE_BYTES = 1024 * 1024  # no record comes near it: a longer line is passed over, a part at a time
CHECK_BYTES = 4096  # of the digest's start and of what the summary read last: what tells it is the same file
MIN_RECORD_BYTES = 16  # no record is shorter: '{"kind": "edit"' alone is 15
SUMMARY_VERSION = 1
MAX_SUMMARY_BYTES = 32 * 1024 * 1024  # 5 000 names of 500 characters, each up to four bytes, and the rest


class Digest:
    """A session's requests, last message and edited files, as its ``_digest.jsonl`` (or transcript) tells."""

    __slots__ = (
        "first_prompt",
        "latest_prompts",
        "prompt_count",
        "last_message",
        "edits",
        "unnamed_edits",
        "complete",
        "source",
        "message_source",
    )

    def __init__(
        self,
        first_prompt: str | None = None,
        latest_prompts: list[str] | None = None,
        prompt_count: int = 0,
        last_message: str | None = None,
        edits: dict[str, int] | None = None,
        source: str = "hooks",
    ) -> None:
        self.first_prompt = first_prompt
        self.latest_prompts = latest_prompts or []  # oldest first, the first prompt not among them
        self.prompt_count = prompt_count
        self.last_message = last_message
        self.edits = edits or {}  # path relative to the project -> how many edits, for MAX_NAMED_FILES paths
        self.unnamed_edits = 0  # edits to files past the MAX_NAMED_FILES named
        self.complete = True  # False: part of what it counts was not read yet; its counts are "at least"
        self.source = source  # of the prompts: "hooks", or "transcript" where the hooks said nothing
        self.message_source = source  # of the last message, likewise

    def shown_files(self) -> list[tuple[str, int]]:
        """The ``MAX_FILES`` files edited most, the first edited first among equals."""
        return sorted(self.edits.items(), key=lambda item: -item[1])[:MAX_FILES]

    @property
    def more_files(self) -> int:
        """Files edited beyond those ``shown_files`` names (and beyond them, ``unnamed_edits``)."""
        return max(len(self.edits) - MAX_FILES, 0)

    def take_edits(self, other: Digest) -> None:
        """The edits ``other`` counted, in place of this one's (the transcript has none of its own)."""
        self.edits, self.unnamed_edits = other.edits, other.unnamed_edits
        self.complete = self.complete and other.complete

    def copy(self) -> Digest:
        found = Digest(self.first_prompt, list(self.latest_prompts), self.prompt_count, self.last_message)
        found.edits, found.unnamed_edits, found.complete = dict(self.edits), self.unnamed_edits, self.complete
        found.source, found.message_source = self.source, self.message_source
        return found


def shorten(text: str, limit: int) -> str:
    """``text`` redacted and cut to ``limit`` characters with a mark, never showing half a secret."""
    shown, cut = redact_prefix(storable(text.strip()), limit - 1)
    return shown + "…" if cut else shown


def storable(text: str) -> str:
    """``text`` with U+FFFD for each control character but newline and tab, and each lone surrogate.

    A terminal escape in a prompt never reaches a handoff, and half an emoji (JSON's
    ``\\ud83d``, which Claude Code may send) can still be written as UTF-8.
    """
    return re.sub("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]", "\ufffd", text)


def record_prompt(path: str, prompt: object) -> str | None:
    """UserPromptSubmit: the typed prompt, redacted and shortened; returns what was kept, if anything."""
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    text = shorten(prompt, MAX_PROMPT_CHARS)
    _append(path, {"kind": "prompt", "text": text})
    return text


def record_edit(path: str, tool: object, file_path: object, project_dir: str | None) -> None:
    """PostToolUse of an edit tool: the file it wrote, relative to the project when it is inside."""
    if tool in EDIT_TOOLS and isinstance(file_path, str) and file_path and "\0" not in file_path:
        relative = shorten(relative_path(file_path, project_dir), MAX_PATH_CHARS)
        _append(path, {"kind": "edit", "tool": str(tool), "path": relative})


def record_stop(path: str, message: object) -> None:
    """Stop: the last assistant message, redacted and shortened."""
    if isinstance(message, str) and message.strip():
        _append(path, {"kind": "stop", "text": shorten(message, MAX_MESSAGE_CHARS)})


def relative_path(file_path: str, project_dir: str | None) -> str:
    """``src/app.py`` for a file inside the project; a file elsewhere keeps its absolute path."""
    if project_dir and os.path.isabs(file_path):
        relative = os.path.relpath(os.path.normpath(file_path), project_dir)
        if relative != ".." and not relative.startswith(".." + os.sep):
            return relative
    return file_path


def _append(path: str, record: dict[str, str]) -> None:
    record["at"] = now_iso()
    append_line(path, json.dumps(record, ensure_ascii=False))  # after every turn: no lock, so no filelock


def read_digest(path: str, summary_path: str | None = None) -> Digest:
    """The digest in a session's ``_digest.jsonl``, every record counted.

    With ``summary_path``, what an earlier read counted is taken from the summary there and
    only what was added since is read; the summary is brought up to date. One read takes at
    most ``CATCH_UP_BYTES`` (more is new only when Stop did not run for a thousand turns, or
    the digest is counted again): the rest is left to the next read, and this one shows the
    latest records with counts that are not ``complete``. A link, a FIFO or a folder in the
    digest's place reads as no digest.
    """
    try:
        with open_regular(path) as handle:
            return _read(handle, summary_path)
    except OSError:
        return Digest()


def _read(handle: io.BufferedReader, summary_path: str | None) -> Digest:
    size = os.fstat(handle.fileno()).st_size
    saved = _saved(handle, size, summary_path)
    digest, offset = saved if saved is not None else (Digest(), 0)
    gap = size - offset > CATCH_UP_BYTES
    taken = _whole_lines(handle, offset, CATCH_UP_BYTES - TAIL_BYTES if gap else size - offset)
    fold(digest, parse_lines(taken.decode("utf-8", "replace").split("\n")))
    reached = offset + len(taken)
    if summary_path is not None and (taken or saved is None):
        _save(summary_path, to_summary(digest, reached, _checks(handle, reached)))
    if not gap:
        return digest
    shown = digest.copy()
    handle.seek(size - TAIL_BYTES)
    fold(shown, parse_lines(read_up_to(handle, TAIL_BYTES).decode("utf-8", "replace").split("\n")[1:]))
    shown.complete = False
    return shown


def _whole_lines(handle: io.BufferedReader, offset: int, length: int) -> bytes:
    """Up to ``length`` bytes from ``offset``, to the end of their last whole line (one being written waits).

    A part of a line longer than ``MAX_LINE_BYTES`` (no record is) is passed over whole.
    """
    handle.seek(offset)
    data = read_up_to(handle, length)
    end = data.rfind(b"\n") + 1
    return data[:end] if end or len(data) < MAX_LINE_BYTES else data


def _checks(handle: io.BufferedReader, offset: int) -> list[int]:
    """CRC-32s of the digest's first bytes and of those just before ``offset``: they change if the file was replaced."""
    length = min(offset, CHECK_BYTES)
    handle.seek(0)
    first = handle.read(length)
    handle.seek(offset - length)
    return [zlib.crc32(first), zlib.crc32(handle.read(length))]


def _saved(handle: io.BufferedReader, size: int, summary_path: str | None) -> tuple[Digest, int] | None:
    """What the summary counted, and how far into the digest, when it matches the digest as it is now."""
    if summary_path is None:
        return None
    found = from_summary(read_json_object(summary_path, MAX_SUMMARY_BYTES))
    if found is None or found[1] > size or _checks(handle, found[1]) != found[2]:
        return None  # a digest cut, replaced or rewritten since: counted again
    return found[0], found[1]


def _save(summary_path: str, summary: dict[str, object]) -> None:
    """Write the summary; one that cannot be written costs the next read a longer count, nothing more."""
    with contextlib.suppress(OSError, BlackboardError):
        atomic_write(summary_path, json.dumps(summary, ensure_ascii=False), durable=False)  # counted again if lost


def to_summary(digest: Digest, offset: int, checks: list[int]) -> dict[str, object]:
    """The summary file's one shape: what ``digest`` counted in the digest's first ``offset`` bytes."""
    return {
        "version": SUMMARY_VERSION,
        "offset": offset,
        "checks": checks,
        "count": digest.prompt_count,
        "first": digest.first_prompt,
        "latest": digest.latest_prompts,
        "last": digest.last_message,
        "files": digest.edits,
        "unnamed_edits": digest.unnamed_edits,
    }


def from_summary(data: Mapping[str, object]) -> tuple[Digest, int, list[int]] | None:
    """``(digest, offset, checks)`` of a summary ``to_summary`` wrote; None for anything else (a hand edit)."""
    offset, checks, count, unnamed = (data.get(key) for key in ("offset", "checks", "count", "unnamed_edits"))
    first, latest, last, files = (data.get(key) for key in ("first", "latest", "last", "files"))
    if data.get("version") != SUMMARY_VERSION:
        return None
    if not (isinstance(offset, int) and isinstance(count, int) and isinstance(unnamed, int)):
        return None
    if not (isinstance(checks, list) and isinstance(latest, list) and isinstance(files, dict)):
        return None
    numbers = [offset, count, unnamed, *checks, *files.values()]
    if len(checks) != 2 or not all(_number(n) for n in numbers) or 0 in files.values():
        return None
    texts = [(first, MAX_PROMPT_CHARS), (last, MAX_MESSAGE_CHARS), *((text, MAX_PROMPT_CHARS) for text in latest)]
    if not all(text is None or (isinstance(text, str) and len(text) <= limit) for text, limit in texts):
        return None
    if len(files) > MAX_NAMED_FILES or any(len(path) > MAX_PATH_CHARS for path in files):
        return None
    if None in latest or (first is None and latest) or count < len(latest) + (first is not None):
        return None  # requests the count does not cover
    if count + sum(files.values()) + unnamed > offset // MIN_RECORD_BYTES:
        return None  # more records than that much of the digest can hold
    digest = Digest(first if isinstance(first, str) else None, latest, count, last if isinstance(last, str) else None)
    digest.edits, digest.unnamed_edits = files, unnamed
    return digest, offset, checks


def _number(value: object) -> bool:
    """A count JSON wrote: an int (not a bool), not negative, and one every reader takes exactly."""
    return type(value) is int and 0 <= value < 2**53


def parse_lines(lines: list[str]) -> list[dict[str, str]]:
    """The records among ``lines``; a line that is not a JSON object of strings is skipped."""
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and all(isinstance(v, str) for v in record.values()):
            records.append(record)
    return records


def fold(digest: Digest, records: list[dict[str, str]]) -> None:
    """Add ``records`` (in file order, after what ``digest`` counted) to it: every request and edit counted."""
    for record in records:
        kind, text = record.get("kind"), record.get("text")
        if kind == "prompt" and text:
            digest.prompt_count += 1
            text = _within(text, MAX_PROMPT_CHARS)
            if digest.first_prompt is None:
                digest.first_prompt = text
            else:
                digest.latest_prompts = [*digest.latest_prompts, text][-LATEST_PROMPTS:]
        elif kind == "stop" and text:
            digest.last_message = _within(text, MAX_MESSAGE_CHARS)
        elif kind == "edit" and record.get("path"):
            path = _within(record["path"], MAX_PATH_CHARS)
            if path in digest.edits or len(digest.edits) < MAX_NAMED_FILES:
                digest.edits[path] = digest.edits.get(path, 0) + 1
            else:
                digest.unnamed_edits += 1


def _within(text: str, limit: int) -> str:
    """What the hooks wrote is within ``limit`` already; a line written by hand is shortened as they would."""
    return text if len(text) <= limit else shorten(text, limit)
