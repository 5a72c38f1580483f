"""Every ``BLACKBOARD_*`` setting in one place: its variable, default and bounds.

Each function takes the environment it reads (``os.environ`` by default) so tests can pass
their own. A value that is out of bounds or not a number falls back to the default: a
setting never breaks a hook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .clock import parse_duration
from .errors import BlackboardError

SESSION_ID_VARS = ("BLACKBOARD_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID")
ROOT_VARS = ("BLACKBOARD_ROOT", "MNEMONIC_ROOT")
DEFAULT_CONTEXT_CHARS = 8000
MIN_CONTEXT_CHARS = 2000  # room for the header, the cut marker and the usage line
MAX_CONTEXT_CHARS = 9500  # Claude Code cuts additionalContext over 10 000 characters to a preview
DEFAULT_MAX_VALUE_CHARS = 10_000
MAX_MAX_VALUE_CHARS = 1_000_000
DEFAULT_ABANDON_AFTER = 24 * 3600.0
DEFAULT_SYNC_TIMEOUT = 1.5


def root(environ: Mapping[str, str] = os.environ) -> str:
    """``$BLACKBOARD_ROOT``, else ``$MNEMONIC_ROOT``, else ``~/.claude/blackboard``."""
    name = root_source(environ)
    if name is None:
        return os.path.join(os.path.expanduser("~"), ".claude", "blackboard")
    value = os.path.expanduser(environ[name])
    if not os.path.isabs(value):
        raise BlackboardError(f"{name}={environ[name]!r} is a relative path; set it to an absolute one")
    return os.path.normpath(value)


def root_source(environ: Mapping[str, str] = os.environ) -> str | None:
    """The variable the root comes from, or None for the default."""
    return next((name for name in ROOT_VARS if environ.get(name)), None)


def context_chars(environ: Mapping[str, str] = os.environ) -> int:
    """``$BLACKBOARD_CONTEXT_CHARS``: most characters injected at SessionStart (2000-9500, default 8000)."""
    value = _int(environ, "BLACKBOARD_CONTEXT_CHARS", DEFAULT_CONTEXT_CHARS)
    return max(MIN_CONTEXT_CHARS, min(value, MAX_CONTEXT_CHARS))


def max_value_chars(environ: Mapping[str, str] = os.environ) -> int:
    """``$BLACKBOARD_MAX_VALUE_CHARS``: the longest note, task or value (1 to 1 000 000, default 10 000)."""
    value = _int(environ, "BLACKBOARD_MAX_VALUE_CHARS", DEFAULT_MAX_VALUE_CHARS)
    return value if 1 <= value <= MAX_MAX_VALUE_CHARS else DEFAULT_MAX_VALUE_CHARS


def abandon_after(environ: Mapping[str, str] = os.environ) -> float:
    """``$BLACKBOARD_ABANDON_AFTER`` (``6h``, ``2d``; default 24h) in seconds."""

    try:
        return parse_duration(environ.get("BLACKBOARD_ABANDON_AFTER", "24h"))
    except ValueError:
        return DEFAULT_ABANDON_AFTER


def auto_allow(environ: Mapping[str, str] = os.environ) -> bool:
    """``$BLACKBOARD_AUTO_ALLOW``: approve plain board commands without asking (default on; ``0`` turns it off)."""
    return _flag(environ, "BLACKBOARD_AUTO_ALLOW")


def author(explicit: str | None, environ: Mapping[str, str] = os.environ) -> str:
    """Who writes: ``--author``, else ``$BLACKBOARD_AGENT``, else ``main``."""
    return explicit or environ.get("BLACKBOARD_AGENT") or "main"


def host(environ: Mapping[str, str] = os.environ) -> str:
    """This machine's name: ``$BLACKBOARD_HOST``, else the host name."""
    return environ.get("BLACKBOARD_HOST") or os.uname().nodename


def sync_timeout(environ: Mapping[str, str] = os.environ) -> float:
    """``$BLACKBOARD_SYNC_TIMEOUT``: seconds SessionStart waits for a fetch (0.1 to 30, default 1.5)."""
    try:
        value = float(environ.get("BLACKBOARD_SYNC_TIMEOUT", DEFAULT_SYNC_TIMEOUT))
    except ValueError:
        return DEFAULT_SYNC_TIMEOUT
    return value if 0.1 <= value <= 30 else DEFAULT_SYNC_TIMEOUT


class DigestSources:
    """Where the handoff's digest may come from: whether capture is on, and Claude Code's own folder."""

    __slots__ = ("enabled", "claude_dir")

    def __init__(self, enabled: bool, claude_dir: str) -> None:
        self.enabled = enabled
        self.claude_dir = claude_dir


def digest_sources(environ: Mapping[str, str] = os.environ) -> DigestSources:
    """``$BLACKBOARD_DIGEST`` (default on; ``0`` turns capture off) and ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    enabled = _flag(environ, "BLACKBOARD_DIGEST")
    config = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return DigestSources(enabled, os.path.abspath(os.path.expanduser(config)))


def _flag(environ: Mapping[str, str], name: str) -> bool:
    """A setting that is on unless ``0``, ``false``, ``no`` or ``off``."""
    return environ.get(name, "1").strip().lower() not in ("0", "false", "no", "off")


def _int(environ: Mapping[str, str], name: str, default: int) -> int:
    try:
        return int(environ.get(name, default))
    except ValueError:
        return default
