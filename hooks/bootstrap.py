"""Build the plugin's virtual environment from requirements.txt: ``bootstrap.py VENV REQUIREMENTS``.

Standard library only, because it runs before any dependency exists. Builds beside the
target, then renames into place under a lock, so concurrent sessions build it once and
never see a half-built environment. Exit status 0 means the venv is ready.

Whether an environment is ready is decided by ``blackboard.environment.ready``, the one
place that check is spelled.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))

from blackboard.clock import now_iso  # noqa: E402
from blackboard.environment import STAMP, ready  # noqa: E402

DEADLINE_SECONDS = 240  # under the SessionStart hook's timeout in hooks/hooks.json


def build(venv: str, requirements: str, log) -> None:
    import shutil
    import subprocess
    import time

    parent, name = os.path.split(os.path.abspath(venv))
    for leftover in os.listdir(parent):  # from a build that was killed (we hold the lock)
        if leftover.startswith((f"{name}.building-", f"{name}.old-")):
            shutil.rmtree(os.path.join(parent, leftover), ignore_errors=True)
    temp = f"{venv}.building-{os.getpid()}"
    deadline = time.monotonic() + DEADLINE_SECONDS
    uv = shutil.which("uv")
    if uv:
        steps = [
            [uv, "venv", "--python", sys.executable, temp],
            [uv, "pip", "install", "--python", os.path.join(temp, "bin", "python"), "-r", requirements],
        ]
    else:
        steps = [
            [sys.executable, "-m", "venv", temp],
            [
                os.path.join(temp, "bin", "python"),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "-r",
                requirements,
            ],
        ]
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


def main(venv: str, requirements: str) -> int:
    import fcntl
    import subprocess

    if ready(venv, requirements):
        return 0
    parent = os.path.dirname(os.path.abspath(venv))
    os.makedirs(parent, exist_ok=True)
    with open(f"{venv}.lock", "w") as lock, open(f"{venv}.build.log", "a") as log:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent first sessions wait for one build
        if ready(venv, requirements):
            return 0
        log.write(f"--- {now_iso()} building {venv}\n")
        try:
            build(venv, requirements, log)
        except (OSError, subprocess.SubprocessError) as exc:
            log.write(f"failed: {exc}\n")
            sys.stderr.write(f"blackboard: could not build its Python environment ({exc}); see {venv}.build.log\n")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
