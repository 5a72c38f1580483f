"""The commands agents use on one session's board: notes, tasks with claims, keyed entries."""

from __future__ import annotations

from collections.abc import Sequence

import click

from .. import claims
from ..board import Changed
from ..entries import Entry
from ..ledger import CLOSED_STATUSES, Item
from ..redact import redact
from .common import FILE, GLOBAL, Command, author, current_board, emit, entry_json, text_of, warn


@click.command(cls=Command)
@click.argument("text", nargs=-1)
@FILE
@GLOBAL
def note(text: Sequence[str], path: str | None) -> None:
    """Append a note (a decision, a finding) to session-notes.md. TEXT '-' reads stdin."""
    board = current_board(writing=True)
    note_id = board.note(text_of(text, path), author())
    emit({"id": note_id, "session_id": board.session_id}, note_id)
    capacity_warning = board.capacity_warning()
    if capacity_warning:
        click.echo(f"blackboard: warning: {capacity_warning}", err=True)


@click.group()
def task() -> None:
    """Tasks in active-tasks.md: add, claim, done, list."""


task.command_class = Command


@task.command("add")
@click.argument("text", nargs=-1)
@FILE
@GLOBAL
def task_add(text: Sequence[str], path: str | None) -> None:
    """Add an open task; prints its id. TEXT '-' reads stdin."""
    board = current_board(writing=True)
    task_id = board.add_task(text_of(text, path), author())
    emit({"id": task_id, "session_id": board.session_id}, task_id)


@task.command("claim")
@click.argument("task_id")
@GLOBAL
def task_claim(task_id: str) -> None:
    """Claim a task before working on it; fails if someone else has it."""
    claimed = current_board(writing=True).claim_task(task_id, author())
    emit(_changed_json(claimed), f"claimed {claimed.name}: {claimed.task.body}")


FORCE = click.option(
    "--force", is_flag=True, help="Close it even when another live session has claimed it (the answer names which)."
)


@task.command("done")
@click.argument("task_id")
@FORCE
@GLOBAL
def task_done(task_id: str, force: bool) -> None:
    """Mark a task done. Another live session's claimed task is its to close, but with --force."""
    finished = current_board(writing=True).finish_task(task_id, author(), force)
    emit(_changed_json(finished), f"done {finished.name}{_overrode(finished)}: {finished.task.body}")


@task.command("drop")
@click.argument("task_id")
@click.option("--reason", required=True, metavar="TEXT", help="Why it will not be done (kept in the handoffs).")
@FORCE
@GLOBAL
def task_drop(task_id: str, reason: str, force: bool) -> None:
    """Drop a task that will not be done; it leaves the open work of every later handoff. Another live session's
    claimed task is its to drop, but with --force."""
    dropped = current_board(writing=True).drop_task(task_id, author(), reason, force)
    emit(_changed_json(dropped), f"dropped {dropped.name}{_overrode(dropped)}: {dropped.task.body}")


def _changed_json(changed: Changed) -> dict[str, object]:
    return {**entry_json(changed.task), "key": changed.key}


def _overrode(changed: Changed) -> str:
    """`` (forced: claimed by main in live session 5f1c8a2e since …)``: whose claim ``--force`` overrode."""
    held = changed.task.fields.get("overrode_claim")
    return f" (forced: claimed by {held})" if held else ""


@task.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include done and dropped tasks.")
@GLOBAL
def task_list(show_all: bool) -> None:
    """List open and claimed tasks (all with --all), the other live sessions' open tasks by key, then every piece
    of open work carried from earlier sessions, oldest first. A claim shows who holds it, in which session, since
    when."""
    board = current_board()
    tasks, problems = board.entries("tasks")
    shown = [t for t in tasks if show_all or t.fields.get("status") not in CLOSED_STATUSES]
    live = board.live_tasks()
    latest = board.latest_ledger()
    carried = board.carried(latest)[::-1]  # the ledger is newest first; a list reads oldest first, as the board
    held = {claim.key: claim for claim in claims.held(board.resolver) if board._is_live(claim.session_id)}
    lines = [_task_line(t, board.session_id) for t in shown]
    lines += [_live_line(key, session_id, task) for key, session_id, task in live]
    lines += [_carried_line(item, held.get(item.key)) for item in carried]
    data: dict[str, object] = {
        "session_id": board.session_id,
        "tasks": [entry_json(t) for t in shown],
        "live": [{"key": key, "session_id": session_id, **_others(task)} for key, session_id, task in live],
        "carried": [_carried_json(i, held.get(i.key)) for i in carried],
    }
    if latest.cut:
        data["carried_left_out"] = latest.cut
        lines.append(f"… and {latest.cut} older open items no handoff could carry (past its open work's size)")
    emit(data, "\n".join(lines) or "(no tasks)")
    warn(problems, "active-tasks.md")


def _task_line(task: Entry, session_id: str) -> str:
    status = task.fields.get("status", "open")
    origin = task.fields.get("origin")
    carried = f" (carried: {origin})" if origin else ""
    first = task.body.splitlines()[0] if task.body else ""
    forced = task.fields.get("overrode_claim")
    over = f" (forced: claimed by {forced})" if forced else ""
    return f"{task.id:<5} {status:<8} {first}{_holder(task, session_id)}{over}{carried}"


def _holder(task: Entry, session_id: str) -> str:
    """`` [main since 2026-11-28T10:02:00Z]``, with the session when another one claimed it."""
    who = task.fields.get("claimed_by")
    if not who or task.fields.get("status") in CLOSED_STATUSES:
        return ""
    held_in = task.fields.get("claimed_in") or session_id
    where = "" if held_in == session_id else f" in session {held_in[:8]}"
    return f" [{who}{where} since {task.fields.get('claimed_at', '?')}]"


def _others(task: Entry) -> dict[str, object]:
    """Another live session's task as JSON: its words redacted whole, as every view of other sessions has them."""
    return {key: redact(value) if isinstance(value, str) else value for key, value in entry_json(task).items()}


def _live_line(key: str, session_id: str, task: Entry) -> str:
    """``5f1c8a2e/t2 claimed  write the test [test-writer in session 5f1c8a2e since …] (on live session 5f1c8a2e)``.

    Another session's words are redacted whole before the first line is taken.
    """
    origin, _, local = key.rpartition("/")
    status = task.fields.get("status", "open")
    body = redact(task.body)
    first = body.splitlines()[0] if body else ""
    holder = redact(_holder(task, ""))
    return f"{origin[:8]}/{local} {status:<8} {first}{holder} (on live session {session_id[:8]})"


def _carried_line(item: Item, claim: claims.Claim | None) -> str:
    """``5f1c8a2e/t3 open     write the parser (carried from an earlier session)``."""
    if claim is not None:
        who = f" [{claim.by} in session {claim.session_id[:8]} since {claim.at}]"
        return f"{item.short_key} claimed  {item.text}{who} (carried from an earlier session)"
    return f"{item.short_key} open     {item.text} (carried from an earlier session)"


def _carried_json(item: Item, claim: claims.Claim | None) -> dict[str, str]:
    if claim is None:
        return {**item.to_json(), "status": "open", "by": ""} if item.status == "claimed" else item.to_json()
    return {**item.to_json(), "status": "claimed", "by": claim.by, "claimed_in": claim.session_id, "since": claim.at}


@click.command(cls=Command)
@click.argument("key")
@click.argument("value", nargs=-1)
@click.option("--replace", is_flag=True, help="Overwrite an existing key.")
@FILE
@GLOBAL
def post(key: str, value: Sequence[str], replace: bool, path: str | None) -> None:
    """Post VALUE under KEY in shared-context.md for other agents. VALUE '-' reads stdin."""
    board = current_board(writing=True)
    board.post(key, text_of(value, path), author(), replace)
    emit({"key": key, "session_id": board.session_id}, key)


@click.command(cls=Command)
@click.argument("key")
@GLOBAL
def read(key: str) -> None:
    """Print the value posted under KEY."""
    entry = current_board().read(key)
    emit(entry_json(entry), entry.body)


@click.command("claim", cls=Command)
@click.argument("key")
@GLOBAL
def claim_key(key: str) -> None:
    """Read and remove KEY; exactly one claimant gets it."""
    entry = current_board(writing=True).claim_key(key)
    emit(entry_json(entry), entry.body)


@click.command("list", cls=Command)
@GLOBAL
def list_keys() -> None:
    """List the keys in shared-context.md."""
    board = current_board()
    items, problems = board.entries("context")
    lines = [f"{e.id:<24} {e.fields.get('author', '?'):<14} {_first_line(e.body)}" for e in items] or ["(no keys)"]
    emit({"session_id": board.session_id, "entries": [entry_json(e) for e in items]}, "\n".join(lines))
    warn(problems, "shared-context.md")


def _first_line(text: str, width: int = 60) -> str:
    line = text.strip().split("\n")[0]
    return line if len(line) <= width else line[: width - 1] + "…"
