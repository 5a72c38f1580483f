"""Fixtures for end-to-end tests: the pinned Claude Code CLI talking to a scripted local model."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer

CLAUDE_BIN = os.environ.get("BLACKBOARD_CLAUDE", "")  # read at import, before the autouse fixture clears BLACKBOARD_*


@pytest.fixture
def claude() -> str:
    """The pinned Claude Code CLI; fails under CI when it is missing, else skips."""
    if not os.access(CLAUDE_BIN, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail("BLACKBOARD_CLAUDE does not name the Claude Code CLI; run the tests with `make test`")
        pytest.skip("Claude Code CLI not installed; `make test` installs it")
    return CLAUDE_BIN


@pytest.fixture
def model() -> Iterator[ModelServer]:
    """A scripted model server on 127.0.0.1; add replies with ``model.add(bash(...), text(...))``."""
    server = ModelServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def run_claude(claude: str, isolated_home: Path, hook_venv: Path, request: pytest.FixtureRequest) -> ClaudeRunner:
    """``run_claude(args, cwd, model, extra_env=None)`` -> CompletedProcess (text, stdout/stderr captured)."""
    return ClaudeRunner(claude, isolated_home, hook_venv, request.node)
