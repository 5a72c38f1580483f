"""``blackboard sync``: a round now, and turning sync on and off, with its status (ADR 19, ADR 30)."""

from __future__ import annotations

import sys

import click

from .. import sync as syncing
from ..errors import BlackboardError
from ..machines import machine_id
from ..redact import redact_remote
from .common import GLOBAL, emit, here, settings


@click.group(invoke_without_command=True)
@GLOBAL
@click.pass_context
def sync(ctx: click.Context) -> None:
    """Run one sync round now: read other machines' sessions, push this machine's own (see `sync enable`)."""
    if ctx.invoked_subcommand is not None:
        return
    resolver = here()
    if not syncing.enabled(resolver):
        raise BlackboardError("sync is off for this project; turn it on with: blackboard sync enable [--remote URL]")
    done = syncing.sync_round(resolver, settings(), lambda step: click.echo(f"blackboard: {step}…", err=True))
    lines = [
        f"imported {len(done.imported)} session(s) of other machines, pushed {done.pushed}, "
        f"taken off this machine's ref {done.removed}"
    ]
    lines += [f"refused: {r}" for r in done.refused] + [f"not synced: {s}" for s in done.skipped]
    data = {
        "imported": done.imported,
        "pushed": done.pushed,
        "removed": done.removed,
        "refused": done.refused,
        "not_synced": done.skipped,
    }
    emit(data, "\n".join(lines))


@sync.command("enable")
@click.option("--remote", metavar="URL", help="The git remote to sync through (default: the project's origin).")
@click.option("--yes", is_flag=True, help="Do not ask before turning sync on.")
@GLOBAL
def sync_enable(remote: str | None, yes: bool) -> None:
    """Turn sync on for this project: sessions travel through a ref of its git remote."""
    resolver = here()
    url = syncing.remote_url(resolver, remote, settings().home)
    ref = f"{syncing.remote_ref(resolver)}/{machine_id(resolver.root)}"
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
    syncing.enable(resolver, url, settings())
    shown = redact_remote(url)
    emit({"remote": shown, "ref": ref}, f"sync on: {shown} ({ref}); run `blackboard sync` to sync now")


@sync.command("disable")
@GLOBAL
def sync_disable() -> None:
    """Turn sync off for this project; nothing more leaves this machine."""
    was_on = syncing.disable(here())
    emit({"was_enabled": was_on}, "sync off" if was_on else "sync was already off")


@sync.command("status")
@GLOBAL
def sync_status() -> None:
    """Show the remote, the last fetch and push with their outcome, and what is pending."""
    info = syncing.status(here(), settings())
    if not info["enabled"]:
        emit(info, "sync is off for this project (blackboard sync enable [--remote URL])")
        return
    emit(info, "\n".join(syncing.status_lines(info)))
