"""Smoke test against the real Claude Code CLI (pinned in the Makefile, installed by `make test`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

pytestmark = pytest.mark.e2e


def test_plugin_validates(claude: str) -> None:
    result = subprocess.run([claude, "plugin", "validate", str(REPO)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation passed" in result.stdout + result.stderr


def test_a_session_leaves_an_ended_board_and_a_handoff(
    claude: str, project: Path, root: Path, isolated_home: Path
) -> None:
    # A fresh HOME: the plugin's data directory is empty, so the first hook builds the venv (with uv).
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        [claude, "--init-only", "--plugin-dir", str(REPO)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr

    board = root / "acme" / "widget" / ".blackboard"
    (session_dir,) = list((board / "sessions").iterdir())
    meta = json.loads((session_dir / "_meta.json").read_text())
    assert meta["status"] == "ended"
    assert meta["end_reason"] == "other"
    assert meta["session_id"] == session_dir.name
    assert meta["source"] == "startup"
    assert meta["cwd"] == str(project)
    assert isinstance(meta.get("claude_pid"), int)
    assert (board / "handoff" / f"handoff-{session_dir.name}.md").exists()
    assert f'session_id: "{session_dir.name}"' in (board / "handoff" / "latest-handoff.md").read_text()

    venv = isolated_home / ".claude" / "plugins" / "data" / "blackboard-inline" / "venv"
    assert (venv / ".blackboard-requirements").read_bytes() == (REPO / "requirements.txt").read_bytes()
    env_files = list((isolated_home / ".claude" / "session-env").rglob("*.sh"))
    assert any(f"BLACKBOARD_SESSION_ID='{session_dir.name}'" in f.read_text() for f in env_files)
    assert not (root / "logs").exists()
