"""Plain helpers shared by the tests (fixtures live in conftest.py)."""

import json
import subprocess
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent


def make_git_project(
    path: Path, remote: Optional[str] = "git@github.com:acme/widget.git", branch: str = "main"
) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def hook_command(event: str) -> str:
    """The shell command hooks/hooks.json registers for a Claude Code event."""
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    (command,) = [h["command"] for group in config["hooks"][event] for h in group["hooks"]]
    return command


class HookResult:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def context(self) -> str:
        return json.loads(self.stdout)["hookSpecificOutput"]["additionalContext"]


def start_payload(session_id: str, cwd: Path, source: str = "startup") -> dict:
    return {
        "session_id": session_id,
        "transcript_path": f"/tmp/transcripts/{session_id}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": source,
    }


def end_payload(session_id: str, cwd: Path, reason: str = "prompt_input_exit") -> dict:
    return {
        "session_id": session_id,
        "transcript_path": f"/tmp/transcripts/{session_id}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionEnd",
        "reason": reason,
    }


def spawn_hook(event: str, payload: dict, hook_venv: Path) -> "subprocess.Popen[bytes]":
    """Start a hook as Claude Code does, with its JSON written to stdin but stdin left open.

    Closing stdin (``proc.stdin.close()``) lets it run; closing several at once starts them together.
    """
    import os

    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(REPO), BLACKBOARD_VENV=str(hook_venv))
    proc = subprocess.Popen(
        ["sh", "-c", hook_command(event)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    return proc


def dead_pid() -> int:
    """The pid of a process that has already exited."""
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
