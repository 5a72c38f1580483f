"""Sessions whose SessionEnd never fired (Ctrl+C, a crash, the 1.5 s budget): marked abandoned.

Checked at SessionStart from the project's active markers only, so the cost does not grow
with the number of ended sessions.
"""

from __future__ import annotations

import os
import time

from . import handoff, session
from .clock import describe_age, epoch_seconds
from .errors import BlackboardError
from .fsutil import refuse_links
from .live import Liveness, of_process, same_process
from .meta import ABANDONED, ACTIVE, ENDED, Meta, update_meta
from .paths import META_FILE, PathResolver
from .registry import (
    active_session_ids,
    last_active,
    last_activity,
    mark_unpublished,
    session_dir,
    unmark_active,
    unmark_unpublished,
)
from .settings import Settings


class _NoLongerActive(Exception):
    pass


def stale_reason(
    resolver: PathResolver, meta: Meta, limit: float, host: str, liveness: Liveness | None = None
) -> str | None:
    """Why an ``active`` session is really gone, or None while it may still be running."""
    pid = meta.get("claude_pid")
    if isinstance(pid, int) and meta.get("host") == host and _running(meta, liveness) is False:
        return f"its Claude Code process {pid} is gone"  # or the system gave its pid to another process
    age = time.time() - last_active(resolver, meta["session_id"])
    if age > limit:
        return f"no activity for {describe_age(age)}"
    return None


def _running(meta: Meta, liveness: Liveness | None) -> bool | None:
    return liveness.running(meta) if liveness else same_process(meta.get("claude_pid"), meta.get("claude_started"))


def recover(
    resolver: PathResolver,
    current: str,
    settings: Settings,
    deadline: float | None = None,
    liveness: Liveness | None = None,
) -> list[str]:
    """Mark this project's stale active sessions abandoned and hand them off; returns their ids.

    ``deadline`` (a ``time.monotonic`` value) bounds the whole: git is asked for all of them
    within it, and a session not reached by then is left for the next start, or ``doctor``.
    Each session's metadata is read through ``liveness``, which SessionStart asks again after.
    """
    liveness = liveness or Liveness(resolver, settings)
    abandoned: list[str] = []
    try:
        refuse_links(resolver.root, resolver.sessions_dir)  # once for all: then each folder itself
    except (BlackboardError, OSError):  # a link, or a file where a folder should be: no session to recover
        return abandoned
    for session_id in active_session_ids(resolver):
        if session_id == current:
            continue
        if deadline is not None and time.monotonic() >= deadline:
            break  # the rest are recovered by the next start
        if os.path.islink(resolver.get_session_blackboard_dir(session_id)):
            continue  # a link where its folder should be: `blackboard doctor` names it
        meta = liveness.meta(session_id)
        if meta is None or meta.get("status") != ACTIVE:
            if meta is not None or not os.path.isdir(resolver.get_session_blackboard_dir(session_id)):
                unmark_active(resolver, session_id)  # a marker left behind by a crash
            continue
        reason = stale_reason(resolver, meta, settings.abandon_after, settings.host, liveness)
        if reason and abandon(resolver, session_id, reason, settings, deadline):
            abandoned.append(session_id)
            liveness.forget(session_id)
    return abandoned


def close_past(
    resolver: PathResolver,
    current: str,
    settings: Settings,
    deadline: float | None = None,
    liveness: Liveness | None = None,
) -> list[str]:
    """End this project's active sessions that ran in the current session's Claude Code process; returns their ids.

    One process runs one conversation: such a session is this one's past (a ``/clear`` or a
    resume whose SessionEnd was cut short), never another live session.
    """
    liveness = liveness or Liveness(resolver, settings)
    closed: list[str] = []
    if liveness.process is None:
        return closed
    for session_id in active_session_ids(resolver):
        if session_id == current or (deadline is not None and time.monotonic() >= deadline):
            continue
        meta = liveness.meta(session_id)
        if meta is None or meta.get("status") != ACTIVE or not of_process(meta, liveness.process, settings.host):
            continue
        why = f"its Claude Code process went on as session {current}"
        if abandon(resolver, session_id, why, settings, deadline, status=ENDED):
            closed.append(session_id)
        liveness.forget(session_id)
    return closed


def abandon(
    resolver: PathResolver,
    session_id: str,
    reason: str,
    settings: Settings,
    git_by: float | None = None,
    status: str = ABANDONED,
) -> bool:
    """Mark one session abandoned (or ``status``), write its handoff and offer it as the latest; False if it was
    not active."""
    ended = last_activity(resolver, session_id)
    generation = handoff.next_generation(resolver, epoch_seconds(ended))

    def change(meta: Meta) -> None:
        if meta["status"] != ACTIVE:
            raise _NoLongerActive  # another session recovered it first, or it ended meanwhile
        meta.update({"status": status, "ended": ended, "end_reason": f"{status}: {reason}", "generation": generation})

    mark_unpublished(resolver, session_id)  # first: if what follows fails, the next start finishes it
    try:
        meta = update_meta(os.path.join(session_dir(resolver, session_id), META_FILE), change)
    except _NoLongerActive:
        unmark_unpublished(resolver, session_id)
        return False
    unmark_active(resolver, session_id)
    session.hand_off(resolver, meta, settings, git_by)
    return True
