"""What each Claude Code hook event does: parse stdin, call the library, print the JSON, exit 0.

``hooks/launch.py`` starts it. Each event imports only the modules it uses: SessionStart
runs on every session start and Stop after every turn (their budgets are in bench/).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping

from . import settings
from .errors import BlackboardError
from .ids import is_session_id, optional_str
from .paths import PathResolver

STARTED = time.monotonic()  # the hook's start: SessionStart's fetch is bounded from here
EVENTS = (
    "session-start",
    "session-end",
    "stop",
    "pre-compact",
    "pre-tool-use",
    "user-prompt-submit",
    "post-tool-use",
    "sync",  # a detached round
)
MAX_STDIN = 1 << 20


def read_payload(raw: bytes) -> tuple[dict[str, object], str | None]:
    """The hook's stdin JSON object (read up to ``MAX_STDIN + 1`` bytes), and what was wrong with it.

    UTF-8 (with or without a BOM) and UTF-16 with a BOM are read. Anything else (invalid, not
    an object, over ``MAX_STDIN``) gives ``{}`` and a problem to say: the session is then named
    by the environment, as with an empty stdin, but never without a word.
    """
    utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    try:
        # "utf-8-sig" would load one more codec module on every hook: the BOM is dropped here
        text = raw.decode("utf-16") if utf16 else raw.decode("utf-8").removeprefix("\ufeff")
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        data = None
    if not isinstance(data, dict) or len(raw) > MAX_STDIN:
        return {}, f"stdin is not the JSON object Claude Code sends ({len(raw)} bytes); it was ignored"
    return data, None


def run(event: str, payload: dict[str, object], environ: Mapping[str, str]) -> str | None:
    """Do what ``event`` means; returns the JSON to print, if any."""
    if event == "pre-tool-use":
        return _pre_tool_use(payload, environ)
    if event == "sync":
        _background_sync(payload, environ)
        return None
    from .ids import resolve_session_id
    from .registry import find_owner

    session_id = resolve_session_id(payload.get("session_id"), environ)
    cwd = _usable_path(payload.get("cwd")) or os.getcwd()
    resolver = PathResolver.for_cwd(cwd, environ)
    new_session = event == "session-start" and optional_str(payload.get("source")) in (None, "startup", "clear", "fork")
    if not new_session:
        # The agent may have changed directory since the session started: find its board by id.
        resolver = find_owner(resolver, session_id) or resolver
    if event in ("user-prompt-submit", "post-tool-use"):
        _capture(event, resolver, session_id, payload, environ)
        return None  # after every prompt and edit: nothing more, and nothing more imported
    if event == "stop":
        try:
            _capture(event, resolver, session_id, payload, environ)
        except Exception:  # noqa: BLE001 - a digest that could not take the message must not cost the checkpoint
            log_failure(event, environ)
    if event == "session-start":
        return _session_start(resolver, session_id, payload, environ)
    from . import session

    if event in ("stop", "pre-compact"):
        session.checkpoint(resolver, session_id, environ)
    elif event == "session-end":
        session.end(resolver, session_id, (optional_str(payload.get("reason")) or "other")[:64], environ)
        if os.path.isfile(resolver.sync_file("config.json")):
            from . import sync

            sync.start_background_round(resolver, environ)  # SessionEnd never waits on the network
    return None


def _capture(
    event: str, resolver: PathResolver, session_id: str, payload: dict[str, object], environ: Mapping[str, str]
) -> None:
    """Add what this event tells of the session to its digest (``digest``), unless ``BLACKBOARD_DIGEST=0``.

    Only into a session that has a board: an event of a session this plugin never started
    creates nothing.
    """
    if not settings.digest_sources(environ).enabled or not os.path.isfile(resolver.meta_path(session_id)):
        return
    from . import digest
    from .fsutil import refuse_links

    path = resolver.digest_path(session_id)
    refuse_links(resolver.root, path)
    if event == "user-prompt-submit":
        digest.record_prompt(path, payload.get("prompt"))
    elif event == "stop":
        digest.record_stop(path, payload.get("last_assistant_message"))
    else:
        tool_input = payload.get("tool_input")
        file_path = (
            tool_input.get("file_path") or tool_input.get("notebook_path") if isinstance(tool_input, dict) else None
        )
        project_dir = resolver.project.toplevel or _usable_path(payload.get("cwd"))
        digest.record_edit(path, payload.get("tool_name"), file_path, project_dir)


def _background_sync(payload: dict[str, object], environ: Mapping[str, str]) -> None:
    """A sync round started by a hook (``sync.start_background_round``), detached from the session.

    Its stdin was read to the end first, and the hook that started it holds that pipe open
    until it exits: the round's work begins once the hook is done.
    """
    from . import sync
    from .project import Project, safe_segment

    org, name = optional_str(payload.get("org")), optional_str(payload.get("project"))
    if not org or not name or org != safe_segment(org) or name != safe_segment(name):
        raise BlackboardError(f"sync: not a project: {org!r}/{name!r}")
    resolver = PathResolver(settings.root(environ), Project(org, name, None, "a background sync round"))
    if sync.enabled(resolver):
        sync.background_round(resolver, environ)


def _pre_tool_use(payload: dict[str, object], environ: Mapping[str, str]) -> str | None:
    """Approve a plain board command (``approve.decision``); say nothing about anything else."""
    from .approve import decision
    from .environment import PLUGIN_ROOT

    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if payload.get("tool_name") != "Bash" or not settings.auto_allow(environ):
        return None
    cwd = _usable_path(payload.get("cwd"))

    deadline = time.monotonic() + 0.8  # for every --file together

    def in_this_project(session_id: str) -> bool:
        resolver = PathResolver.for_cwd(cwd or os.getcwd(), environ)
        return is_session_id(session_id) and os.path.isfile(resolver.meta_path(session_id))

    def ignored(path: str) -> bool:
        from .changes import excluded_by_the_person, git_ignores  # only for a --file: they run git
        from .gitinfo import checkout_around

        real = os.path.realpath(os.path.join(cwd, path)) if cwd else ""
        if not real:
            return True
        project = checkout_around(cwd or "")[0]
        if project is not None and checkout_around(os.path.dirname(real))[0] != project:
            return True  # a `.git` of its own below the project's (one file can make one): git would ask it
        return git_ignores(real, environ, deadline) or excluded_by_the_person(real, environ, deadline)

    if not decision(command, cwd, PLUGIN_ROOT, payload.get("session_id"), in_this_project, ignored):
        return None
    reason = "blackboard: a board command that only reads or writes this session's own board"
    output = {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": reason}
    return json.dumps({"hookSpecificOutput": output})


def _usable_path(value: object) -> str | None:
    """``value`` when the OS can take it as a path; a NUL or a lone surrogate (hostile JSON) gives None."""
    text = optional_str(value)
    try:
        return text if text is not None and b"\0" not in os.fsencode(text) else None
    except UnicodeEncodeError:
        return None


def _session_start(
    resolver: PathResolver, session_id: str, payload: dict[str, object], environ: Mapping[str, str]
) -> str:
    fetch = _start_fetch(resolver, environ)  # first: git fetches while this hook does its local work
    from . import migrate, recovery, session

    source = optional_str(payload.get("source"))
    source = source if source in session.SOURCES else "startup"
    abandoned: list[str] = []
    troubled = False
    try:
        cwd = _usable_path(payload.get("cwd")) or os.getcwd()
        migrate.migrate_if_needed(resolver, cwd, os.path.expanduser("~"), environ)
        session.publish_pending(resolver, environ)
        abandoned = recovery.recover(resolver, session_id, environ)
    except Exception:  # noqa: BLE001 - a failed migration or recovery must not cost the session its board
        log_failure("session-start", environ)
        troubled = True
    try:
        started = session.start(resolver, session_id, source, payload, environ.get("CLAUDE_PID"))
    except BaseException:
        if fetch is not None:
            fetch.stop()  # type: ignore[attr-defined]  # never leave a git running after the hook
        raise
    try:
        _export_env(environ.get("CLAUDE_ENV_FILE"), session_id, started.board_dir)
    except Exception:  # noqa: BLE001 - an unusable env file costs the Bash tool its variables, not the context
        log_failure("session-start", environ)
        troubled = True
    if fetch is not None:
        _finish_fetch(resolver, fetch, environ)
    try:
        return _start_context(resolver, session_id, source, started.reopened, abandoned, troubled, environ)
    finally:
        if fetch is not None:
            _start_round(resolver, environ)  # last: a new process takes the machine's attention


def _start_context(
    resolver: PathResolver,
    session_id: str,
    source: str,
    reopened: bool,
    abandoned: list[str],
    troubled: bool,
    environ: Mapping[str, str],
) -> str:
    """SessionStart's JSON: the context for the model, and a line for the person when there is news.

    Nothing a repository brought (``context.shipped``) is presented as the user's past.
    """
    from . import context, handoff

    limit = settings.context_chars(environ)
    own_board = source == "compact" or (source == "resume" and reopened)
    latest = None if own_board else handoff.read_handoff(resolver.latest_handoff_path())
    refused, abandoned = context.shipped(resolver, latest[0] if latest else None, abandoned, environ)
    latest = None if refused else latest
    if own_board:
        text = context.for_own_board(resolver, session_id, source == "compact", limit)
    else:
        text = context.for_new_session(resolver, session_id, resolver.project.git_branch, limit, latest, refused)
    output: dict[str, object] = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    message = context.status_line(latest[0] if latest else {}, len(abandoned), troubled, refused)
    if message:
        output["systemMessage"] = message  # shown to the person in Claude Code's interface
    return json.dumps(output)


def _start_fetch(resolver: PathResolver, environ: Mapping[str, str]) -> object | None:
    """Start fetching other machines' boards while the hook does its local work; None when sync is off."""
    if not os.path.isfile(resolver.sync_file("config.json")):
        return None
    from . import sync

    return sync.start_fetch(resolver, environ)


def _finish_fetch(resolver: PathResolver, fetch: object, environ: Mapping[str, str]) -> None:
    """Import what arrived within ``BLACKBOARD_SYNC_TIMEOUT`` of the hook's start (the round started later pushes).

    An unreachable or hanging remote costs the session a line in ``blackboard sync status``
    and in ``logs/sync.log``, nothing more.
    """
    from . import sync

    try:
        sync.finish_fetch(resolver, fetch, environ, STARTED + settings.sync_timeout(environ))  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - the remote is someone else's problem, never the session's
        from . import failures

        failures.note("sync", f"session-start: {exc} ({time.monotonic() - STARTED:.2f}s)", environ)


def _start_round(resolver: PathResolver, environ: Mapping[str, str]) -> None:
    """A detached round: a slow remote gets the time a round has, and the round says this session is active."""
    from . import sync

    try:
        sync.start_background_round(resolver, environ)
    except Exception as exc:  # noqa: BLE001 - the remote is someone else's problem, never the session's
        from . import failures

        failures.note("sync", f"session-start: no round started: {exc}", environ)


def _export_env(env_file: str | None, session_id: str, board_dir: str) -> None:
    if not env_file:
        return
    from .environment import current_venv
    from .fsutil import append_text

    exports = {"BLACKBOARD_SESSION_ID": session_id, "BLACKBOARD_DIR": board_dir}
    venv = current_venv()
    if venv:
        exports["BLACKBOARD_VENV"] = venv  # so `blackboard` in the Bash tool finds this environment
    append_text(env_file, "".join(f"export {name}={_quote(value)}\n" for name, value in exports.items()))


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def _say(event: str, problem: str, environ: Mapping[str, str]) -> None:
    """One line on stderr, and the same in the log, about input the hook could not use."""
    from . import failures

    failures.note("hooks", f"{event}: {problem}", environ)
    sys.stderr.write(f"blackboard: {event} hook: {problem}\n")


def log_failure(event: str, environ: Mapping[str, str]) -> None:
    """Log the exception being handled to ``$ROOT/logs/hooks.log`` and say one line on stderr."""
    from . import failures

    where = failures.record("hooks", event, environ)
    sys.stderr.write(f"blackboard: {event} hook failed: {failures.summary()} ({where})\n")


def main(argv: list[str] | None = None) -> int:
    """``hook.py EVENT``: always returns 0 so Claude Code's session is never disturbed."""
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else ""
    try:
        if event not in EVENTS:
            raise BlackboardError(f"unknown hook event {event!r}; expected one of {', '.join(EVENTS)}")
        payload, problem = read_payload(sys.stdin.buffer.read(MAX_STDIN + 1))
        if problem:
            _say(event, problem, os.environ)
        output = run(event, payload, os.environ)
        if output:
            sys.stdout.write(output + "\n")
            sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - a hook must never break the session, whatever happened
        with contextlib.suppress(BaseException):  # nothing is left to tell
            log_failure(event, os.environ)
    return 0
