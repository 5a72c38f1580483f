"""SessionStart: the session's board, and the context the new session starts from (the latest handoff).

In a project that syncs, git fetches other machines' boards while the hook does its local
work, what arrived in time is imported, and a detached round is started last.
"""

from __future__ import annotations

import json
import os
import time
from types import ModuleType

from .. import context, handoff, migrate, recovery, render, session, who
from ..branch import see_head
from ..environment import current_venv
from ..fsutil import append_text
from ..hook import STARTED
from ..ids import optional_str
from ..live import Liveness
from ..locks import try_lock
from ..paths import PathResolver
from ..settings import Settings
from . import board_of, log_failure, note_sync_failure, usable_path

# Recovering sessions whose end never came, git asked for each, takes at most this long from the
# hook's start, however many there are; those left are recovered by the next start.
RECOVERY_SECONDS = 1.0
MAX_NEIGHBOURS = 5  # other live sessions read for the context (about as many as fit its 1 500 characters)
NEIGHBOUR_FILES = 3  # of the files each edited, the newest named in the context (`blackboard who` names six)


def run(event: str, payload: dict[str, object], settings: Settings) -> str:
    source = optional_str(payload.get("source"))
    resolver, session_id = board_of(payload, settings, new_session=source in (None, "startup", "clear", "fork"))
    sync = _sync_of(resolver)
    fetch = sync.start_fetch(resolver, settings) if sync else None  # first: git fetches during the local work
    source = source if source in session.SOURCES else "startup"
    abandoned: list[str] = []
    troubled = False
    liveness = Liveness(resolver, settings)  # each live session's metadata read once, for all that follows
    cwd = usable_path(payload.get("cwd")) or os.getcwd()
    try:
        migrate.migrate_if_needed(resolver, cwd, settings.home, settings.environ)
        session.publish_pending(resolver, settings)
        abandoned = recovery.recover(resolver, session_id, settings, STARTED + RECOVERY_SECONDS, liveness)
    except Exception:  # noqa: BLE001 - a failed migration or recovery must not cost the session its board
        log_failure(event, settings)
        troubled = True
    try:
        _publish_what_an_import_left(resolver)
    except Exception:  # noqa: BLE001 - nor a marker it cannot publish or remove: it costs no recovery
        log_failure(event, settings)
        troubled = True
    try:
        started = session.start(resolver, session_id, source, payload, settings)
    except BaseException:
        if fetch is not None:
            fetch.stop()  # never leave a git running after the hook
        raise
    try:
        recovery.close_past(resolver, session_id, settings, STARTED + RECOVERY_SECONDS, liveness)  # after its parent
    except Exception:  # noqa: BLE001 - a past it cannot close costs the session nothing else
        log_failure(event, settings)
        troubled = True
    try:
        _export_env(settings.env_file, session_id, started.board_dir)
        if not started.reopened:  # a session going on compares with what it saw last, at its next prompt
            see_head(resolver, session_id, cwd)  # what this session's checkout is at: a move by another is told
    except Exception:  # noqa: BLE001 - an unusable env file costs the Bash tool its variables, not the context
        log_failure(event, settings)
        troubled = True
    if sync and fetch is not None:
        _finish_fetch(sync, resolver, fetch, settings)
    try:
        return _start_context(resolver, session_id, source, started.reopened, abandoned, troubled, settings, liveness)
    finally:
        if sync and fetch is not None:
            _start_round(sync, resolver, settings)  # last: a new process takes the machine's attention


def _publish_what_an_import_left(resolver: PathResolver) -> None:
    """An import killed before it published (``handoff.publish_what_an_import_left``), whether or not this
    start imports anything, and with sync off too: when no round is under way, which would hold the marker."""
    if not os.path.lexists(resolver.sync_file("publishing")):
        return
    release = try_lock(resolver.sync_file("round"))
    if release is not None:
        try:
            handoff.publish_what_an_import_left(resolver)
        finally:
            release()


def _sync_of(resolver: PathResolver) -> ModuleType | None:
    """``sync`` in a project that syncs, else None: its import takes 43 ms, which only a project that
    opted in pays for (ADR 27)."""
    if not os.path.isfile(resolver.sync_file("config.json")):
        return None
    from .. import sync

    return sync


def _start_context(
    resolver: PathResolver,
    session_id: str,
    source: str,
    reopened: bool,
    abandoned: list[str],
    troubled: bool,
    settings: Settings,
    liveness: Liveness,
) -> str:
    """SessionStart's JSON: the context for the model, and a line for the person when there is news.

    Nothing a repository brought (``context.shipped``) is presented as the user's past.
    """
    limit = settings.context_chars
    own_board = source == "compact" or (source == "resume" and reopened)
    latest = None if own_board else handoff.read_handoff(resolver.latest_handoff_path())
    refused, abandoned = context.shipped(resolver, latest[0] if latest else None, abandoned, settings.environ)
    latest = None if refused else latest
    if own_board:
        live = len(liveness.others(exclude=session_id))
        text = context.for_own_board(resolver, session_id, source == "compact", limit)
    else:
        found, live = who.neighbours(resolver, settings, session_id, MAX_NEIGHBOURS, liveness)
        shown = who.lines(found, live, resolver.project.toplevel, NEIGHBOUR_FILES, context.MAX_OTHERS)
        others = "\n".join(shown + render.remote_active_lines(resolver))
        branch = resolver.project.git_branch
        text = context.for_new_session(resolver, session_id, branch, limit, latest, refused, others)
    output: dict[str, object] = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    message = context.status_line(latest[0] if latest else {}, len(abandoned), troubled, refused, live)
    if message:
        output["systemMessage"] = message  # shown to the person in Claude Code's interface
    return json.dumps(output)


def _finish_fetch(sync: ModuleType, resolver: PathResolver, fetch: object, settings: Settings) -> None:
    """Import what arrived within ``BLACKBOARD_SYNC_TIMEOUT`` of the hook's start (the round started later pushes).

    An unreachable or hanging remote costs the session a line in ``blackboard sync status``
    and in ``logs/sync.log``, nothing more.
    """
    try:
        sync.finish_fetch(resolver, fetch, settings, STARTED + settings.sync_timeout)
    except Exception as exc:  # noqa: BLE001 - the remote is someone else's problem, never the session's
        note_sync_failure(f"session-start: {exc} ({time.monotonic() - STARTED:.2f}s)", settings)


def _start_round(sync: ModuleType, resolver: PathResolver, settings: Settings) -> None:
    """A detached round: a slow remote gets the time a round has, and the round says this session is active."""
    try:
        sync.start_background_round(resolver, settings)
    except Exception as exc:  # noqa: BLE001 - the remote is someone else's problem, never the session's
        note_sync_failure(f"session-start: no round started: {exc}", settings)


def _export_env(env_file: str | None, session_id: str, board_dir: str) -> None:
    """The session's variables for the Bash tool, through ``CLAUDE_ENV_FILE``: its id, its board, the environment."""
    if not env_file:
        return
    exports = {"BLACKBOARD_SESSION_ID": session_id, "BLACKBOARD_DIR": board_dir}
    venv = current_venv()
    if venv:
        exports["BLACKBOARD_VENV"] = venv  # so `blackboard` in the Bash tool finds this environment
    append_text(env_file, "".join(f"export {name}={_quote(value)}\n" for name, value in exports.items()))


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"
