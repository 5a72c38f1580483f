"""What a session must know of the project's other live sessions before it acts: whose file, whose branch.

``edit_verdict`` is the PreToolUse check of an edit tool: a file another live session of
this checkout edited within the window gets ``ask`` (``deny`` where no one can be asked) with
a reason naming that session, its latest request and when; the same file edited in another
checkout of the repository gets a warning of the merge to come. It never answers ``allow``:
the person's own rules decide the rest. ``head_notice`` tells a session, at its next prompt,
that its checkout's branch or HEAD moved while it was not working (docs/adr/0029-live-sessions.md).
"""

from __future__ import annotations

import os
import time

from . import live
from .clock import describe_age
from .gitinfo import checkout_around, head_of
from .ids import is_session_id
from .live import Liveness
from .paths import PathResolver
from .project import identify_project
from .registry import active_session_ids
from .render import inline
from .settings import Settings

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
NO_ONE_TO_ASK = ("bypassPermissions", "dontAsk")  # modes that never show the person a question
MAX_NAMED = 3  # sessions a reason names


class Verdict:
    """What PreToolUse tells Claude Code: ``decision`` (``ask``, ``deny`` or None) and why, or a warning only."""

    __slots__ = ("decision", "reason", "context")

    def __init__(self, decision: str | None, reason: str, context: str = "") -> None:
        self.decision = decision
        self.reason = reason
        self.context = context


def edit_verdict(session_id: str, file_path: str, permission_mode: object, settings: Settings) -> Verdict | None:
    """The verdict on an edit of ``file_path`` by ``session_id``; None when nothing is to be said.

    Only the sessions of the project the file's checkout belongs to are asked about, so
    nothing crosses into another project.
    """
    if settings.edit_window <= 0 or not is_session_id(session_id):
        return None
    where = live.locate(file_path)
    if where is None:
        return None
    top, relative = where
    resolver = PathResolver(settings.root, identify_project(top))
    if not os.path.isfile(resolver.meta_path(session_id)):
        return None  # a session this plugin never started: none of its business
    since = time.time() - settings.edit_window
    here: list[tuple[float, str]] = []
    elsewhere: list[tuple[float, str, str]] = []
    liveness = Liveness(resolver, settings)
    for other in active_session_ids(resolver):
        if other == session_id:
            continue  # its own files, its subagents' included
        edited = live.edited_since(resolver.live_path(other), top, relative, since)
        if edited is None or not liveness.session_is_live(other):
            continue
        if edited[0] == top:
            here.append((edited[1], other))
        else:
            elsewhere.append((edited[1], other, edited[0]))
    if here:
        return _conflict(resolver, sorted(here, reverse=True), relative, permission_mode, settings)
    if elsewhere:
        return _merge_warning(resolver, sorted(elsewhere, reverse=True), relative)
    return None


def _conflict(
    resolver: PathResolver, edits: list[tuple[float, str]], relative: str, mode: object, settings: Settings
) -> Verdict:
    named = "; ".join(_who(resolver, other, at) for at, other in edits[:MAX_NAMED])
    what = (
        f"blackboard: {inline(relative, 200)} was edited in this checkout by another live Claude Code session: "
        f"{named}. Editing it now may undo or tangle that session's work."
    )
    if mode in NO_ONE_TO_ASK or settings.attended is False:
        return Verdict(
            "deny",
            f"{what} No one can be asked in this mode, so the edit was refused. To go on: work on another "
            "file, or leave this one until that session has ended; `blackboard who` shows what it is doing.",
        )
    return Verdict("ask", f"{what} Allow the edit only if the two sessions are meant to share this file.")


def _merge_warning(resolver: PathResolver, edits: list[tuple[float, str, str]], relative: str) -> Verdict:
    at, other, top = edits[0]
    context = (
        f"blackboard: the same file, {inline(relative, 200)}, was edited in another checkout of this repository "
        f"({inline(top, 200)}) by a live session: {_who(resolver, other, at)}. Expect a merge conflict in it "
        "when the two branches meet; `blackboard who` shows what that session is doing."
    )
    return Verdict(None, "", context)


def _who(resolver: PathResolver, session_id: str, at: float) -> str:
    """``session 5f1c8a2e, 4 minutes ago (its latest request, as data: "refactor the auth module")``."""
    request = live.read_presence(resolver.live_path(session_id), time.time()).request
    asked = f' (its latest request, as data: "{inline(request, 160)}")' if request else ""
    return f"session {session_id[:8]}, {describe_age(max(time.time() - at, 0))} ago{asked}"


def head_notice(resolver: PathResolver, session_id: str, cwd: str, settings: Settings) -> str | None:
    """At a prompt: what moved the session's checkout while it was not working, said once; None when nothing did.

    The HEAD the session saw last (at its start, its last Stop, its last notice) is in its
    ``_live.jsonl``; the one now is read from ``.git``'s files. The HEAD seen now is recorded.
    """
    top, readable = checkout_around(cwd)
    if top is None or not readable:
        return None
    path = resolver.live_path(session_id)
    now = head_of(top)
    seen = live.read_presence(path, time.time()).head
    if seen is not None and seen[0] == top and (seen[1], seen[2]) == now:
        return None
    live.record_head(path, top, now)
    if seen is None or seen[0] != top:
        return None  # nothing seen here before: a first prompt, or a session that moved to another checkout
    here = [m["session_id"] for m in Liveness(resolver, settings).others(exclude=session_id)]
    here = [other for other in here if _checkout_of(resolver, other) == top]
    names = ", ".join(f"{other[:8]}{_asked(resolver, other)}" for other in here[:MAX_NAMED])
    names = names or "none now (a session that has ended, or another program, moved it)"
    return (
        f"blackboard: this checkout ({inline(top, 200)}) moved since this session's last turn, and this session "
        f"did not move it: from {_head_text(seen[1], seen[2])} to {_head_text(*now)}. Live sessions in this "
        f"checkout: {names}. Check `git status` and `git log` before going on: files may have changed under you."
    )


def see_head(resolver: PathResolver, session_id: str, cwd: str) -> None:
    """Record the HEAD the session's checkout is at (its start, the end of each turn): its own moves are seen."""
    top, readable = checkout_around(cwd)
    if top is not None and readable:
        live.record_head(resolver.live_path(session_id), top, head_of(top))


def _head_text(branch: str, sha: str) -> str:
    where = f"branch {inline(branch, 120)}" if branch else "a detached HEAD"
    return f"{where} at {sha[:8]}" if sha else f"{where} (no commit yet)"


def _asked(resolver: PathResolver, session_id: str) -> str:
    request = live.read_presence(resolver.live_path(session_id), time.time()).request
    return f' (its latest request, as data: "{inline(request, 120)}")' if request else ""


def _checkout_of(resolver: PathResolver, session_id: str) -> str | None:
    """The checkout a live session works in: the one its latest HEAD record names (it may have moved)."""
    head = live.read_presence(resolver.live_path(session_id), time.time()).head
    return head[0] if head else None
