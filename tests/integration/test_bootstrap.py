"""The hook launcher builds its own virtual environment: from nothing, on change, or fails open."""

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from helpers import REPO, make_git_project, start_payload

DEV_BIN = str(Path(sys.executable).parent)  # holds uv


def _plugin_copy(tmp_path: Path, requirements: Optional[str] = None) -> Path:
    plugin = tmp_path / "plugin"
    for part in ("hooks", "lib"):
        shutil.copytree(REPO / part, plugin / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "requirements.txt", plugin / "requirements.txt")
    if requirements is not None:
        (plugin / "requirements.txt").write_text(requirements)
    return plugin


def _path_without_uv(tmp_path: Path) -> str:
    """A PATH with python3, git and the shell tools, and no uv, to exercise the pip route."""
    only = tmp_path / "bin-no-uv"
    only.mkdir()
    (only / "python3").symlink_to(Path(sys.base_prefix) / "bin" / "python3")
    dirs = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "uv").exists()]
    return os.pathsep.join([str(only)] + dirs)


def _start(plugin: Path, data: Path, project: Path, path: str, session_id: str = "s1") -> subprocess.CompletedProcess:
    env: dict[str, str] = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(plugin), CLAUDE_PLUGIN_DATA=str(data), PATH=path)
    env.pop("BLACKBOARD_VENV", None)
    return subprocess.run(
        [str(plugin / "hooks" / "run"), "session-start"],
        input=json.dumps(start_payload(session_id, project)).encode(),
        capture_output=True,
        env=env,
        timeout=600,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_git_project(tmp_path / "widget")


def _assert_ready(venv: Path, plugin: Path) -> None:
    assert (venv / ".blackboard-requirements").read_bytes() == (plugin / "requirements.txt").read_bytes()
    probe = "import click, frontmatter, yaml"
    subprocess.run([str(venv / "bin" / "python"), "-c", probe], check=True)


@pytest.mark.skipif(not shutil.which("uv", path=DEV_BIN), reason="uv comes with the dev tools `make test` installs")
def test_first_session_builds_the_environment_with_uv(tmp_path: Path, repo: Path) -> None:
    plugin, data = _plugin_copy(tmp_path), tmp_path / "data"
    result = _start(plugin, data, repo, f"{DEV_BIN}{os.pathsep}{os.environ['PATH']}")
    assert result.returncode == 0
    assert result.stderr == b""
    assert "acme/widget" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    _assert_ready(data / "venv", plugin)
    assert "uv" in (data / "venv.build.log").read_text()

    marker = data / "venv" / "kept"
    marker.write_text("the next session reuses the environment")
    assert _start(plugin, data, repo, os.environ["PATH"], "s2").returncode == 0
    assert marker.exists()


@pytest.mark.slow
def test_first_session_builds_the_environment_with_pip(tmp_path: Path, repo: Path) -> None:
    plugin, data = _plugin_copy(tmp_path), tmp_path / "data"
    result = _start(plugin, data, repo, _path_without_uv(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr == b"", result.stderr
    _assert_ready(data / "venv", plugin)
    log = (data / "venv.build.log").read_text()
    assert "-m venv --without-pip" in log and "-m pip --python" in log  # the machine's pip installs it


def _bootstrap():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(REPO / "hooks"))
    try:
        import bootstrap
    finally:
        sys.path.remove(str(REPO / "hooks"))
    return bootstrap


def test_a_python_without_a_pip_of_its_own_is_told_apart(tmp_path: Path) -> None:
    bare = tmp_path / "no-pip"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    bootstrap = _bootstrap()
    assert bootstrap._pip_installs_elsewhere(str(Path(sys.base_prefix) / "bin" / "python3"))
    assert not bootstrap._pip_installs_elsewhere(str(bare / "bin" / "python"))
    assert not bootstrap._pip_installs_elsewhere(str(tmp_path / "no-python-here"))


@pytest.mark.slow
def test_a_python_whose_pip_cannot_install_elsewhere_builds_with_a_pip_of_the_environments_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """macOS's own Python 3.9 comes with pip 21, which has no ``--python``."""
    bootstrap = _bootstrap()
    monkeypatch.setattr(bootstrap, "_pip_installs_elsewhere", lambda python: False)
    monkeypatch.setenv("PATH", _path_without_uv(tmp_path))
    venv, log = tmp_path / "venv", tmp_path / "build.log"
    with log.open("w") as handle:
        bootstrap.build(str(venv), str(REPO / "requirements.txt"), handle)
    _assert_ready(venv, REPO)
    assert "--without-pip" not in log.read_text()
    assert (venv / "bin" / "pip").exists()


def _oldest_python() -> Optional[str]:
    """The oldest supported interpreter (3.9, macOS's own) when the machine has one that runs."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".pyenv")
    candidates = [shutil.which("python3.9"), *map(str, sorted(pyenv.glob("versions/3.9*/bin/python3.9")))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


def _path_with(tmp_path: Path, python: str, uv: bool) -> str:
    """A PATH whose python3 is ``python``, with uv (the dev tools') or without."""
    first = tmp_path / f"bin-{Path(python).name}-{'uv' if uv else 'pip'}"
    first.mkdir()
    (first / "python3").symlink_to(python)
    if uv:
        (first / "uv").symlink_to(Path(DEV_BIN) / "uv")
    dirs = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "uv").exists()]
    return os.pathsep.join([str(first)] + dirs)


@pytest.mark.parametrize("route", ["uv", "pip"])
@pytest.mark.parametrize("oldest", [False, True], ids=["this-python", "python3.9"])
def test_changed_requirements_rebuild_the_environment(tmp_path: Path, repo: Path, route: str, oldest: bool) -> None:
    """Before Python 3.11 a venv made from a venv's python linked to it, and a rebuild's python to itself."""
    python = _oldest_python() if oldest else str(Path(sys.base_prefix) / "bin" / "python3")
    if python is None:
        pytest.skip("no python3.9 on this machine")
    if route == "uv" and not shutil.which("uv", path=DEV_BIN):
        pytest.skip("uv comes with the dev tools `make test` installs")
    plugin, data = _plugin_copy(tmp_path), tmp_path / "data"
    path = _path_with(tmp_path, python, route == "uv")
    first = _start(plugin, data, repo, path)
    assert first.returncode == 0 and first.stderr == b"", first.stderr
    (data / "venv" / "old-build").write_text("x")
    with open(plugin / "requirements.txt", "a") as handle:
        handle.write("# a new pin\n")
    result = _start(plugin, data, repo, path, "s2")
    assert result.returncode == 0
    assert result.stderr == b"", result.stderr
    assert not (data / "venv" / "old-build").exists()
    _assert_ready(data / "venv", plugin)
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    built = subprocess.run(
        [str(data / "venv" / "bin" / "python"), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
    )
    assert built.stdout == version.stdout  # and it runs: no link to itself
    assert "acme/widget" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_an_environment_that_cannot_be_built_fails_open(tmp_path: Path, repo: Path) -> None:
    plugin = _plugin_copy(tmp_path, requirements="blackboard-no-such-package-for-tests==0.0.1\n")
    data = tmp_path / "data"
    # pip route, on the base interpreter, which has none of our dependencies installed
    result = _start(plugin, data, repo, _path_without_uv(tmp_path))
    assert result.returncode == 0
    assert len(result.stderr.splitlines()) == 1
    assert b"could not build" in result.stderr
    assert not (data / "venv").exists()
    # The start path needs no third-party module, so the session still gets its board.
    assert "acme/widget" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_an_environment_with_no_place_to_go_costs_one_line_and_the_session_goes_on(tmp_path: Path, repo: Path) -> None:
    """CLAUDE_PLUGIN_DATA under a regular file: no folder can be made there, and no traceback is shown."""
    plugin = _plugin_copy(tmp_path)
    (tmp_path / "a-file").write_text("")

    result = _start(plugin, tmp_path / "a-file" / "data", repo, os.environ["PATH"])

    assert result.returncode == 0
    assert result.stderr.decode().splitlines() == [
        f"blackboard: no place for its Python environment at {tmp_path}/a-file/data/venv (Not a directory); "
        "set BLACKBOARD_VENV to a folder you can write"
    ]
    assert "acme/widget" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_command_says_in_one_line_why_it_has_no_environment_and_does_not_rebuild_each_time(
    tmp_path: Path, repo: Path
) -> None:
    plugin = _plugin_copy(tmp_path, requirements="blackboard-no-such-package-for-tests==0.0.1\n")
    shutil.copytree(REPO / "bin", plugin / "bin")
    data = tmp_path / "data"
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(plugin), CLAUDE_PLUGIN_DATA=str(data))
    env["PATH"] = _path_without_uv(tmp_path)
    env.pop("BLACKBOARD_VENV", None)

    def call() -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(plugin / "bin" / "blackboard"), "where"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    first = call()
    assert first.returncode == 1
    (line,) = first.stderr.splitlines()
    assert "could not build its Python environment" in line and "--now" in line
    assert "Traceback" not in first.stderr
    log = (data / "venv.build.log").read_text()

    again = call()
    assert again.returncode == 1
    (line,) = again.stderr.splitlines()
    assert "tried again in" in line and "--now" in line
    assert (data / "venv.build.log").read_text() == log  # no second attempt
