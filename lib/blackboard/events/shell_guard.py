"""PreToolUse of Bash: whose work a command would destroy (``guard.shell_verdict``), else the approval of a plain
board command (``approval``); says nothing about anything else."""

from __future__ import annotations

import json

from ..guard import shell_verdict
from ..ids import optional_str
from ..settings import Settings
from . import approval, usable_path


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return None
    session_id = optional_str(payload.get("session_id")) or (settings.named_session or ("", ""))[1]
    verdict = shell_verdict(
        session_id, command, payload.get("permission_mode"), settings, usable_path(payload.get("cwd"))
    )
    if verdict is None:
        return approval.run(event, payload, settings) if "blackboard" in command else None
    output = {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict.decision,
        "permissionDecisionReason": verdict.reason,
    }
    answer: dict[str, object] = {"hookSpecificOutput": output}
    if verdict.decision == "ask":
        answer["systemMessage"] = verdict.reason  # the person reads it beside the dialog too
    return json.dumps(answer)
