"""The ``blackboard`` command: a thin click layer over the library.

Exit statuses, as pre-commit's error handler has them: 0 success; 1 an expected failure
(``BlackboardError``, a file system that says no), one line on stderr naming the fix; 2 a
usage error; 3 a bug, its traceback in ``$ROOT/logs/cli.log``; 130 Ctrl+C. ``--debug``
prints the traceback too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, Callable

import click

from . import environment, settings
from .approve import OPTION
from .board import Board, locate
from .entries import Entry
from .errors import BlackboardError
from .ids import is_session_id
from .ledger import CLOSED_STATUSES, Item
from .meta import STATUSES
from .paths import PathResolver
from .redact import redact_remote
from .registry import SessionEntry
from .render import size_text


def _remember(ctx: click.Context, param: click.Parameter, value: object) -> None:
    """Keep a global option in the root context, given before the subcommand or after it."""
    obj = ctx.find_root().ensure_object(dict)
    if value not in (None, False) or param.name not in obj:
        obj[param.name] = value


def GLOBAL(function: Callable[..., Any]) -> Callable[..., Any]:  # noqa: N802 - used as a decorator
    """``--session``, ``--author``, ``--json`` and ``--debug``, on the group and on every command."""
    options = [
        click.option(
            "--session", metavar="ID", help="Session to use (default: $BLACKBOARD_SESSION_ID, then the latest)."
        ),
        click.option("--author", metavar="NAME", help="Who is writing (default: $BLACKBOARD_AGENT, else main)."),
        click.option("--json", is_flag=True, help="Print JSON instead of text."),
        click.option("--debug", is_flag=True, help="Show tracebacks."),
    ]
    for option in reversed(options):
        function = option(function)
    for param in function.__click_params__:  # type: ignore[attr-defined]
        if param.name in ("session", "author", "json", "debug"):
            param.expose_value, param.callback = False, _remember
    return function


class _Command(click.Command):
    """Options anywhere among the words. A word shaped like an option (``approve.OPTION``) is one,
    so a mistyped option is an error, not text; other words, and every word after ``--``, are text.

    ``blackboard note "- fixed the flaky test" --json`` writes the note and prints JSON.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _options_first(self, ctx, args))


def _options_first(command: click.Command, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with every option (and its value) first, then ``--`` and the words, in order."""
    import itertools
    import re

    valued = {
        name
        for param in command.get_params(ctx)
        if isinstance(param, click.Option) and not param.is_flag
        for name in param.opts
    }
    options: list[str] = []
    words: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            words += rest
        elif re.fullmatch(OPTION, arg, re.DOTALL):
            options += [arg, *itertools.islice(rest, 1 if arg in valued else 0)]
        else:
            words.append(arg)
    return options + ["--"] + words if words else options


EXPECTED, USAGE, BUG, INTERRUPTED = 1, 2, 3, 130


def _board() -> Board:
    return locate(os.environ, os.getcwd(), _options().get("session"))


def _author() -> str:
    return settings.author(_options().get("author"))


def _options() -> dict[str, Any]:
    """The global options, wherever on the command line they were given."""
    return click.get_current_context().find_root().ensure_object(dict)


def _here() -> PathResolver:
    return PathResolver.for_cwd(os.getcwd(), os.environ)


def _resolvers(all_projects: bool) -> list[PathResolver]:
    from .registry import all_projects as every_project

    return every_project(settings.root()) if all_projects else [_here()]


def _emit(data: Any, text: str) -> None:
    if _options().get("json"):
        import json

        text = json.dumps(data, indent=2, ensure_ascii=False)  # JSON escapes control characters itself
    else:
        from .render import printable

        text = printable(text)  # a note may hold escape sequences: never the terminal's
    click.echo(text)


def _entry(entry: Entry) -> dict[str, Any]:
    return {"id": entry.id, **entry.fields, "text": entry.body}


def _warn(problems: list[str], name: str) -> None:
    for problem in problems:
        click.echo(f"blackboard: warning: {name} {problem} (block skipped; fix it by hand)", err=True)


FILE = click.option(
    "--file", "path", metavar="PATH", help="Read the text from a file ('-' for stdin) instead of the command line."
)


def _text(words: Sequence[str], path: str | None) -> str:
    """The text of a note, task or value: the words, or ``--file`` (``-`` is stdin); never both."""
    if path is not None and words:
        raise click.UsageError("give the text or --file, not both")
    if path is None and not words:
        raise click.UsageError("give the text, or --file PATH ('-' for stdin)")
    if path is None and list(words) != ["-"]:
        return " ".join(words)
    limit = settings.max_value_chars() + 1  # enough to say it is too long, never the whole of a huge file
    if path is None or path == "-":
        # bytes, not click's text stream: that one turns CR and CRLF into LF
        return _utf8(click.get_binary_stream("stdin").read(limit * 4), limit, "standard input")
    from .fsutil import read_given_file

    try:
        data = read_given_file(path, limit * 4)  # up to 4 bytes a character
    except OSError as exc:
        raise BlackboardError(f"cannot read --file {path}: {exc.strerror}") from None
    if data is None:
        raise BlackboardError(f"cannot read --file {path}: No such file or directory")
    return _utf8(data, limit, f"--file {path}")


def _utf8(data: bytes, limit: int, source: str) -> str:
    """``data`` as text, exactly; text that is not UTF-8 is refused, as the same text given as words is."""
    if len(data) >= limit * 4:  # over the cap whatever it says: check_value refuses it as too long
        return data.decode("utf-8", errors="replace")[:limit]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BlackboardError(f"{source} is not valid UTF-8 text; convert it (e.g. with iconv) and try again") from None


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"blackboard {environment.plugin_version()}")
        ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the plugin's version (from .claude-plugin/plugin.json) and exit.",
)
@GLOBAL
@click.pass_context
def cli(ctx: click.Context) -> None:
    """A per-session blackboard for Claude Code agents: notes, tasks with claims, shared context.

    --session, --author, --json and --debug go before the command or after it.
    """
    ctx.ensure_object(dict)


cli.command_class = _Command


@cli.command()
@click.argument("text", nargs=-1)
@FILE
@GLOBAL
def note(text: Sequence[str], path: str | None) -> None:
    """Append a note (a decision, a finding) to session-notes.md. TEXT '-' reads stdin."""
    board = _board()
    note_id = board.note(_text(text, path), _author())
    _emit({"id": note_id, "session_id": board.session_id}, note_id)
    _capacity(board)


@cli.group()
def task() -> None:
    """Tasks in active-tasks.md: add, claim, done, list."""


task.command_class = _Command


@task.command("add")
@click.argument("text", nargs=-1)
@FILE
@GLOBAL
def task_add(text: Sequence[str], path: str | None) -> None:
    """Add an open task; prints its id. TEXT '-' reads stdin."""
    board = _board()
    task_id = board.add_task(_text(text, path), _author())
    _emit({"id": task_id, "session_id": board.session_id}, task_id)


@task.command("claim")
@click.argument("task_id")
@GLOBAL
def task_claim(task_id: str) -> None:
    """Claim a task before working on it; fails if someone else has it."""
    claimed = _board().claim_task(task_id, _author())
    _emit(_entry(claimed), f"claimed {claimed.id}: {claimed.body}")


@task.command("done")
@click.argument("task_id")
@GLOBAL
def task_done(task_id: str) -> None:
    """Mark a task done."""
    finished = _board().finish_task(task_id, _author())
    _emit(_entry(finished), f"done {finished.id}: {finished.body}")


@task.command("drop")
@click.argument("task_id")
@click.option("--reason", required=True, metavar="TEXT", help="Why it will not be done (kept in the handoffs).")
@GLOBAL
def task_drop(task_id: str, reason: str) -> None:
    """Drop a task that will not be done; it leaves the open work of every later handoff."""
    dropped = _board().drop_task(task_id, _author(), reason)
    _emit(_entry(dropped), f"dropped {dropped.id}: {dropped.body}")


@task.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include done and dropped tasks.")
@GLOBAL
def task_list(show_all: bool) -> None:
    """List open and claimed tasks (all with --all), then open work carried from earlier sessions."""
    board = _board()
    tasks, problems = board.entries("tasks")
    shown = [t for t in tasks if show_all or t.fields.get("status") not in CLOSED_STATUSES]
    carried = board.carried()
    lines = [_task_line(t) for t in shown] + [_carried_line(item) for item in carried]
    data = {
        "session_id": board.session_id,
        "tasks": [_entry(t) for t in shown],
        "carried": [i.to_json() for i in carried],
    }
    _emit(data, "\n".join(lines) or "(no tasks)")
    _warn(problems, "active-tasks.md")


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


@cli.command()
@click.argument("key")
@click.argument("value", nargs=-1)
@click.option("--replace", is_flag=True, help="Overwrite an existing key.")
@FILE
@GLOBAL
def post(key: str, value: Sequence[str], replace: bool, path: str | None) -> None:
    """Post VALUE under KEY in shared-context.md for other agents. VALUE '-' reads stdin."""
    board = _board()
    board.post(key, _text(value, path), _author(), replace)
    _emit({"key": key, "session_id": board.session_id}, key)


@cli.command()
@click.argument("key")
@GLOBAL
def read(key: str) -> None:
    """Print the value posted under KEY."""
    entry = _board().read(key)
    _emit(_entry(entry), entry.body)


@cli.command("claim")
@click.argument("key")
@GLOBAL
def claim_key(key: str) -> None:
    """Read and remove KEY; exactly one claimant gets it."""
    entry = _board().claim_key(key)
    _emit(_entry(entry), entry.body)


@cli.command("list")
@GLOBAL
def list_keys() -> None:
    """List the keys in shared-context.md."""
    board = _board()
    items, problems = board.entries("context")
    lines = [f"{e.id:<24} {e.fields.get('author', '?'):<14} {_first_line(e.body)}" for e in items] or ["(no keys)"]
    _emit({"session_id": board.session_id, "entries": [_entry(e) for e in items]}, "\n".join(lines))
    _warn(problems, "shared-context.md")


def _first_line(text: str, width: int = 60) -> str:
    line = text.strip().split("\n")[0]
    return line if len(line) <= width else line[: width - 1] + "…"


@cli.command()
@click.option("--all-projects", is_flag=True, help="Every project under the root, not just this one.")
@click.option("--status", type=click.Choice(STATUSES), help="Only sessions in this state.")
@GLOBAL
def sessions(all_projects: bool, status: str | None) -> None:
    """List sessions, newest first."""
    from .registry import list_sessions

    rows = [_session_row(r, e) for r in _resolvers(all_projects) for e in list_sessions(r, status)]
    rows.sort(key=lambda row: (row["started"] or "", row["session_id"]), reverse=True)
    lines = [
        f"{r['session_id']:<38} {r['status'] or 'corrupt':<9} {r['started'] or '-':<20} {r['ended'] or '-':<20} "
        f"{(r['host'] or '-')[:20]:<20} {r['org']}/{r['project']}"
        for r in rows
    ]
    header = f"{'SESSION':<38} {'STATUS':<9} {'STARTED':<20} {'ENDED':<20} {'HOST':<20} PROJECT"
    _emit(rows, "\n".join([header] + lines) if rows else "(no sessions)")
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
        "error": entry.error,
    }


@cli.command()
@click.argument("session_id", required=False)
@GLOBAL
def show(session_id: str | None) -> None:
    """Show one session's board (default: the current session)."""
    from . import render

    if session_id:
        _options()["session"] = session_id
    board = _board()
    meta = board.meta()
    tasks, task_problems = board.entries("tasks")
    context, context_problems = board.entries("context")
    notes = board.recent_notes(20)
    data = {
        "meta": meta,
        "tasks": [_entry(t) for t in tasks],
        "context": [_entry(e) for e in context],
        "notes": [_entry(n) for n in notes],
        "problems": task_problems + context_problems,
    }
    open_tasks, done_tasks = render.split_tasks(tasks)
    state = render.BoardState(open_tasks, done_tasks, context, notes, len(notes))
    head = (
        f"# Session {board.session_id} ({meta.get('status')}) — {meta.get('org')}/{meta.get('project')}\n"
        f"started {meta.get('started')}, last activity {meta.get('last_activity')}, "
        f"branch {meta.get('git_branch') or '?'}, host {meta.get('host') or '?'}\nboard: {board.directory}\n"
    )
    _emit(data, head + "\n" + render.render_sections(state, ("open", "done", "context", "notes")))
    _warn(task_problems, "active-tasks.md")
    _warn(context_problems, "shared-context.md")


@cli.command("handoff")
@click.argument("session_id", required=False)
@GLOBAL
def handoff_command(session_id: str | None) -> None:
    """Print this project's latest handoff, or the one a given session left."""
    from . import handoff
    from .fsutil import read_text

    resolver = _here()
    path = resolver.handoff_path(session_id) if session_id else resolver.latest_handoff_path()
    text = read_text(path)
    if not text:
        raise BlackboardError(f"no handoff at {path}; a session writes one when it ends")
    fields, body = handoff.split_front_matter(text)
    _emit({"path": path, "fields": fields, "body": body}, text.rstrip())


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only show what would move or be copied.")
@GLOBAL
def migrate(dry_run: bool) -> None:
    """Move old flat blackboard files into _legacy/, copy mnemonic's (SessionStart does this by itself)."""
    from . import migrate as migration

    resolver, cwd, home = _here(), os.getcwd(), os.path.expanduser("~")
    moves = migration.plan(resolver, cwd, home) if dry_run else migration.migrate_if_needed(resolver, cwd, home)
    rows = [{"source": m.source, "destination": m.destination, "size": m.size, "copy": m.copy} for m in moves]
    verbs = {(True, True): "would copy", (True, False): "would move", (False, True): "copied", (False, False): "moved"}
    lines = [f"{verbs[dry_run, m.copy]} {m.source} -> {m.destination} ({m.size} bytes)" for m in moves]
    _emit({"dry_run": dry_run, "moves": rows}, "\n".join(lines) or "nothing to migrate")


@cli.command()
@click.option("--older-than", default="30d", show_default=True, metavar="AGE", help="e.g. 30d, 12h, 2w.")
@click.option(
    "--keep", default=20, show_default=True, type=click.IntRange(0), help="Newest finished sessions kept per project."
)
@click.option("--all-projects", is_flag=True, help="Every project under the root, not just this one.")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed and the bytes freed.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@GLOBAL
def cleanup(older_than: str, keep: int, all_projects: bool, dry_run: bool, yes: bool) -> None:
    """Remove ended and abandoned sessions older than AGE, keeping the newest N per project.

    Asks first; without a terminal to ask on and without --yes it only shows what would go.
    """
    from . import cleanup as retention
    from .clock import parse_duration

    try:
        seconds = parse_duration(older_than)
    except ValueError:
        raise BlackboardError(f"--older-than {older_than!r} is not an age; use e.g. 30d, 12h or 2w") from None
    resolvers = _resolvers(all_projects)
    ask = not dry_run and not yes and sys.stdin.isatty()
    if not dry_run and not yes and not ask:  # nobody to ask: show what would go instead of removing it
        dry_run = True
        click.echo("blackboard: nothing is removed without --yes; this is what would go:", err=True)
    # sizes cost a stat per file: measured up front only for a preview or a question
    doomed, skipped = retention.plan(resolvers, seconds, keep, measure=dry_run or ask)
    if ask and doomed:
        total = sum(c.size for c in doomed)
        click.confirm(f"Remove {len(doomed)} sessions ({size_text(total)})?", abort=True, err=True)
    removed = doomed
    if not dry_run:
        removed, problems = _remove_with_progress(retention, doomed)
        skipped += problems
    freed = sum(c.size for c in removed)
    rows: list[dict[str, Any]] = [
        {
            "session_id": c.session_id,
            "org": c.resolver.project.org,
            "project": c.resolver.project.name,
            "status": c.status,
            "finished": c.finished,
            "bytes": c.size,
        }
        for c in removed
    ]
    verb = "would remove" if dry_run else "removed"
    lines = [
        f"{verb} {c.resolver.project.org}/{c.resolver.project.name} {c.session_id} ({c.status} "
        f"{c.finished}, {size_text(c.size)})"
        for c in removed
    ]
    lines.append(f"{verb} {len(rows)} sessions, {size_text(freed)}")
    _emit({"dry_run": dry_run, "sessions": rows, "bytes": freed, "skipped": skipped}, "\n".join(lines))
    for line in skipped:
        click.echo(f"blackboard: warning: skipped {line}", err=True)


def _remove_with_progress(retention: Any, doomed: list[Any]) -> Any:
    if len(doomed) < 200:
        return retention.remove(doomed)
    bar: Any
    with click.progressbar(length=len(doomed), label="removing sessions", file=sys.stderr) as bar:
        return retention.remove(doomed, bar.update)


@cli.group(invoke_without_command=True)
@GLOBAL
@click.pass_context
def sync(ctx: click.Context) -> None:
    """Run one sync round now: fetch other machines' sessions, push this machine's (see `sync enable`)."""
    if ctx.invoked_subcommand is not None:
        return
    from . import sync as syncing

    resolver = _here()
    if not syncing.enabled(resolver):
        raise BlackboardError("sync is off for this project; turn it on with: blackboard sync enable [--remote URL]")
    done = syncing.sync_round(resolver, os.environ, lambda step: click.echo(f"blackboard: {step}…", err=True))
    lines = [f"imported {len(done.imported)} session(s), pushed {done.pushed}, removed {done.removed}"]
    lines += [f"conflict: {c}" for c in done.conflicts] + [f"refused: {r}" for r in done.refused]
    lines += [f"not synced: {s}" for s in done.skipped]
    data = {
        "imported": done.imported,
        "pushed": done.pushed,
        "removed": done.removed,
        "conflicts": done.conflicts,
        "refused": done.refused,
        "not_synced": done.skipped,
    }
    _emit(data, "\n".join(lines))


@sync.command("enable")
@click.option("--remote", metavar="URL", help="The git remote to sync through (default: the project's origin).")
@click.option("--yes", is_flag=True, help="Do not ask before turning sync on.")
@GLOBAL
def sync_enable(remote: str | None, yes: bool) -> None:
    """Turn sync on for this project: sessions travel through a ref of its git remote."""
    from . import sync as syncing

    resolver = _here()
    url = syncing.remote_url(resolver, remote)
    ref = syncing.remote_ref(resolver)
    click.echo(f"blackboard: sync sends this project's ended sessions to {redact_remote(url)} ({ref}).", err=True)
    click.echo(f"blackboard: {syncing.readers_warning(url)}.", err=True)
    if not yes:
        try:
            agreed = click.confirm("Turn sync on?", default=False, err=True)
        except click.Abort:  # no answer: standard input was empty or closed
            agreed = False
        if not sys.stdin.isatty():
            click.echo(err=True)  # end the question's line, which no terminal ended
        if not agreed:
            raise BlackboardError("sync stays off: it turns on when the question is answered y, or with --yes")
    syncing.enable(resolver, url, os.environ)
    shown = redact_remote(url)
    _emit({"remote": shown, "ref": ref}, f"sync on: {shown} ({ref}); run `blackboard sync` to sync now")


@sync.command("disable")
@GLOBAL
def sync_disable() -> None:
    """Turn sync off for this project; nothing more leaves this machine."""
    from . import sync as syncing

    was_on = syncing.disable(_here())
    _emit({"was_enabled": was_on}, "sync off" if was_on else "sync was already off")


@sync.command("status")
@GLOBAL
def sync_status() -> None:
    """Show the remote, the last fetch and push with their outcome, and what is pending."""
    from . import sync as syncing

    info = syncing.status(_here())
    if not info["enabled"]:
        _emit(info, "sync is off for this project (blackboard sync enable [--remote URL])")
        return
    lines = syncing.status_lines(info)
    _emit(info, "\n".join(lines))


@cli.command()
@click.option(
    "--fix", "repair", is_flag=True, help="Do the safe fixes (set damaged files aside, abandon stuck sessions)."
)
@GLOBAL
def doctor(repair: bool) -> None:
    """Check the root, every session's metadata, handoffs, leftover files and the environment."""
    from . import doctor as checks

    root = settings.root()
    findings = checks.examine(root, os.environ, repair)
    open_problems = [f for f in findings if not f.fixed]
    lines = [f"{'fixed' if f.fixed else 'problem'}: {f.problem}\n  fix: {f.fix}" for f in findings]
    lines.append(f"{len(open_problems)} problem(s) left under {root}" if findings else f"all good under {root}")
    _emit({"root": root, "findings": [f._asdict() for f in findings]}, "\n".join(lines))
    if open_problems:
        raise click.exceptions.Exit(EXPECTED)


@cli.command()
@GLOBAL
def where() -> None:
    """Show the paths blackboard resolves, and why."""
    resolver = _here()
    root_from = settings.root_source() or "the default"
    data: dict[str, Any] = {
        "root": resolver.root,
        "root_from": root_from,
        "org": resolver.project.org,
        "project": resolver.project.name,
        "project_from": resolver.project.reason,
        "project_dir": resolver.project_dir,
    }
    try:
        board = _board()
        data.update(session_id=board.session_id, session_from=board.found_by, board_dir=board.directory)
    except BlackboardError as exc:
        named = _options().get("session")
        if named and is_session_id(named):  # no board yet: where it would be
            where_it_would_be = resolver.get_session_blackboard_dir(named)
            data.update(session_id=named, session_from="--session; it has no board yet: here it would be")
            data.update(board_dir=where_it_would_be)
        else:
            data.update(session_id=None, session_from=str(exc), board_dir=None)
    data = {key: redact_remote(value) if isinstance(value, str) else value for key, value in data.items()}
    lines = [f"{key:<13} {value}" for key, value in data.items()]
    _emit(data, "\n".join(lines))


def _capacity(board: Board) -> None:
    warning = board.capacity_warning()
    if warning:
        click.echo(f"blackboard: warning: {warning}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with its status (see the module docstring)."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    """The CLI's exit status for ``argv``; every failure ends as one line on stderr."""
    obj: dict[str, Any] = {}
    try:
        result = cli.main(args=argv, prog_name="blackboard", standalone_mode=False, obj=obj)
    except click.exceptions.Abort as exc:  # Ctrl+C (click turns it into Abort), or "no" to a question
        interrupted = isinstance(exc.__context__, KeyboardInterrupt)
        click.echo("" if interrupted else "blackboard: aborted", err=True)
        return INTERRUPTED if interrupted else EXPECTED
    except KeyboardInterrupt:
        return INTERRUPTED
    except click.UsageError as exc:
        click.echo(f"blackboard: error: {exc.format_message()} (see blackboard --help)", err=True)
        return USAGE
    except click.ClickException as exc:
        click.echo(f"blackboard: error: {exc.format_message()}", err=True)
        return EXPECTED
    except BlackboardError as exc:
        return _fail(str(exc), EXPECTED, obj)
    except OSError as exc:  # the file system said no: most often a broken root
        problem = f"cannot use {exc.filename}: {exc.strerror}" if exc.filename else str(exc)
        return _fail(f"{problem}; check BLACKBOARD_ROOT (`blackboard doctor` says what is wrong)", EXPECTED, obj)
    except Exception:  # noqa: BLE001 - a bug: its traceback goes to the log
        from . import failures

        where = failures.record("cli", " ".join(argv if argv is not None else sys.argv[1:])[:200])
        return _fail(f"unexpected {failures.summary()} ({where}; rerun with --debug to see it)", BUG, obj)
    return result if isinstance(result, int) else 0


def _fail(message: str, status: int, obj: dict[str, Any]) -> int:
    if obj.get("debug"):
        import traceback

        traceback.print_exc()
    click.echo(f"blackboard: error: {redact_remote(message.splitlines()[0]) if message else 'failed'}", err=True)
    return status
