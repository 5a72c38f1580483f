"""Where unexpected failures go: a bounded log under ``$ROOT/logs/``, and one line for the person.

Example: ``~/.claude/blackboard/logs/hooks.log`` for the hooks, ``logs/cli.log`` for the command.
"""

from __future__ import annotations

import os
import sys
import traceback

from .clock import compact_now, now_iso
from .errors import BlackboardError
from .fsutil import append_line, make_dirs
from .paths import log_path
from .redact import redact_remote
from .settings import Settings

MAX_LOG_BYTES = 1 << 20  # then the log is rotated to ``{name}.log.1``


def record(name: str, title: str, settings: Settings | None) -> str:
    """Append the exception being handled, with its traceback, to ``logs/{name}.log``.

    Returns where the details went, for the one line a person sees; never raises.
    """
    return note(name, f"{title} pid={os.getpid()}\n{traceback.format_exc()}", settings)


def note(name: str, text: str, settings: Settings | None) -> str:
    """Append ``text``, redacted, to ``logs/{name}.log`` (bounded); returns where it went. Never raises.

    ``settings`` is None when they could not be read: nothing is logged then.
    """
    try:
        if settings is None:
            return "logging failed too"
        root = settings.root
        path = log_path(root, name)
        if os.path.islink(os.path.dirname(path)):  # never log through a link out of the root
            os.replace(os.path.dirname(path), f"{os.path.dirname(path)}.broken-{compact_now()}")
        make_dirs(os.path.dirname(path))
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
            os.replace(path, f"{path}.broken-{compact_now()}")  # a folder or link there must not silence the log
        elif os.path.exists(path) and os.path.getsize(path) > MAX_LOG_BYTES:
            os.replace(path, path + ".1")
        # private as every file under the root (0600 whatever the umask), in one write, never through a link;
        # git's messages may quote a remote with its token
        append_line(path, f"{now_iso()} {redact_remote(text)}")
        if os.stat(path).st_mode & 0o077:  # a log an earlier version made with the umask's bits
            os.chmod(path, 0o600)
    except Exception:  # noqa: BLE001 - the log is best effort; the one line still goes out
        return "logging failed too"
    return f"details in {path}"


def summary() -> str:
    """The first line of the exception being handled: its message, with its type when it is a bug."""
    exc = sys.exc_info()[1]
    text = str(exc) if isinstance(exc, BlackboardError) else f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0] if text else type(exc).__name__
