"""Run the unit suite on the oldest and newest supported Pythons this machine has: ``make unit-pythons``.

The plugin runs on whatever ``python3`` a person has, from 3.9 (macOS's own) up. Each
interpreter found gets its own environment under ``.cache/`` from requirements-dev.txt;
one that is missing is named and skipped. The tests marked ``timing`` (how redaction's time
grows with its input: a property of its patterns) run once, in the main suite.
"""

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
VERSIONS = ("3.9", "3.13")  # the oldest supported, and the newest tried


def find(version: str) -> Optional[str]:
    """An interpreter of ``version`` that runs: on PATH, else in pyenv's folder."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path(pwd.getpwuid(os.getuid()).pw_dir) / ".pyenv")
    candidates = [shutil.which(f"python{version}"), *map(str, sorted(pyenv.glob(f"versions/{version}.*/bin/python3")))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


def build(python: str, venv: Path) -> None:
    """An environment of ``python`` with the pinned development tools: through uv (one of them) when it is here."""
    shutil.rmtree(venv, ignore_errors=True)
    requirements = str(REPO / "requirements-dev.txt")
    uv = shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv:  # seconds less than venv and pip, and what uv downloads is shared by both versions
        subprocess.run([uv, "venv", "-q", "--python", python, str(venv)], check=True)
        subprocess.run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--compile-bytecode",
                "--python",
                str(venv / "bin" / "python"),
                "-r",
                requirements,
            ],
            check=True,
        )
        return
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "-r", requirements], check=True)


def main(build_only: bool = False) -> int:
    """Build each Python's environment when it is stale, then (unless ``build_only``) run the unit suite in it."""
    failed = []
    for version in VERSIONS:
        python = find(version)
        if python is None:
            print(f"unit-pythons: no Python {version} on this machine; skipped")
            continue
        venv = REPO / ".cache" / f"venv-{version}"
        stamp = venv / ".installed"
        wanted = (REPO / "requirements.txt").read_bytes() + (REPO / "requirements-dev.txt").read_bytes()
        if not stamp.exists() or stamp.read_bytes() != wanted:
            build(python, venv)
            stamp.write_bytes(wanted)
        if build_only:
            continue
        print(f"unit-pythons: the unit suite on Python {version}", flush=True)
        run = subprocess.run(
            [
                str(venv / "bin" / "pytest"),
                "-q",
                "-n",
                "auto",
                "--dist",
                "worksteal",
                "-p",
                "no:cacheprovider",
                "-m",
                "not timing",  # how redaction's time grows is the patterns', measured once, on the main Python
                "tests/unit",
            ],
            cwd=REPO,
        )
        if run.returncode != 0:
            failed.append(version)
    if failed:
        print(f"unit-pythons: failed on Python {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(build_only=sys.argv[1:] == ["--build-only"]))
