"""PreToolUse of an edit tool: whose file is it (``guard.edit_verdict``), and whether someone else moved the
checkout's branch since the session last looked (``branch.head_notice``); says nothing when neither is so."""

from __future__ import annotations

import json
import os

from ..branch import head_notice
from ..guard import edit_verdict
from ..ids import is_session_id, optional_str
from ..settings import Settings
from . import board_of, usable_path


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = usable_path(tool_input.get("file_path") or tool_input.get("notebook_path"))
    session_id = optional_str(payload.get("session_id")) or (settings.named_session or ("", ""))[1]
    if path is None or not session_id:
        return None
    cwd = usable_path(payload.get("cwd"))
    verdict = edit_verdict(session_id, path, payload.get("permission_mode"), settings, cwd)
    notice = _moved(payload, settings, cwd)
    if verdict is None and notice is None:
        return None
    output: dict[str, object] = {"hookEventName": "PreToolUse"}
    if verdict is not None and verdict.decision:
        output.update(permissionDecision=verdict.decision, permissionDecisionReason=verdict.reason)
    context = "\n\n".join(text for text in (verdict.context if verdict else "", notice) if text)
    if context:
        output["additionalContext"] = context
    answer: dict[str, object] = {"hookSpecificOutput": output}
    if verdict is not None and verdict.decision == "ask":
        answer["systemMessage"] = verdict.reason  # beside the dialog, for a Claude Code that does not show it
    return json.dumps(answer)


def _moved(payload: dict[str, object], settings: Settings, cwd: str | None) -> str | None:
    """A move of the checkout by someone else in the middle of this session's turn, told before it edits."""
    if not is_session_id(payload.get("session_id")):
        return None
    resolver, session_id = board_of(payload, settings, new_session=False)
    if not os.path.isfile(resolver.meta_path(session_id)):
        return None
    return head_notice(resolver, session_id, cwd or os.getcwd(), settings)
