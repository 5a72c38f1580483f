"""``blackboard hold``, ``release`` and ``share``: what a session holds explicitly, and what every session may touch."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import click

from .. import holds, live
from ..clock import parse_duration
from ..errors import BlackboardError
from ..gitinfo import checkout_of
from .common import GLOBAL, Command, current_board, emit, here


@click.command(cls=Command)
@click.argument("paths", nargs=-1, required=True)
@click.option("--reason", default="", metavar="TEXT", help="Why: the other sessions are told.")
@click.option("--for", "duration", metavar="DURATION", help="How long (30m, 2h); default: until this session ends.")
@GLOBAL
def hold(paths: Sequence[str], reason: str, duration: str | None) -> None:
    """Hold PATH|GLOB…: other live sessions are asked before they edit, stash, reset or overwrite them."""
    board = current_board()
    top, patterns = _patterns(paths)
    until = None
    if duration is not None:
        try:
            until = time.time() + parse_duration(duration)
        except ValueError:
            raise BlackboardError(f"--for {duration!r} is not a duration; use e.g. 30m, 2h or 1d") from None
    live.record_hold(board.resolver.live_path(board.session_id), top, patterns, " ".join(reason.split()), until)
    emit(
        {"session_id": board.session_id, "checkout": top, "held": patterns, "until": until},
        f"held {', '.join(patterns)}",
    )


@click.command(cls=Command)
@click.argument("paths", nargs=-1)
@GLOBAL
def release(paths: Sequence[str]) -> None:
    """Release what this session holds: the PATHs given, or every hold without one."""
    board = current_board()
    top, patterns = _patterns(paths) if paths else (_top(), [])
    live.record_release(board.resolver.live_path(board.session_id), top, patterns)
    emit({"session_id": board.session_id, "released": patterns or "all"}, f"released {', '.join(patterns) or 'all'}")


@click.command(cls=Command)
@click.argument("paths", nargs=-1)
@click.option("--remove", is_flag=True, help="Name them no longer shared.")
@GLOBAL
def share(paths: Sequence[str], remove: bool) -> None:
    """Name PATH|GLOB… shared: every session is meant to touch them (a changelog, a lock file); never held."""
    resolver = here()
    patterns = _patterns(paths)[1] if paths else []
    shared = holds.set_shared(resolver, [] if remove else patterns, patterns if remove else []) if paths else None
    listed = holds.shared_globs(resolver) if shared is None else shared
    emit({"shared": listed}, "\n".join(listed) or "(no file is named shared)")


def _top() -> str:
    top = checkout_of(os.getcwd())
    if top is None:
        raise BlackboardError("not in a git checkout: holds name files of a checkout; cd into one")
    return top


def _patterns(paths: Sequence[str]) -> tuple[str, list[str]]:
    """The checkout and each path or glob as a path from its top (``src/auth/*``); one outside it is an error."""
    top, cwd = _top(), os.getcwd()
    found = []
    for path in paths:
        if "\0" in path or not path.strip():
            raise BlackboardError(f"{path!r} is no path; give a file, a folder or a glob in this checkout")
        relative = os.path.relpath(os.path.normpath(os.path.join(cwd, path)), top)
        if relative == ".." or relative.startswith(".." + os.sep):
            raise BlackboardError(f"{path} is outside this checkout ({top}); give a path inside it")
        found.append(relative)
    return top, found
