"""PreToolUse of Bash: whose work a command would destroy (``guard.shell_verdict``), else the approval of a plain
board command (``approval``); says nothing about anything else.

Every Bash command starts this hook, so what a command that only reads costs is one regular
expression: the guard is imported for a command that may write, the approval for a board
command, each where it is used (the dispatch of ``hook.run``, carried one step further; ADR 35).
"""

from __future__ import annotations

import json
import os

from .. import shell
from ..ids import optional_str
from ..paths import PathResolver
from ..registry import active_session_ids
from ..settings import Settings
from . import usable_path


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    cwd = usable_path(payload.get("cwd"))
    if not isinstance(command, str):
        return None
    effects = shell.effects(command, cwd, os.path.isdir) if cwd and os.path.isabs(cwd) else []
    session_id = optional_str(payload.get("session_id")) or (settings.named_session or ("", ""))[1]
    verdict = None
    resolver = PathResolver.for_cwd(cwd, settings) if (effects or "blackboard" in command) and cwd else None
    if resolver is not None and _others_active(resolver, session_id):
        from ..guard import shell_verdict  # a command that may write, with others at work: whose work is it?

        mode = payload.get("permission_mode")
        verdict = shell_verdict(session_id, command, mode, settings, cwd, effects, resolver)
    if verdict is None:
        if "blackboard" not in command:
            return None
        from . import approval  # a board command: approved when it is one plain invocation

        return approval.run(event, payload, settings)
    output = {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict.decision,
        "permissionDecisionReason": verdict.reason,
    }
    answer: dict[str, object] = {"hookSpecificOutput": output}
    if verdict.decision == "ask":
        answer["systemMessage"] = verdict.reason  # the person reads it beside the dialog too
    return json.dumps(answer)


def _others_active(resolver: PathResolver, session_id: str) -> bool:
    """Whether any other session of the project is marked active: alone, nothing of anyone's is at stake."""
    return any(other != session_id for other in active_session_ids(resolver))
