"""Build the plugin's virtual environment from requirements.txt: ``bootstrap.py VENV REQUIREMENTS``.

Standard library only, because it runs before any dependency exists. Builds beside the
target, then renames into place under a lock, so concurrent sessions build it once and
never see a half-built environment. Exit status 0 means the venv is ready.

Whether an environment is ready is decided by ``blackboard.environment.ready``, the one
place that check is spelled.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from blackboard.clock import now_iso  # noqa: E402
from blackboard.environment import STAMP, ready  # noqa: E402

DEADLINE_SECONDS = 240  # under the SessionStart hook's timeout in hooks/hooks.json
RETRY_SECONDS = 600  # a failed build is not tried again sooner, but by hand (--now) or for new requirements


def base_python() -> str:
    """The interpreter a new environment is made from: never an environment's own.

    Run from the plugin's environment (a rebuild), ``sys.executable`` is that environment's
    python, and before Python 3.11 a venv made from it links to it: once the old
    environment is renamed away, the new ``bin/python`` is a link to itself (ELOOP).
    ``sys.base_prefix`` says so only when ``site`` ran (the machine's python3 runs a hook
    with ``-S``); the environment's ``pyvenv.cfg`` always does.
    """
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        return sys.executable
    real = os.path.realpath(sys.executable)  # a venv's python is a link to the one it was made from
    if not real.startswith(os.path.realpath(venv) + os.sep):
        return real
    with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8") as config:  # made with --copies
        home = next((line.split("=", 1)[1].strip() for line in config if line.split("=")[0].strip() == "home"), "")
    return os.path.join(home, f"python{sys.version_info[0]}.{sys.version_info[1]}")


def build(venv: str, requirements: str, log) -> None:
    import shutil
    import subprocess
    import time

    python = base_python()
    parent, name = os.path.split(os.path.abspath(venv))
    for leftover in os.listdir(parent):  # from a build that was killed (we hold the lock)
        if leftover.startswith((f"{name}.building-", f"{name}.old-")):
            shutil.rmtree(os.path.join(parent, leftover), ignore_errors=True)
    temp = f"{venv}.building-{os.getpid()}"
    deadline = time.monotonic() + DEADLINE_SECONDS
    uv = shutil.which("uv")
    if uv:
        steps = [
            [uv, "venv", "--python", python, temp],
            [uv, "pip", "install", "--python", os.path.join(temp, "bin", "python"), "-r", requirements],
        ]
    else:
        pip = ["pip", "install", "--disable-pip-version-check", "-q", "-r", requirements]
        target = os.path.join(temp, "bin", "python")
        if _pip_installs_elsewhere(python):  # seconds less than a pip of the environment's own (ensurepip)
            steps = [
                [python, "-m", "venv", "--without-pip", temp],
                [python, "-m", pip[0], "--python", target, *pip[1:]],
            ]
        else:
            steps = [[python, "-m", "venv", temp], [target, "-m", *pip]]
    try:
        for step in steps:
            log.write(f"$ {' '.join(step)}\n")
            log.flush()
            remaining = max(deadline - time.monotonic(), 1)
            subprocess.run(step, check=True, stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=remaining)
        shutil.copyfile(requirements, os.path.join(temp, STAMP))
        old = f"{venv}.old-{os.getpid()}"
        if os.path.exists(venv):
            os.rename(venv, old)
        os.rename(temp, venv)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _pip_installs_elsewhere(python: str) -> bool:
    """Whether ``python``'s own pip can install into another environment (``--python``, pip 22.3 and later)."""
    import subprocess

    code = "import pip, sys; sys.exit(tuple(map(int, pip.__version__.split('.')[:2])) < (22, 3))"
    try:
        return subprocess.run([python, "-c", code], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def main(venv: str, requirements: str, now: bool = False) -> int:
    """Build ``venv`` unless it is ready; 1, with one line on stderr, when it cannot be.

    A build that failed (offline, a proxy, a Python without ``venv``) is tried again after
    ``RETRY_SECONDS``, at once for other requirements, or now with ``now`` (``--now``):
    every ``blackboard`` call would otherwise spend seconds failing again.
    """
    if ready(venv, requirements):
        return 0
    parent = os.path.dirname(os.path.abspath(venv))
    try:
        os.makedirs(parent, exist_ok=True)
        with open(f"{venv}.lock", "w") as lock, open(f"{venv}.build.log", "a") as log:
            status = _build_locked(venv, requirements, now, lock, log)
    except OSError as exc:  # no folder for it (a read-only home, a path under /proc): one line, no traceback
        sys.stderr.write(
            f"blackboard: no place for its Python environment at {venv} ({exc.strerror or exc}); "
            "set BLACKBOARD_VENV to a folder you can write\n"
        )
        return 1
    if status == 0:
        _forget_failure(f"{venv}.failed")
    return status


def _build_locked(venv: str, requirements: str, now: bool, lock: TextIO, log: TextIO) -> int:
    """``main``'s build, under its lock: 0 when the environment is ready."""
    import fcntl  # not filelock: this builds the environment filelock comes in (ADR 25)
    import subprocess
    import time

    failed = f"{venv}.failed"
    by_hand = f"{sys.executable} {os.path.abspath(__file__)} --now {venv} {requirements}"
    fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent first sessions wait for one build
    if ready(venv, requirements):
        return 0
    reason = _recent_failure(failed, requirements)
    if reason and not now:
        minutes = max(round(RETRY_SECONDS - (time.time() - os.path.getmtime(failed))) // 60, 1)
        sys.stderr.write(
            f"blackboard: its Python environment could not be built ({reason}); it is tried again "
            f"in {minutes} min, or now with: {by_hand}\n"
        )
        return 1
    log.write(f"--- {now_iso()} building {venv}\n")
    try:
        build(venv, requirements, log)
    except (OSError, subprocess.SubprocessError) as exc:
        log.write(f"failed: {exc}\n")
        _remember_failure(failed, requirements, str(exc))
        sys.stderr.write(
            f"blackboard: could not build its Python environment ({exc}); see {venv}.build.log, then run: {by_hand}\n"
        )
        return 1
    return 0


def _recent_failure(path: str, requirements: str) -> str | None:
    """Why the last build failed, if it failed for these requirements less than ``RETRY_SECONDS`` ago."""
    import time

    try:
        with open(path, encoding="utf-8") as handle:
            wanted, reason = handle.read().split("\n", 1)
        with open(requirements, "rb") as handle:
            same = wanted == _digest(handle.read())
        recent = time.time() - os.path.getmtime(path) < RETRY_SECONDS
    except (OSError, ValueError):
        return None
    return reason.strip() if same and recent else None


def _remember_failure(path: str, requirements: str, reason: str) -> None:
    try:
        with open(requirements, "rb") as handle:
            wanted = _digest(handle.read())
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"{wanted}\n{reason.splitlines()[0] if reason else 'failed'}\n")
    except OSError:
        pass


def _forget_failure(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


if __name__ == "__main__":
    args = sys.argv[1:]
    now = args[:1] == ["--now"]
    sys.exit(main(*args[now:][:2], now=now))
