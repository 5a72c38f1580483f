"""PreToolUse of an edit tool: whose file is it (``guard.edit_verdict``); says nothing when it is nobody else's."""

from __future__ import annotations

import json

from ..guard import edit_verdict
from ..ids import optional_str
from ..settings import Settings
from . import usable_path


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = usable_path(tool_input.get("file_path") or tool_input.get("notebook_path"))
    session_id = optional_str(payload.get("session_id")) or (settings.named_session or ("", ""))[1]
    if path is None or not session_id:
        return None
    verdict = edit_verdict(session_id, path, payload.get("permission_mode"), settings)
    if verdict is None:
        return None
    output: dict[str, object] = {"hookEventName": "PreToolUse"}
    if verdict.decision:
        output.update(permissionDecision=verdict.decision, permissionDecisionReason=verdict.reason)
    if verdict.context:
        output["additionalContext"] = verdict.context
    answer: dict[str, object] = {"hookSpecificOutput": output}
    if verdict.decision == "ask":
        answer["systemMessage"] = verdict.reason  # Claude Code's edit dialog does not show the reason itself
    return json.dumps(answer)
