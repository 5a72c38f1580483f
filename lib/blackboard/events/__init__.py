"""What each Claude Code hook event does, one module per event; ``hook`` imports only the one that runs.

``session_start``, ``capture`` (the prompt and edit hooks), ``checkpoint`` (Stop, PreCompact),
``session_end``, ``approval`` (PreToolUse) and ``background_sync`` (the round a hook starts).
Each has ``run(event, payload, settings)``, which returns the JSON to print, if any. What they
share is here: which session and board a payload names, and how a failure is told.
"""

from __future__ import annotations

import os
import sys

from ..ids import optional_str, resolve_session_id
from ..paths import PathResolver
from ..registry import find_owner
from ..settings import Settings


def usable_path(value: object) -> str | None:
    """``value`` when the OS can take it as a path; a NUL or a lone surrogate (hostile JSON) gives None."""
    text = optional_str(value)
    try:
        return text if text is not None and b"\0" not in os.fsencode(text) else None
    except UnicodeEncodeError:
        return None


def board_of(payload: dict[str, object], settings: Settings, new_session: bool) -> tuple[PathResolver, str]:
    """The project's resolver and the session id a payload names.

    The agent may have changed directory since its session started: a session that goes on
    finds its board by id, in whichever project holds it.
    """
    session_id = resolve_session_id(payload.get("session_id"), settings.named_session)
    resolver = PathResolver.for_cwd(usable_path(payload.get("cwd")) or os.getcwd(), settings)
    return (resolver if new_session else find_owner(resolver, session_id) or resolver), session_id


def say(event: str, problem: str, settings: Settings | None) -> None:
    """One line on stderr, and the same in the log, about input the hook could not use."""
    from .. import failures  # traceback's import costs every hook 3.6 ms: only when something failed (ADR 27)

    failures.note("hooks", f"{event}: {problem}", settings)
    sys.stderr.write(f"blackboard: {event} hook: {problem}\n")


def log_failure(event: str, settings: Settings | None) -> None:
    """Log the exception being handled to ``$ROOT/logs/hooks.log`` and say one line on stderr."""
    from .. import failures  # as in ``say``

    where = failures.record("hooks", event, settings)
    sys.stderr.write(f"blackboard: {event} hook failed: {failures.summary()} ({where})\n")


def note_sync_failure(what: str, settings: Settings | None) -> None:
    """A line in ``logs/sync.log``: the remote is someone else's problem, never the session's."""
    from .. import failures  # as in ``say``

    failures.note("sync", what, settings)
