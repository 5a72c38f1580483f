"""Running the pinned Claude Code CLI with this repo as its plugin, against a scripted model server."""

import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

import pytest
from model_server import ModelServer

from helpers import REPO

FAKE_API_KEY = "sk-ant-api03-e2e-fake-key"
CLAUDE_TIMEOUT = 120.0


class ClaudeRunner:
    """Runs the CLI with this repo as ``--plugin-dir`` against a model server; keeps each run's wall time."""

    def __init__(self, binary: str, home: Path, hook_venv: Path, node: pytest.Item) -> None:
        self.binary = binary
        self.home = home
        self.hook_venv = hook_venv
        self.node = node
        self.durations: list[float] = []

    def env(self, model: ModelServer, extra_env: Optional[dict[str, str]] = None) -> dict[str, str]:
        env = dict(os.environ)  # already cleaned by the autouse isolated_home fixture
        env.update(
            HOME=str(self.home),
            PATH=os.environ["PATH"],
            ANTHROPIC_BASE_URL=model.url,  # a non-Anthropic base URL also skips the slow remote-settings fetches
            ANTHROPIC_API_KEY=FAKE_API_KEY,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",  # no DNS look-ups of api.anthropic.com at all
            BLACKBOARD_VENV=str(self.hook_venv),  # hooks and bin/blackboard reuse the session's built venv
        )
        env.update(extra_env or {})
        return env

    def start(
        self, args: Sequence[str], cwd: Path, model: ModelServer, extra_env: Optional[dict[str, str]] = None
    ) -> "subprocess.Popen[str]":
        """The CLI started and left running (a session that stays alive while the test goes on)."""
        command = [self.binary, *args, "--plugin-dir", str(REPO)]
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=self.env(model, extra_env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __call__(
        self,
        args: Sequence[str],
        cwd: Path,
        model: ModelServer,
        extra_env: Optional[dict[str, str]] = None,
        timeout: float = CLAUDE_TIMEOUT,
    ) -> "subprocess.CompletedProcess[str]":
        command = [self.binary, *args, "--plugin-dir", str(REPO)]
        started = time.monotonic()
        result = subprocess.run(
            command,
            cwd=cwd,
            env=self.env(model, extra_env),
            stdin=subprocess.DEVNULL,  # an open stdin pipe makes the CLI wait ~3 s for input
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        elapsed = time.monotonic() - started
        self.durations.append(elapsed)
        self.node.user_properties.append(("claude_seconds", round(elapsed, 2)))
        return result
