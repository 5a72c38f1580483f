"""The commands that look after the root: migrate old files, clean up old sessions, check and repair."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from .. import cleanup as retention
from .. import doctor as checks
from .. import migrate as migration
from ..clock import parse_duration
from ..errors import BlackboardError
from ..machines import old_copies, remove_copy
from ..render import size_text
from .common import EXPECTED, GLOBAL, Command, emit, here, resolvers, settings


@click.command(cls=Command)
@click.option("--dry-run", is_flag=True, help="Only show what would move or be copied.")
@GLOBAL
def migrate(dry_run: bool) -> None:
    """Move old flat blackboard files into _legacy/, copy mnemonic's (SessionStart does this by itself)."""
    resolver, cwd, home, environ = here(), os.getcwd(), settings().home, settings().environ
    plan = migration.plan if dry_run else migration.migrate_if_needed
    moves = plan(resolver, cwd, home, environ)
    rows = [{"source": m.source, "destination": m.destination, "size": m.size, "copy": m.copy} for m in moves]
    verbs = {(True, True): "would copy", (True, False): "would move", (False, True): "copied", (False, False): "moved"}
    lines = [f"{verbs[dry_run, m.copy]} {m.source} -> {m.destination} ({m.size} bytes)" for m in moves]
    emit({"dry_run": dry_run, "moves": rows}, "\n".join(lines) or "nothing to migrate")


@click.command(cls=Command)
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
    try:
        seconds = parse_duration(older_than)
    except ValueError:
        raise BlackboardError(f"--older-than {older_than!r} is not an age; use e.g. 30d, 12h or 2w") from None
    ask = not dry_run and not yes and sys.stdin.isatty()
    if not dry_run and not yes and not ask:  # nobody to ask: show what would go instead of removing it
        dry_run = True
        click.echo("blackboard: nothing is removed without --yes; this is what would go:", err=True)
    # sizes cost a stat per file: measured up front only for a preview or a question
    doomed, skipped = retention.plan(resolvers(all_projects), seconds, keep, measure=dry_run or ask)
    if ask and doomed:
        total = sum(c.size for c in doomed)
        click.confirm(f"Remove {len(doomed)} sessions ({size_text(total)})?", abort=True, err=True)
    removed = doomed
    if not dry_run:
        removed, problems = _remove_with_progress(doomed)
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
    copies = [(r, *c) for r in resolvers(all_projects) for c in old_copies(r, seconds, keep)]
    for resolver, source, session_id in copies if not dry_run else []:
        remove_copy(resolver, source, session_id)  # another machine's: its ref is not touched
    lines += [f"{verb} the copy of {s} from machine {m[:8]} (arrived here over {older_than} ago)" for _, m, s in copies]
    lines.append(f"{verb} {len(rows)} sessions, {size_text(freed)}")
    copied = [{"machine": m, "session_id": s} for _, m, s in copies]
    emit({"dry_run": dry_run, "sessions": rows, "copies": copied, "bytes": freed, "skipped": skipped}, "\n".join(lines))
    for line in skipped:
        click.echo(f"blackboard: warning: skipped {line}", err=True)


def _remove_with_progress(doomed: list[retention.Candidate]) -> retention.Removal:
    if len(doomed) < 200:
        return retention.remove(doomed)
    bar: Any
    with click.progressbar(length=len(doomed), label="removing sessions", file=sys.stderr) as bar:
        return retention.remove(doomed, bar.update)


@click.command(cls=Command)
@click.option(
    "--fix", "repair", is_flag=True, help="Do the safe fixes (set damaged files aside, abandon stuck sessions)."
)
@click.option("--all-projects", is_flag=True, help="Every project under the root, not just this one.")
@GLOBAL
def doctor(repair: bool, all_projects: bool) -> None:
    """Check the root and this project's sessions, handoffs and files (every project's with --all-projects)."""
    root = settings().root
    findings = checks.examine(settings(), repair, None if all_projects else [here()])
    open_problems = [f for f in findings if not f.fixed]
    lines = [f"{'fixed' if f.fixed else 'problem'}: {f.problem}\n  fix: {f.fix}" for f in findings]
    lines.append(f"{len(open_problems)} problem(s) left under {root}" if findings else f"all good under {root}")
    emit({"root": root, "findings": [f._asdict() for f in findings]}, "\n".join(lines))
    if open_problems:
        raise click.exceptions.Exit(EXPECTED)
