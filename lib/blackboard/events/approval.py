"""PreToolUse: approve a plain board command (``approve.decision``); say nothing about anything else."""

from __future__ import annotations

import json
import os
import time

from ..approve import decision
from ..changes import excluded_by_the_person, git_ignores
from ..environment import PLUGIN_ROOT
from ..gitinfo import checkout_around
from ..ids import is_session_id
from ..paths import PathResolver
from ..settings import Settings
from . import usable_path

REASON = "blackboard: a board command that only reads or writes this session's own board"


def run(event: str, payload: dict[str, object], settings: Settings) -> str | None:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if payload.get("tool_name") != "Bash" or not settings.auto_allow:
        return None
    cwd = usable_path(payload.get("cwd"))
    deadline = time.monotonic() + 0.8  # for every --file together

    def in_this_project(session_id: str) -> bool:
        resolver = PathResolver.for_cwd(cwd or os.getcwd(), settings)
        return is_session_id(session_id) and os.path.isfile(resolver.meta_path(session_id))

    def ignored(path: str) -> bool:
        real = os.path.realpath(os.path.join(cwd, path)) if cwd else ""
        if not real:
            return True
        project = checkout_around(cwd or "")[0]
        if project is not None and checkout_around(os.path.dirname(real))[0] != project:
            return True  # a `.git` of its own below the project's (one file can make one): git would ask it
        return git_ignores(real, settings.environ, deadline) or excluded_by_the_person(real, settings.environ, deadline)

    if not decision(command, cwd, PLUGIN_ROOT, payload.get("session_id"), in_this_project, ignored):
        return None
    output = {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": REASON}
    return json.dumps({"hookSpecificOutput": output})
