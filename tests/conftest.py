"""Shared fixtures. Every test runs with HOME and the blackboard root inside tmp_path."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Callable, Optional

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))

from blackboard.paths import PathResolver  # noqa: E402
from blackboard.project import identify_project  # noqa: E402
from helpers import REPO, HookResult, hook_argv, make_git_project  # noqa: E402

# The machines are shared: a slow draw or example is load, not a failure of the property.
hypothesis_settings.register_profile("shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("shared-machine")

HOOK_ENV_NOISE = ("BLACKBOARD_", "CLAUDE_", "MNEMONIC_ROOT", "ANTHROPIC_")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker per core and one more, since the tests spend time waiting on the processes they start."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME and the blackboard root into tmp_path so no test can touch the real ~/.claude."""
    for name in list(os.environ):
        if name.startswith(HOOK_ENV_NOISE):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BLACKBOARD_ROOT", str(tmp_path / "root"))
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "root"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git checkout of acme/widget on branch main."""
    return make_git_project(tmp_path / "widget")


@pytest.fixture
def resolver(project: Path, root: Path) -> PathResolver:
    return PathResolver(str(root), identify_project(str(project)))


@pytest.fixture(scope="session")
def hook_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hooks' virtual environment, built once by the plugin's own bootstrap.

    Under pytest-xdist every worker asks for it in one folder the workers share: the bootstrap
    builds it once under its lock, as concurrent Claude Code sessions do, and the others wait.
    """
    shared = os.environ.get("PYTEST_XDIST_WORKER") is not None
    base = tmp_path_factory.getbasetemp()
    venv = (base.parent if shared else base) / "plugin-data" / "venv"
    venv.parent.mkdir(exist_ok=True)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(
        [sys.executable, str(REPO / "hooks" / "bootstrap.py"), str(venv), str(REPO / "requirements.txt")],
        check=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    return venv


RunHook = Callable[..., HookResult]


@pytest.fixture
def run_hook(hook_venv: Path, root: Path, isolated_home: Path) -> RunHook:
    """Run a hook exactly as Claude Code does: its hooks.json command and args, JSON on stdin."""

    def run(
        event: str, payload: object, env: Optional[dict[str, str]] = None, raw: Optional[bytes] = None
    ) -> HookResult:
        full_env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(REPO), BLACKBOARD_VENV=str(hook_venv))
        full_env.update(env or {})
        stdin = raw if raw is not None else json.dumps(payload).encode()
        proc = subprocess.run(hook_argv(event), input=stdin, capture_output=True, env=full_env, timeout=60)
        return HookResult(proc)

    return run


@pytest.fixture
def claudes() -> Iterator[Callable[[], subprocess.Popen]]:
    """Stand-ins for Claude Code processes, one per session (one process runs one conversation): each call
    starts one, whose pid a test passes as ``CLAUDE_PID``; all are ended after the test."""
    started: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        started.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"]))
        return started[-1]

    yield start
    for proc in started:
        proc.kill()
        proc.wait()
