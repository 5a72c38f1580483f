"""Hook entry point: parse stdin, call the library, print the JSON, exit 0 whatever happens.

Imports stay minimal on purpose: this runs on every session start (docs/adr/0006-dependency-bootstrap.md).
"""

from __future__ import annotations

import os
import sys

from . import jsonfast
from .errors import BlackboardError
from .ids import optional_str

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional

EVENTS = ("session-start", "session-end", "stop", "pre-compact")
MAX_STDIN = 1 << 20
MAX_LOG_BYTES = 1 << 20


def read_payload(stream: Any) -> Dict[str, Any]:
    """The hook's stdin JSON object; anything else (empty, invalid, huge, not an object) is ``{}``."""
    raw = getattr(stream, "buffer", stream).read(MAX_STDIN + 1)
    if not raw or len(raw) > MAX_STDIN:
        return {}
    try:
        data = jsonfast.loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError is one
        return {}
    return data if isinstance(data, dict) else {}


def run(event: str, payload: Dict[str, Any], environ: Mapping[str, str]) -> Optional[str]:
    """Do what ``event`` means; returns the JSON to print, if any."""
    from . import session
    from .ids import resolve_session_id
    from .paths import PathResolver

    session_id = resolve_session_id(payload.get("session_id"), environ)
    cwd = _usable_path(payload.get("cwd")) or os.getcwd()
    resolver = PathResolver.for_cwd(cwd, environ)
    new_session = event == "session-start" and optional_str(payload.get("source")) in (None, "startup", "clear", "fork")
    if not new_session:
        # The agent may have changed directory since the session started: find its board by id.
        resolver = resolver.owner_of(session_id) or resolver
    if event == "session-start":
        return _session_start(resolver, session_id, payload, environ)
    if event in ("stop", "pre-compact"):
        session.checkpoint(resolver, session_id)
    elif event == "session-end":
        session.end(resolver, session_id, (optional_str(payload.get("reason")) or "other")[:64])
    return None


def _usable_path(value: object) -> Optional[str]:
    """``value`` when the OS can take it as a path; a NUL or a lone surrogate (hostile JSON) gives None."""
    text = optional_str(value)
    try:
        return text if text is not None and b"\0" not in os.fsencode(text) else None
    except UnicodeEncodeError:
        return None


def _session_start(resolver: Any, session_id: str, payload: Dict[str, Any], environ: Mapping[str, str]) -> str:
    from . import context, migrate, recovery, session

    source = optional_str(payload.get("source"))
    source = source if source in session.SOURCES else "startup"
    for step in (migrate.migrate_if_needed, lambda r: recovery.recover(r, session_id, environ)):
        try:
            step(resolver)
        except Exception:  # noqa: BLE001 - a failed migration or recovery must not cost the session its board
            log_failure("session-start", environ)
    started = session.start(resolver, session_id, source, payload, environ.get("CLAUDE_PID"))
    _export_env(environ.get("CLAUDE_ENV_FILE"), session_id, started.board_dir)
    limit = context.char_limit(environ)
    if source == "compact" or (source == "resume" and started.reopened):
        text = context.for_own_board(resolver, session_id, source == "compact", limit)
    else:
        text = context.for_new_session(resolver, session_id, resolver.project.git_branch, limit)
    output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return jsonfast.dumps(output)


def _export_env(env_file: Optional[str], session_id: str, board_dir: str) -> None:
    if not env_file:
        return
    from .fsutil import append_text

    exports = {"BLACKBOARD_SESSION_ID": session_id, "BLACKBOARD_DIR": board_dir}
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))  # sys.prefix is not it under -S
    if os.path.exists(os.path.join(venv, ".blackboard-requirements")):
        exports["BLACKBOARD_VENV"] = venv  # so `blackboard` in the Bash tool finds this environment
    append_text(env_file, "".join(f"export {name}={_quote(value)}\n" for name, value in exports.items()))


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def log_failure(event: str, environ: Mapping[str, str]) -> None:
    """Append the current exception to ``$ROOT/logs/hooks.log`` (bounded) and say one line on stderr."""
    import time
    import traceback

    exc = sys.exc_info()[1]
    summary = str(exc) if isinstance(exc, BlackboardError) else f"{type(exc).__name__}: {exc}"
    where = "logging failed too"
    try:
        from .paths import default_root

        logs = os.path.join(default_root(environ), "logs")
        os.makedirs(logs, exist_ok=True)
        path = os.path.join(logs, "hooks.log")
        if os.path.exists(path) and os.path.getsize(path) > MAX_LOG_BYTES:
            os.replace(path, path + ".1")
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {event} pid={os.getpid()}\n")
            handle.write(traceback.format_exc() + "\n")
        where = f"details in {path}"
    except Exception:  # noqa: BLE001 - the log is best effort; the one stderr line still goes out
        pass
    sys.stderr.write(f"blackboard: {event} hook failed: {summary.splitlines()[0] if summary else ''} ({where})\n")


def main(argv: Optional[list] = None) -> int:
    """``hook.py EVENT``: always returns 0 so Claude Code's session is never disturbed."""
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else ""
    try:
        if event not in EVENTS:
            raise BlackboardError(f"unknown hook event {event!r}; expected one of {', '.join(EVENTS)}")
        output = run(event, read_payload(sys.stdin), os.environ)
        if output:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a hook must never break the session, whatever happened
        try:
            log_failure(event, os.environ)
        except BaseException:  # noqa: BLE001 - nothing is left to tell
            pass
    return 0
