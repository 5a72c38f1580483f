"""The commands agents use on one session's board: notes, tasks with claims, keyed entries."""

from __future__ import annotations

from collections.abc import Sequence

import click

from ..entries import Entry
from ..ledger import CLOSED_STATUSES, Item
from .common import FILE, GLOBAL, Command, author, current_board, emit, entry_json, text_of, warn


@click.command(cls=Command)
@click.argument("text", nargs=-1)
@FILE
@GLOBAL
def note(text: Sequence[str], path: str | None) -> None:
    """Append a note (a decision, a finding) to session-notes.md. TEXT '-' reads stdin."""
    board = current_board()
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
    board = current_board()
    task_id = board.add_task(text_of(text, path), author())
    emit({"id": task_id, "session_id": board.session_id}, task_id)


@task.command("claim")
@click.argument("task_id")
@GLOBAL
def task_claim(task_id: str) -> None:
    """Claim a task before working on it; fails if someone else has it."""
    claimed = current_board().claim_task(task_id, author())
    emit(entry_json(claimed), f"claimed {claimed.id}: {claimed.body}")


@task.command("done")
@click.argument("task_id")
@GLOBAL
def task_done(task_id: str) -> None:
    """Mark a task done."""
    finished = current_board().finish_task(task_id, author())
    emit(entry_json(finished), f"done {finished.id}: {finished.body}")


@task.command("drop")
@click.argument("task_id")
@click.option("--reason", required=True, metavar="TEXT", help="Why it will not be done (kept in the handoffs).")
@GLOBAL
def task_drop(task_id: str, reason: str) -> None:
    """Drop a task that will not be done; it leaves the open work of every later handoff."""
    dropped = current_board().drop_task(task_id, author(), reason)
    emit(entry_json(dropped), f"dropped {dropped.id}: {dropped.body}")


@task.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include done and dropped tasks.")
@GLOBAL
def task_list(show_all: bool) -> None:
    """List open and claimed tasks (all with --all), then open work carried from earlier sessions."""
    board = current_board()
    tasks, problems = board.entries("tasks")
    shown = [t for t in tasks if show_all or t.fields.get("status") not in CLOSED_STATUSES]
    carried = board.carried()
    lines = [_task_line(t) for t in shown] + [_carried_line(item) for item in carried]
    data = {
        "session_id": board.session_id,
        "tasks": [entry_json(t) for t in shown],
        "carried": [i.to_json() for i in carried],
    }
    emit(data, "\n".join(lines) or "(no tasks)")
    warn(problems, "active-tasks.md")


def _task_line(task: Entry) -> str:
    status = task.fields.get("status", "open")
    who = task.fields.get("claimed_by")
    suffix = f" [{who}]" if who and status not in CLOSED_STATUSES else ""
    origin = task.fields.get("origin")
    carried = f" (carried: {origin})" if origin else ""
    return f"{task.id:<5} {status:<8} {task.body.splitlines()[0] if task.body else ''}{suffix}{carried}"


def _carried_line(item: Item) -> str:
    """``5f1c8a2e/t3 open     write the parser (carried from an earlier session)``."""
    who = f" [{item.by}]" if item.by else ""
    return f"{item.short_key} {item.status:<8} {item.text}{who} (carried from an earlier session)"


@click.command(cls=Command)
@click.argument("key")
@click.argument("value", nargs=-1)
@click.option("--replace", is_flag=True, help="Overwrite an existing key.")
@FILE
@GLOBAL
def post(key: str, value: Sequence[str], replace: bool, path: str | None) -> None:
    """Post VALUE under KEY in shared-context.md for other agents. VALUE '-' reads stdin."""
    board = current_board()
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
    entry = current_board().claim_key(key)
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
