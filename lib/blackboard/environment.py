"""The plugin's own Python environment: a venv built from ``requirements.txt``, and whether it is ready.

Standard library only: ``hooks/bootstrap.py`` uses it before any dependency is installed.
Example: ``~/.claude/plugins/data/blackboard/venv/.blackboard-requirements``.
"""

from __future__ import annotations

import json
import os
import sys

STAMP = ".blackboard-requirements"  # a copy of the requirements the environment was built from
STALE = 75  # exit status of the command when its environment is stale, before it has read its input
PLUGIN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUIREMENTS = os.path.join(PLUGIN_ROOT, "requirements.txt")
MANIFEST = os.path.join(PLUGIN_ROOT, ".claude-plugin", "plugin.json")  # the one place the version is declared


def plugin_version() -> str:
    """The plugin's version, as its manifest declares it (what Claude Code shows); ``unknown`` without one."""

    try:
        with open(MANIFEST, encoding="utf-8") as handle:
            version = json.load(handle).get("version")
    except (OSError, ValueError, AttributeError):
        return "unknown"
    return version if isinstance(version, str) else "unknown"


def ready(venv: str, requirements: str = REQUIREMENTS) -> bool:
    """True when ``venv`` was built from exactly these requirements and has its interpreter."""
    try:
        with open(os.path.join(venv, STAMP), "rb") as stamp, open(requirements, "rb") as wanted:
            same = stamp.read() == wanted.read()
    except OSError:
        return False
    return same and os.path.exists(os.path.join(venv, "bin", "python"))


def current_venv() -> str | None:
    """The plugin environment this interpreter belongs to, or None when it is the machine's python3."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))  # with or without ``site``
    return venv if os.path.exists(os.path.join(venv, STAMP)) else None
