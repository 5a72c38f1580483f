"""Claude Code's hook events: read stdin, run the event's module of ``events``, print its JSON, exit 0.

``hooks/launch.py`` starts it. Only the module of the event that runs is imported: SessionStart
runs on every session start and Stop after every turn (their budgets are in bench/, ADR 27).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

from .errors import BlackboardError
from .events import log_failure, say
from .settings import Settings

STARTED = time.monotonic()  # the hook's start: SessionStart's fetch is bounded from here
EVENTS = (
    "session-start",
    "session-end",
    "stop",
    "pre-compact",
    "pre-tool-use",
    "user-prompt-submit",
    "post-tool-use",
    "sync",  # a detached round
)
MAX_STDIN = 1 << 20
EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")  # PreToolUse of these asks whose file it is


def read_payload(raw: bytes) -> tuple[dict[str, object], str | None]:
    """The hook's stdin JSON object (read up to ``MAX_STDIN + 1`` bytes), and what was wrong with it.

    UTF-8 (with or without a BOM) and UTF-16 with a BOM are read. Anything else (invalid, not
    an object, over ``MAX_STDIN``) gives ``{}`` and a problem to say: the session is then named
    by the environment, as with an empty stdin, but never without a word.
    """
    utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    try:
        # "utf-8-sig" would load one more codec module on every hook: the BOM is dropped here
        text = raw.decode("utf-16") if utf16 else raw.decode("utf-8").removeprefix("\ufeff")
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        data = None
    if not isinstance(data, dict) or len(raw) > MAX_STDIN:
        return {}, f"stdin is not the JSON object Claude Code sends ({len(raw)} bytes); it was ignored"
    return data, None


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    """Do what ``event`` means, in its module of ``events``; returns the JSON to print, if any."""
    if event == "session-start":
        from .events import session_start

        return session_start.run(event, payload, settings)
    if event in ("stop", "pre-compact"):
        from .events import checkpoint

        checkpoint.run(event, payload, settings)
        return None
    if event in ("user-prompt-submit", "post-tool-use"):
        from .events import capture

        return capture.run(event, payload, settings)
    if event == "pre-tool-use" and payload.get("tool_name") in EDIT_TOOLS:
        from .events import edit_guard

        return edit_guard.run(event, payload, settings)
    if event == "pre-tool-use":
        from .events import shell_guard

        return shell_guard.run(event, payload, settings)
    if event == "session-end":
        from .events import session_end

        session_end.run(event, payload, settings)
        return None
    from .events import background_sync

    background_sync.run(event, payload, settings)
    return None


def main(argv: list[str] | None = None) -> int:
    """``hook.py EVENT``: always returns 0 so Claude Code's session is never disturbed."""
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else ""
    settings = None
    try:
        settings = Settings(os.environ)  # the one read of the environment: the library is handed this
        if event not in EVENTS:
            raise BlackboardError(f"unknown hook event {event!r}; expected one of {', '.join(EVENTS)}")
        payload, problem = read_payload(sys.stdin.buffer.read(MAX_STDIN + 1))
        if problem:
            say(event, problem, settings)
        output = run(event, payload, settings)
        if output:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a hook must never break the session, whatever happened
        with contextlib.suppress(BaseException):  # nothing is left to tell
            log_failure(event, settings)
    return 0
