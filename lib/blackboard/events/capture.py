"""UserPromptSubmit and PostToolUse (and Stop's message): what the event tells of the session, into its digest.

After every prompt and edit: nothing more is done, and nothing more imported.
"""

from __future__ import annotations

import os

from .. import digest
from ..paths import PathResolver
from ..registry import session_dir
from ..settings import Settings
from . import board_of, usable_path


def run(event: str, payload: dict[str, object], settings: Settings) -> None:
    resolver, session_id = board_of(payload, settings, new_session=False)
    capture(event, resolver, session_id, payload, settings)


def capture(
    event: str, resolver: PathResolver, session_id: str, payload: dict[str, object], settings: Settings
) -> None:
    """Add what this event tells of the session to its digest (``digest``), unless ``BLACKBOARD_DIGEST=0``.

    Only into a session that has a board: an event of a session this plugin never started
    creates nothing.
    """
    if not settings.digest or not os.path.isfile(resolver.meta_path(session_id)):
        return  # asked before the folder is checked: a broken root costs the prompt and edit hooks no line
    session_dir(resolver, session_id)
    path = resolver.digest_path(session_id)
    if event == "user-prompt-submit":
        digest.record_prompt(path, payload.get("prompt"))
    elif event == "stop":
        digest.record_stop(path, payload.get("last_assistant_message"))
    else:
        tool_input = payload.get("tool_input")
        file_path = (
            tool_input.get("file_path") or tool_input.get("notebook_path") if isinstance(tool_input, dict) else None
        )
        project_dir = resolver.project.toplevel or usable_path(payload.get("cwd"))
        digest.record_edit(path, payload.get("tool_name"), file_path, project_dir)
