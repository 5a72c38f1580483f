"""What a machine can hold that no hook should trip on: FIFOs, devices, broken logs, odd settings."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import REPO, hook_argv, start_payload

LAUNCHER = str(REPO / "bin" / "blackboard")


def _start(cwd: Path, env: dict, timeout: float = 20) -> "subprocess.CompletedProcess[bytes]":
    payload = json.dumps(start_payload("s1", cwd)).encode()
    return subprocess.run(hook_argv("SessionStart"), input=payload, env=env, capture_output=True, timeout=timeout)


@pytest.fixture
def env(hook_venv: Path) -> dict:
    return dict(os.environ, CLAUDE_PLUGIN_ROOT=str(REPO), BLACKBOARD_VENV=str(hook_venv))


def test_a_fifo_named_git_in_a_parent_folder_never_hangs_a_hook(tmp_path: Path, env: dict) -> None:
    os.mkfifo(tmp_path / ".git")  # nobody will ever write to it
    project = tmp_path / "app"
    project.mkdir()

    started = time.monotonic()
    result = _start(project, env)
    where = subprocess.run([LAUNCHER, "where"], cwd=project, env=env, capture_output=True, timeout=20)

    assert time.monotonic() - started < 15
    assert result.returncode == 0
    assert b"additionalContext" in result.stdout
    assert where.returncode == 0


def test_a_git_config_that_is_a_device_is_not_read_whole(tmp_path: Path, env: dict) -> None:
    project = tmp_path / "app"
    (project / "gd").mkdir(parents=True)
    (project / ".git").write_text("gitdir: gd\n")
    (project / "gd" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "gd" / "config").symlink_to("/dev/zero")  # endless, if anyone read it whole

    result = _start(project, env)

    assert result.returncode == 0
    assert b"additionalContext" in result.stdout


def test_a_log_that_is_a_folder_does_not_silence_failures(tmp_path: Path, env: dict, root: Path) -> None:
    (root / "logs" / "hooks.log").mkdir(parents=True)
    payload = json.dumps(dict(start_payload("../escape", tmp_path))).encode()  # refused: a logged failure

    result = subprocess.run(hook_argv("SessionStart"), input=payload, env=env, capture_output=True, timeout=20)

    assert result.returncode == 0
    log = root / "logs" / "hooks.log"
    assert log.is_file()
    assert "refusing session id" in log.read_text()
    assert [p.name.startswith("hooks.log.broken-") for p in (root / "logs").iterdir()].count(True) == 1


def test_a_value_cap_out_of_bounds_falls_back_to_the_default(tmp_path: Path, env: dict, project: Path) -> None:
    _start(project, env)
    note = subprocess.run(
        [LAUNCHER, "note", "x" * 100],
        cwd=project,
        env=dict(env, BLACKBOARD_SESSION_ID="s1", BLACKBOARD_MAX_VALUE_CHARS="-5"),
        capture_output=True,
        timeout=30,
    )
    assert note.returncode == 0, note.stderr


def test_without_home_nothing_is_built_under_the_filesystem_root(tmp_path: Path, project: Path, root: Path) -> None:
    existed = os.path.exists("/.local/share/blackboard")
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "BLACKBOARD_ROOT": str(root),
        "CLAUDE_PLUGIN_ROOT": str(REPO),
    }

    result = _start(project, env, timeout=120)

    assert result.returncode == 0
    assert b"additionalContext" in result.stdout
    if not existed:
        assert not os.path.exists("/.local/share/blackboard")
