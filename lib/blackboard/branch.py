"""Whose branch: a session is told when another moved its checkout's HEAD or branch, never of its own moves.

``see_head`` records what the checkout is at when a session starts; ``head_notice``, at its next
prompt and around its tool calls, compares and tells a move it did not make once, naming the
session that made it when one recorded that move. A session records its own moves as it makes
them (``record_own_move``, and a shell command that ``MOVES_HEAD``) (docs/adr/0029-live-sessions.md).
Other sessions' words are quoted as data (``render.quoted``).
"""

from __future__ import annotations

import re
import time

from . import live
from .clock import describe_age
from .gitinfo import checkout_of, head_of
from .live import Liveness, Presence
from .paths import PathResolver
from .render import quoted
from .settings import Settings

MAX_NAMED = 3  # sessions a message names
# A shell command that may move HEAD or the branch: after it, a move is this session's own.
MOVES_HEAD = (
    r"\bgit\b.*\b(checkout|switch|reset|rebase|merge|pull|commit|cherry-pick|revert|am|branch|stash|worktree|bisect)\b"
    r"|\b(gh|hub)\b.*\b(checkout|co|merge|sync)\b"
)  # compiled when a command is read, not by every SessionStart that imports this module


def describe(session_id: str, presence: Presence, at: float | None = None, note: str = "") -> str:
    """``session 5f1c8a2e, 4 minutes ago, whose latest request (data) is "refactor the auth module"``."""
    when = f", {describe_age(max(time.time() - at, 0))} ago" if at is not None else ""
    asked = f", whose latest request (data) is {quoted(presence.request, 160)}" if presence.request else ""
    return f"session {session_id[:8]}{when}{note}{asked}"


def see_head(resolver: PathResolver, session_id: str, cwd: str) -> None:
    """Record the HEAD the session's checkout is at when it starts: a later move by another is told."""
    top = checkout_of(cwd)
    if top is not None:
        live.record_head(resolver.live_path(session_id), top, head_of(top))


def head_notice(
    resolver: PathResolver, session_id: str, cwd: str, settings: Settings, command: str | None = None
) -> str | None:
    """What moved the session's checkout since it last looked, said once; None when nothing did or it moved it.

    Asked at every prompt and around every tool call. After a shell ``command`` of this
    session that may move HEAD (``MOVES_HEAD``), a move is the session's own unless another
    live session recorded that very move; it is recorded as its own and not told.
    """
    top = checkout_of(cwd)
    if top is None:
        return None
    path = resolver.live_path(session_id)
    now = head_of(top)
    seen = live.read_presence(path).head
    if seen is not None and seen[0] == top and (seen[1], seen[2]) == now:
        return None
    if seen is None or seen[0] != top:
        live.record_head(path, top, now)
        return None  # nothing seen here before: a first look, or a session that moved to another checkout
    here = _sessions_in(resolver, session_id, top, settings)
    movers = [(other, presence) for other, presence in here if presence.moves.get(top, ("", "", 0))[:2] == now]
    if command is not None and not movers and re.search(MOVES_HEAD, command, re.DOTALL):
        live.record_head(path, top, now, own=True)
        return None
    live.record_head(path, top, now)
    return _notice(top, seen, now, movers, here)


def record_own_move(resolver: PathResolver, session_id: str, cwd: str) -> None:
    """A git command of this session's moved its checkout: the HEAD it left is its own move."""
    top = checkout_of(cwd)
    if top is not None:
        live.record_head(resolver.live_path(session_id), top, head_of(top), own=True)


def _notice(
    top: str,
    seen: tuple[str, str, str],
    now: tuple[str, str],
    movers: list[tuple[str, Presence]],
    here: list[tuple[str, Presence]],
) -> str:
    if movers:
        who = "it was moved by " + "; ".join(describe(other, presence) for other, presence in movers[:MAX_NAMED])
    elif here:
        named = "; ".join(describe(other, presence) for other, presence in here[:MAX_NAMED])
        who = f"live sessions in this checkout: {named}"
    else:
        who = "live sessions in this checkout: none now (a session that has ended, or another program, moved it)"
    return (
        f"blackboard: this checkout ({quoted(top, 200)}) moved, and this session did not move it: from "
        f"{_head_text(seen[1], seen[2])} to {_head_text(*now)}; {who}. Check `git status` and `git log` "
        "before going on: files may have changed under you."
    )


def _sessions_in(resolver: PathResolver, session_id: str, top: str, settings: Settings) -> list[tuple[str, Presence]]:
    """The other live sessions working in checkout ``top`` (by their latest HEAD record), with their presence."""
    found = []
    for meta in Liveness(resolver, settings).others(exclude=session_id):
        presence = live.read_presence(resolver.live_path(meta["session_id"]))
        if presence.head is not None and presence.head[0] == top:
            found.append((meta["session_id"], presence))
    return found


def _head_text(branch: str, sha: str) -> str:
    where = f"branch {quoted(branch, 120)}" if branch else "a detached HEAD"
    return f"{where} at {sha[:8]}" if sha else f"{where} (no commit yet)"
