"""The commands a person uses to look around: sessions, one board, a handoff, where things are."""

from __future__ import annotations

import os
from typing import Any

import click

from .. import handoff, render
from ..errors import BlackboardError
from ..fsutil import read_text
from ..ids import is_session_id
from ..machines import CopyResolver, copies, copies_of
from ..meta import STATUSES, arrived_by_sync
from ..paths import PathResolver
from ..redact import redact_remote
from ..registry import SessionEntry, list_sessions, session_entry
from ..who import ask_uncommitted, neighbours
from ..who import lines as who_lines
from .common import (
    GLOBAL,
    Command,
    current_board,
    emit,
    entry_json,
    global_options,
    here,
    resolvers,
    settings,
    warn,
)


@click.command(cls=Command)
@click.option("--all-projects", is_flag=True, help="Every project under the root, not just this one.")
@click.option("--status", type=click.Choice(STATUSES), help="Only sessions in this state.")
@GLOBAL
def sessions(all_projects: bool, status: str | None) -> None:
    """List sessions, newest first: this machine's, and those sync brought from your other machines."""
    rows = [_session_row(r, e) for r in resolvers(all_projects) for e in list_sessions(r, status)]
    rows += [row for r in resolvers(all_projects) for row in _copy_rows(r, status)]
    rows.sort(key=lambda row: (row["started"] or "", row["session_id"]), reverse=True)
    lines = [
        f"{r['session_id']:<38} {r['status'] or 'corrupt':<9} {r['started'] or '-':<20} {r['ended'] or '-':<20} "
        f"{_host_column(r):<20} {r['org']}/{r['project']}"
        for r in rows
    ]
    header = f"{'SESSION':<38} {'STATUS':<9} {'STARTED':<20} {'ENDED':<20} {'HOST':<20} PROJECT"
    emit(rows, "\n".join([header] + lines) if rows else "(no sessions)")
    for row in rows:
        if row["error"]:
            click.echo(f"blackboard: warning: {row['error']}", err=True)


def _session_row(resolver: PathResolver, entry: SessionEntry) -> dict[str, Any]:
    meta: dict[str, Any] = dict(entry.meta or {})
    return {
        "session_id": entry.session_id,
        "status": meta.get("status"),
        "started": meta.get("started"),
        "ended": meta.get("ended"),
        "end_reason": meta.get("end_reason"),
        "org": resolver.project.org,
        "project": resolver.project.name,
        "git_branch": meta.get("git_branch"),
        "parent_session_id": meta.get("parent_session_id"),
        "host": meta.get("host"),
        "arrived_by_sync": arrived_by_sync(meta),
        "error": entry.error,
    }


def _copy_rows(resolver: PathResolver, status: str | None) -> list[dict[str, Any]]:
    """Other machines' sessions that sync keeps here (``machines.copies``), as rows marked as such."""
    rows = []
    for source, session_id in copies(resolver):
        row = _session_row(resolver, session_entry(CopyResolver(resolver, source), session_id))
        if status is None or row["status"] == status:
            rows.append({**row, "arrived_by_sync": True, "machine": source})
    return rows


def _host_column(row: dict[str, Any]) -> str:
    """The host a session names, marked when sync brought it: a remote may name this machine."""
    host = row["host"] or "-"
    return f"{host[:13]} (sync)" if row["arrived_by_sync"] else host[:20]


@click.command(cls=Command)
@click.argument("session_id", required=False)
@GLOBAL
def show(session_id: str | None) -> None:
    """Show one session's board (default: the current session)."""
    if session_id:
        global_options()["session"] = session_id
    board = current_board()
    meta = board.meta()
    tasks, task_problems = board.entries("tasks")
    context, context_problems = board.entries("context")
    notes = board.recent_notes(20)
    data = {
        "meta": meta,
        "tasks": [entry_json(t) for t in tasks],
        "context": [entry_json(e) for e in context],
        "notes": [entry_json(n) for n in notes],
        "problems": task_problems + context_problems,
    }
    open_tasks, done_tasks = render.split_tasks(tasks)
    state = render.BoardState(open_tasks, done_tasks, context, notes, len(notes))
    head = (
        f"# Session {board.session_id} ({meta.get('status')}) — {meta.get('org')}/{meta.get('project')}\n"
        f"started {meta.get('started')}, last activity {meta.get('last_activity')}, "
        f"branch {meta.get('git_branch') or '?'}, host {meta.get('host') or '?'}"
        f"{' (received by sync)' if arrived_by_sync(meta) else ''}\nboard: {board.directory}\n"
    )
    emit(data, head + "\n" + render.render_sections(state, ("open", "done", "context", "notes")))
    warn(task_problems, "active-tasks.md")
    warn(context_problems, "shared-context.md")


@click.command("handoff", cls=Command)
@click.argument("session_id", required=False)
@GLOBAL
def handoff_command(session_id: str | None) -> None:
    """Print this project's latest handoff, or the one a given session left."""
    resolver = here()
    path = resolver.handoff_path(session_id) if session_id else resolver.latest_handoff_path()
    held = copies_of(resolver, session_id) if session_id and not os.path.lexists(path) else []
    if session_id and held:  # another machine's, read where sync keeps it
        path = CopyResolver(resolver, held[0][0]).handoff_path(session_id)
    text = read_text(path)
    if not text:
        raise BlackboardError(f"no handoff at {path}; a session writes one when it ends")
    fields, body = handoff.split_front_matter(text)
    emit({"path": path, "fields": fields, "body": body}, text.rstrip())


@click.command(cls=Command)
@GLOBAL
def where() -> None:
    """Show the paths blackboard resolves, and why."""
    resolver = here()
    root_from = settings().root_source or "the default"
    data: dict[str, Any] = {
        "root": resolver.root,
        "root_from": root_from,
        "org": resolver.project.org,
        "project": resolver.project.name,
        "project_from": resolver.project.reason,
        "project_dir": resolver.project_dir,
    }
    try:
        board = current_board()
        data.update(session_id=board.session_id, session_from=board.found_by, board_dir=board.directory)
    except BlackboardError as exc:
        named = global_options().get("session")
        if named and is_session_id(named):  # no board yet: where it would be
            where_it_would_be = resolver.get_session_blackboard_dir(named)
            data.update(session_id=named, session_from="--session; it has no board yet: here it would be")
            data.update(board_dir=where_it_would_be)
        else:
            data.update(session_id=None, session_from=str(exc), board_dir=None)
    data = {key: redact_remote(value) if isinstance(value, str) else value for key, value in data.items()}
    lines = [f"{key:<13} {value}" for key, value in data.items()]
    emit(data, "\n".join(lines))


@click.command(cls=Command)
@GLOBAL
def who() -> None:
    """The project's live sessions but your own: checkout, branch, latest request, files edited lately, claims.

    From a terminal with no session of your own, every live session of the project.
    """
    named = global_options().get("session") or (settings().named_session or ("", ""))[1]
    me = named if is_session_id(named) else ""
    resolver = here()
    found, total = neighbours(resolver, settings(), exclude=me, limit=1000)
    ask_uncommitted(found, settings())
    text = "\n".join(who_lines(found, total, resolver.project.toplevel))
    nobody = "(no other live session here)" if me else "(no live session here)"
    emit({"session_id": me or None, "sessions": [n.to_json() for n in found]}, text or nobody)
