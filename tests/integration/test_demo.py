"""`make demo` runs the real hooks from hooks/hooks.json and shows the handoff reaching session two."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import REPO


def test_the_demo_shows_a_handoff_reaching_the_next_session(hook_venv: Path) -> None:
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv))
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py")], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    hooks = re.findall(r"hooks/run (\S+)\s+-> exit (\d+)", result.stdout)
    events = ["session-start", "user-prompt-submit", "post-tool-use", "stop", "session-end", "session-start"]
    assert hooks == [(event, "0") for event in events]
    context = result.stdout.split("== The context session two received (additionalContext) ==")[1]
    assert "From session one" in context
    assert "Cover token expiry with tests" in context
    for digest in (
        "first request: Add refresh tokens",
        "rotation is not written yet",
        "`auth.py`: 1 edit",
        "Add a refresh() stub",
    ):
        assert digest in context, digest  # what was asked, where it stopped, what changed
    assert "Rotate refresh tokens on every use" in context  # Claude Code's own task, still open
    work = re.search(r"Everything above lives in (\S+);", result.stdout)
    assert work is not None
    shutil.rmtree(work.group(1))
