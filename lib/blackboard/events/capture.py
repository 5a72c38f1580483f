"""UserPromptSubmit and PostToolUse (and Stop's message): what the event tells of the session, into its digest
and its ``_live.jsonl``; at a prompt, a word when the checkout's branch moved under the session.

After every prompt and edit: nothing more is done, and nothing more imported.
"""

from __future__ import annotations

import json
import os

from .. import digest, live
from ..guard import head_notice
from ..paths import PathResolver
from ..registry import session_dir
from ..settings import Settings
from . import board_of, usable_path


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    resolver, session_id = board_of(payload, settings, new_session=False)
    if not capture(event, resolver, session_id, payload, settings) or event != "user-prompt-submit":
        return None
    notice = head_notice(resolver, session_id, usable_path(payload.get("cwd")) or os.getcwd(), settings)
    if notice is None:
        return None
    output = {"hookEventName": "UserPromptSubmit", "additionalContext": notice}
    return json.dumps({"hookSpecificOutput": output})


def capture(
    event: str, resolver: PathResolver, session_id: str, payload: dict[str, object], settings: Settings
) -> bool:
    """Add what this event tells of the session to its digest (unless ``BLACKBOARD_DIGEST=0``) and its presence.

    Only into a session that has a board (True then): an event of a session this plugin never
    started creates nothing. With the digest off, no request is kept: only the files edited.
    """
    if not os.path.isfile(resolver.meta_path(session_id)):
        return False  # asked before the folder is checked: a broken root costs the prompt and edit hooks no line
    session_dir(resolver, session_id)
    path = resolver.digest_path(session_id)
    if event == "user-prompt-submit":
        kept = digest.record_prompt(path, payload.get("prompt")) if settings.digest else None
        if kept is not None:
            live.record_request(resolver.live_path(session_id), _cut(kept, live.MAX_REQUEST_CHARS))
    elif event == "stop":
        if settings.digest:
            digest.record_stop(path, payload.get("last_assistant_message"))
    else:
        tool_input = payload.get("tool_input")
        file_path = (
            tool_input.get("file_path") or tool_input.get("notebook_path") if isinstance(tool_input, dict) else None
        )
        if settings.digest:
            project_dir = resolver.project.toplevel or usable_path(payload.get("cwd"))
            digest.record_edit(path, payload.get("tool_name"), file_path, project_dir)
        _record_edit(resolver.live_path(session_id), payload.get("tool_name"), file_path)
    return True


def _cut(text: str, limit: int) -> str:
    """``text`` (redacted already) within ``limit`` characters, on one line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _record_edit(path: str, tool: object, file_path: object) -> None:
    where = live.locate(file_path) if tool in digest.EDIT_TOOLS and isinstance(file_path, str) else None
    if where is not None:
        live.record_edit(path, *where)
