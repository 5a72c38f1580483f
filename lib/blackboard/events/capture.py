"""UserPromptSubmit and PostToolUse (and Stop's message): what the event tells of the session, into its digest
and its ``_live.jsonl``; at a prompt and after a tool call, a word when someone else moved the checkout's
branch or HEAD (``branch.head_notice``), and after a shell command of its own that moved it, its own move.

After every prompt, edit and shell command: nothing more is done, and nothing more imported.
"""

from __future__ import annotations

import json
import os

from .. import digest, live, shell
from ..branch import head_notice
from ..gitinfo import checkout_of
from ..paths import PathResolver
from ..registry import session_dir
from ..settings import Settings
from . import board_of, usable_path

EVENT_NAMES = {"user-prompt-submit": "UserPromptSubmit", "post-tool-use": "PostToolUse"}


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    resolver, session_id = board_of(payload, settings, new_session=False)
    if not capture(event, resolver, session_id, payload, settings):
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    shell = event == "post-tool-use" and payload.get("tool_name") == "Bash"
    cwd = usable_path(payload.get("cwd")) or os.getcwd()
    notice = head_notice(resolver, session_id, cwd, settings, command=str(command or "") if shell else None)
    if notice is None:
        return None
    output = {"hookEventName": EVENT_NAMES[event], "additionalContext": notice}
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
    elif payload.get("tool_name") in digest.EDIT_TOOLS:
        tool_input = payload.get("tool_input")
        file_path = (
            tool_input.get("file_path") or tool_input.get("notebook_path") if isinstance(tool_input, dict) else None
        )
        if settings.digest:
            project_dir = resolver.project.toplevel or usable_path(payload.get("cwd"))
            digest.record_edit(path, payload.get("tool_name"), file_path, project_dir)
        _record_edit(resolver.live_path(session_id), file_path, usable_path(payload.get("cwd")))
    elif payload.get("tool_name") == "Bash":
        tool_input = payload.get("tool_input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        if isinstance(command, str):
            _record_writes(resolver.live_path(session_id), command, usable_path(payload.get("cwd")))
    return True


def _cut(text: str, limit: int) -> str:
    """``text`` (redacted already) within ``limit`` characters, on one line."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


SHELL_WRITES = ("remove", "overwrite", "move", "rewrite")  # what a command did to files it names


def _record_writes(path: str, command: str, cwd: str | None) -> None:
    """The files a shell command of the session wrote (``sed -i``, ``>``, ``mv``…): they are its own, as edits are."""
    if cwd is None or not os.path.isabs(cwd):
        return
    own = checkout_of(cwd)
    for effect in shell.effects(command, cwd):
        if effect.kind not in SHELL_WRITES or effect.whole or not os.path.isabs(effect.cwd):
            continue
        for written in effect.paths:
            if not any(char in written for char in "*?["):  # a glob names no file of its own
                where = live.locate(os.path.normpath(os.path.join(effect.cwd, written)), own)
                if where is not None:
                    live.record_edit(path, *where)


def _record_edit(path: str, file_path: object, cwd: str | None) -> None:
    where = live.locate(file_path, checkout_of(cwd)) if isinstance(file_path, str) else None
    if where is not None:
        live.record_edit(path, *where)
