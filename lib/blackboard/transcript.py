"""A session's requests and last message read from Claude Code's transcript, where no hook said them.

The transcript (``transcript_path``, JSONL) is Claude Code's internal format and changes
between versions, so it is only a fallback (docs/adr/0021-session-digest.md): for a session
whose hooks recorded nothing, such as one that started before the plugin was installed.
It is read defensively: only a regular file under Claude Code's own folder, never through a
link, its head and tail only; a line that is not JSON, or a record of a type not known here,
is skipped.
"""

from __future__ import annotations

import json
import os
import stat

from .digest import LATEST_PROMPTS, MAX_MESSAGE_CHARS, MAX_PROMPT_CHARS, Digest, shorten
from .fsutil import read_bounded, read_tail

HEAD_BYTES = 256 * 1024
TAIL_BYTES = 1024 * 1024


def read_transcript(path: str) -> Digest:
    """The prompts and last assistant message of the transcript at ``path`` (checked by the caller)."""
    try:
        head = read_bounded(path, HEAD_BYTES)
        tail, cut = read_tail(path, TAIL_BYTES)
    except OSError:
        return Digest(source="transcript")
    if not head:
        return Digest(source="transcript")
    head_lines = head.decode("utf-8", "replace").split("\n")
    lines = head_lines[:-1] + tail.split("\n") if cut else tail.split("\n")
    found = summarize(lines)
    found.complete = not cut or _size(path) <= HEAD_BYTES + TAIL_BYTES  # else its middle was not read: "at least"
    return found


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return HEAD_BYTES + TAIL_BYTES + 1


def summarize(lines: list[str]) -> Digest:
    """The digest of transcript lines in file order (a line may appear twice where head and tail meet)."""
    prompts: list[str] = []
    last_message = None
    seen: set[str] = set()
    for line in lines:
        record = _record(line)
        uuid = record.get("uuid") if record is not None else None
        if record is None or (isinstance(uuid, str) and uuid in seen):
            continue
        if isinstance(uuid, str):
            seen.add(uuid)
        prompt, message = typed_prompt(record), assistant_text(record)
        if prompt:
            prompts.append(prompt)
        if message:
            last_message = message
    # Redaction reads each text whole: only the texts kept are redacted and shortened.
    first = shorten(prompts[0], MAX_PROMPT_CHARS) if prompts else None
    latest = [shorten(prompt, MAX_PROMPT_CHARS) for prompt in prompts[1:][-LATEST_PROMPTS:]]
    message = shorten(last_message, MAX_MESSAGE_CHARS) if last_message else None
    return Digest(first, latest, len(prompts), message, source="transcript")


def _record(line: str) -> dict | None:
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("message"), dict) else None


def typed_prompt(record: dict) -> str | None:
    """What a person typed: a ``user`` record of the main thread whose content is text, not a tool result."""
    if record.get("type") != "user" or record.get("isSidechain") or record.get("isMeta"):
        return None
    content = record["message"].get("content")
    if isinstance(content, str):
        return content if content.strip() and not content.lstrip().startswith("<") else None
    return None


def assistant_text(record: dict) -> str | None:
    """The text an ``assistant`` record of the main thread says, if any."""
    if record.get("type") != "assistant" or record.get("isSidechain"):
        return None
    content = record["message"].get("content")
    blocks = content if isinstance(content, list) else []
    texts = [
        b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    text = "\n".join(t for t in texts if t.strip())
    return text or None


def inside_claude_dir(config_dir: str, path: object) -> bool:
    """Whether ``path`` is below ``{config dir}/projects``, reached through no link (the config dir may be one)."""
    if (
        not config_dir
        or not isinstance(path, str)
        or not os.path.isabs(path)
        or "\0" in path
        or ".." in path.split(os.sep)
    ):
        return False  # "link/.." would be checked as one folder up but read through the link
    base = os.path.join(os.path.abspath(config_dir), "projects")
    relative = os.path.relpath(os.path.normpath(path), base)
    if relative.startswith("..") or os.path.isabs(relative):
        return False
    current = base
    for part in [".", *relative.split(os.sep)]:
        current = os.path.normpath(os.path.join(current, part))
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True
