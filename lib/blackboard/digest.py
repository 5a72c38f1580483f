"""What Claude Code told the hooks about a session, kept for its handoff (docs/adr/0021-session-digest.md).

UserPromptSubmit, PostToolUse and Stop each append one JSON line to the session's
``_digest.jsonl``: the typed prompt, a file an edit tool wrote, the last assistant message.
Text is redacted before it is written and every record is shortened, so the file holds no
secret the handoff would have to hide and grows by a bounded amount per event. It stays on
this machine (sync sends the handoff built from it, not the file).
"""

from __future__ import annotations

import json
import os
import re

from .clock import now_iso
from .fsutil import append_line, read_bounded, read_tail
from .redact import redact_prefix

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
MAX_PROMPT_CHARS = 2000
MAX_MESSAGE_CHARS = 4000
MAX_PATH_CHARS = 500
HEAD_BYTES = 64 * 1024  # where the first prompt is
TAIL_BYTES = 512 * 1024  # the latest prompts, edits and the last message
LATEST_PROMPTS = 3
MAX_FILES = 50


class Digest:
    """A session's requests, last message and edited files, as its ``_digest.jsonl`` (or transcript) tells."""

    __slots__ = (
        "first_prompt",
        "latest_prompts",
        "prompt_count",
        "last_message",
        "edits",
        "more_files",
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
        self.edits = edits or {}  # path relative to the project -> how many edits
        self.more_files = 0  # edited files beyond MAX_FILES, the least edited
        self.source = source  # of the prompts: "hooks", or "transcript" where the hooks said nothing
        self.message_source = source  # of the last message, likewise


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


def read_digest(path: str) -> Digest:
    """The digest in a session's ``_digest.jsonl``: whole when small, else the first prompt and the tail.

    A link, a FIFO or a folder in its place reads as no digest.
    """
    try:
        tail, cut = read_tail(path, TAIL_BYTES)
        head = read_bounded(path, HEAD_BYTES) if cut else None
    except OSError:
        return Digest()
    records = parse_lines(tail.split("\n"))
    if not cut or not head:
        return summarize(records)
    first = [r for r in parse_lines(head.decode("utf-8", "replace").split("\n")[:-1]) if r.get("kind") == "prompt"]
    return summarize(first[:1] + records, cut=True)


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


def summarize(records: list[dict[str, str]], cut: bool = False) -> Digest:
    """A ``Digest`` from records in file order; ``cut``: records between the first and the tail were skipped."""
    prompts = [r["text"] for r in records if r.get("kind") == "prompt" and r.get("text")]
    stops = [r["text"] for r in records if r.get("kind") == "stop" and r.get("text")]
    edits: dict[str, int] = {}
    for record in records:
        if record.get("kind") == "edit" and record.get("path"):
            edits[record["path"]] = edits.get(record["path"], 0) + 1
    ranked = dict(sorted(edits.items(), key=lambda item: -item[1])[:MAX_FILES])
    first = prompts[0] if prompts else None
    latest = prompts[1:][-LATEST_PROMPTS:]
    count = len(prompts) + (1 if cut else 0)  # at least one more than seen when the middle was skipped
    digest = Digest(first, latest, count, stops[-1] if stops else None, ranked)
    digest.more_files = len(edits) - len(ranked)
    return digest
