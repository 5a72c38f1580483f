"""Every setting, read once where the plugin starts (a hook, the command) and passed down.

``Settings(os.environ)`` is built at each entry point; the library reads its settings, and the
environment its git runs with, from that object and never from ``os.environ``. A value that is
out of bounds or not a number falls back to its default: a setting never breaks a hook.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from types import MappingProxyType

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
DEFAULT_EDIT_WINDOW = 30 * 60.0
DEFAULT_END_GIT_TIMEOUT = 0.2  # SessionEnd ends within 300 ms even where git takes longer
MAX_END_GIT_TIMEOUT = 1.0  # Claude Code cancels SessionEnd after about 1.5 s


class Settings:
    """The settings of one run, frozen: built from an environment, never changed after.

    ``environ`` is a read-only copy of that environment, for the processes the plugin starts
    (git, a background round). ``root`` raises the one-line error of a relative root only
    where a root is needed, so ``blackboard --version`` still answers.
    """

    __slots__ = (
        "environ",
        "home",
        "root_source",
        "_root",
        "_root_problem",
        "named_session",
        "agent",
        "host",
        "context_chars",
        "max_value_chars",
        "abandon_after",
        "auto_allow",
        "sync_timeout",
        "end_git_timeout",
        "digest",
        "claude_dir",
        "claude_pid",
        "env_file",
        "edit_window",
        "attended",
    )
    environ: Mapping[str, str]
    home: str  # ``$HOME`` when it is an absolute path, else the account's home folder; "" when there is none
    root_source: str | None  # the variable the root comes from, None for the default
    _root: str
    _root_problem: str | None
    named_session: tuple[str, str] | None  # the first of SESSION_ID_VARS that is set: (name, id)
    agent: str | None  # ``$BLACKBOARD_AGENT``: who writes when ``--author`` is not given
    host: str  # ``$BLACKBOARD_HOST``, else the host name
    context_chars: int  # ``$BLACKBOARD_CONTEXT_CHARS``: most characters injected at SessionStart
    max_value_chars: int  # ``$BLACKBOARD_MAX_VALUE_CHARS``: the longest note, task or value
    abandon_after: float  # ``$BLACKBOARD_ABANDON_AFTER`` (``6h``, ``2d``) in seconds
    auto_allow: bool  # ``$BLACKBOARD_AUTO_ALLOW``: approve plain board commands without asking
    sync_timeout: float  # ``$BLACKBOARD_SYNC_TIMEOUT``: seconds SessionStart waits for a fetch
    end_git_timeout: float  # ``$BLACKBOARD_END_GIT_TIMEOUT``: seconds SessionEnd asks git for, from its start
    digest: bool  # ``$BLACKBOARD_DIGEST``: whether the hooks capture prompts and edits for the digest
    claude_dir: str  # ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``: where Claude Code keeps transcripts ("": none)
    claude_pid: str | None  # ``$CLAUDE_PID``: the Claude Code process running the hooks
    env_file: str | None  # ``$CLAUDE_ENV_FILE``: where SessionStart exports variables for the Bash tool
    edit_window: float  # ``$BLACKBOARD_EDIT_WINDOW`` (``30m``): how recent another session's edit is guarded; 0 off
    attended: bool | None  # ``$CLAUDE_CODE_SESSION_ATTENDED``: False in ``claude -p``, where no person can be asked

    def __init__(self, environ: Mapping[str, str]) -> None:
        copy = MappingProxyType(dict(environ))
        home = copy.get("HOME", "")
        home = home if os.path.isabs(home) else _account_home()
        source = next((name for name in ROOT_VARS if copy.get(name)), None)
        root, problem = _root(copy, source, home)
        named = next(((name, copy[name]) for name in SESSION_ID_VARS if copy.get(name)), None)
        context_chars = _int(copy, "BLACKBOARD_CONTEXT_CHARS", DEFAULT_CONTEXT_CHARS)
        value_chars = _int(copy, "BLACKBOARD_MAX_VALUE_CHARS", DEFAULT_MAX_VALUE_CHARS)
        sync_timeout = _float(copy, "BLACKBOARD_SYNC_TIMEOUT", DEFAULT_SYNC_TIMEOUT)
        end_git = _float(copy, "BLACKBOARD_END_GIT_TIMEOUT", DEFAULT_END_GIT_TIMEOUT)
        claude_dir = expand_user(copy.get("CLAUDE_CONFIG_DIR") or "~/.claude", home)
        values = {
            "environ": copy,
            "home": home,
            "root_source": source,
            "_root": root,
            "_root_problem": problem,
            "named_session": named,
            "agent": copy.get("BLACKBOARD_AGENT") or None,
            "host": copy.get("BLACKBOARD_HOST") or os.uname().nodename,
            "context_chars": max(MIN_CONTEXT_CHARS, min(context_chars, MAX_CONTEXT_CHARS)),
            "max_value_chars": value_chars if 1 <= value_chars <= MAX_MAX_VALUE_CHARS else DEFAULT_MAX_VALUE_CHARS,
            "abandon_after": _duration(copy.get("BLACKBOARD_ABANDON_AFTER", "24h"), DEFAULT_ABANDON_AFTER),
            "auto_allow": _flag(copy, "BLACKBOARD_AUTO_ALLOW"),
            "sync_timeout": sync_timeout if 0.1 <= sync_timeout <= 30 else DEFAULT_SYNC_TIMEOUT,  # NaN is not
            "end_git_timeout": end_git if 0 <= end_git <= MAX_END_GIT_TIMEOUT else DEFAULT_END_GIT_TIMEOUT,
            "digest": _flag(copy, "BLACKBOARD_DIGEST"),
            "claude_dir": os.path.normpath(claude_dir) if os.path.isabs(claude_dir) else "",
            "claude_pid": copy.get("CLAUDE_PID") or None,
            "env_file": copy.get("CLAUDE_ENV_FILE") or None,
            "edit_window": _duration(copy.get("BLACKBOARD_EDIT_WINDOW", "30m"), DEFAULT_EDIT_WINDOW),
            "attended": {"0": False, "1": True}.get(copy.get("CLAUDE_CODE_SESSION_ATTENDED", "")),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"settings are read once, where the plugin starts; {name} cannot change")

    @property
    def root(self) -> str:
        """``$BLACKBOARD_ROOT``, else ``$MNEMONIC_ROOT``, else ``~/.claude/blackboard``."""
        if self._root_problem:
            raise BlackboardError(self._root_problem)
        return self._root

    def author(self, explicit: str | None) -> str:
        """Who writes: ``--author``, else ``$BLACKBOARD_AGENT``, else ``main``."""
        return explicit or self.agent or "main"


def _account_home() -> str:
    """The home folder of this process's account, or "" when the system knows none."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:  # a container's uid with no passwd entry
        return ""


def _root(environ: Mapping[str, str], source: str | None, home: str) -> tuple[str, str | None]:
    given = environ[source] if source is not None else "~/.claude/blackboard"
    value = expand_user(given, home)
    if value.startswith("~") and not home:
        return "", f"no home folder to find {given} in; set HOME, or BLACKBOARD_ROOT to an absolute path"
    if not os.path.isabs(value):
        return "", f"{source}={given!r} is a relative path; set it to an absolute one"
    return os.path.normpath(value), None


def expand_user(path: str, home: str) -> str:
    """``path`` with ``~`` and ``~/…`` in ``home`` (``Settings.home``), left as it is without one;
    ``~user`` is the system's to expand."""
    if path == "~" or path.startswith("~/"):
        return os.path.join(home, path[2:]) if home else path
    return os.path.expanduser(path)


def _flag(environ: Mapping[str, str], name: str) -> bool:
    """A setting that is on unless ``0``, ``false``, ``no`` or ``off``."""
    return environ.get(name, "1").strip().lower() not in ("0", "false", "no", "off")


def _int(environ: Mapping[str, str], name: str, default: int) -> int:
    try:
        return int(environ.get(name, default))
    except ValueError:
        return default


def _float(environ: Mapping[str, str], name: str, default: float) -> float:
    try:
        return float(environ.get(name, default))
    except ValueError:
        return default


def _duration(text: str, default: float) -> float:
    try:
        return parse_duration(text)
    except ValueError:
        return default
