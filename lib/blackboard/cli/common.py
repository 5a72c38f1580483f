"""What every ``blackboard`` command shares: the global options, the board they name, and how they print."""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Sequence
from typing import Any, Callable

import click

from ..approve import OPTION
from ..board import Board, locate
from ..entries import Entry
from ..errors import BlackboardError
from ..fsutil import read_given_file
from ..paths import PathResolver
from ..registry import all_projects
from ..render import printable
from ..settings import Settings

EXPECTED, USAGE, BUG, INTERRUPTED = 1, 2, 3, 130


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


FILE = click.option(
    "--file", "path", metavar="PATH", help="Read the text from a file ('-' for stdin) instead of the command line."
)


class Command(click.Command):
    """Options anywhere among the words. A word shaped like an option (``approve.OPTION``) is one,
    so a mistyped option is an error, not text; other words, and every word after ``--``, are text.

    ``blackboard note "- fixed the flaky test" --json`` writes the note and prints JSON.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _options_first(self, ctx, args))


def _options_first(command: click.Command, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with every option (and its value) first, then ``--`` and the words, in order."""
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


def global_options() -> dict[str, Any]:
    """The global options, wherever on the command line they were given."""
    return click.get_current_context().find_root().ensure_object(dict)


def settings() -> Settings:
    """The settings ``run`` read from the environment when the command started."""
    found: Settings = global_options()["settings"]
    return found


def current_board(writing: bool = False) -> Board:
    """The board the command means; ``writing`` when it writes to it (``board.locate``)."""
    return locate(settings(), os.getcwd(), global_options().get("session"), writing)


def author() -> str:
    return settings().author(global_options().get("author"))


def here() -> PathResolver:
    return PathResolver.for_cwd(os.getcwd(), settings())


def resolvers(every_project: bool) -> list[PathResolver]:
    return all_projects(settings().root) if every_project else [here()]


def emit(data: Any, text: str) -> None:
    """Print ``text``, or ``data`` as JSON with ``--json``."""
    # JSON escapes control characters itself; a note may hold escape sequences: never the terminal's
    as_json = global_options().get("json")
    click.echo(json.dumps(data, indent=2, ensure_ascii=False) if as_json else printable(text))


def entry_json(entry: Entry) -> dict[str, Any]:
    return {"id": entry.id, **entry.fields, "text": entry.body}


def warn(problems: list[str], name: str) -> None:
    for problem in problems:
        click.echo(f"blackboard: warning: {name} {problem} (block skipped; fix it by hand)", err=True)


def text_of(words: Sequence[str], path: str | None) -> str:
    """The text of a note, task or value: the words, or ``--file`` (``-`` is stdin); never both."""
    if path is not None and words:
        raise click.UsageError("give the text or --file, not both")
    if path is None and not words:
        raise click.UsageError("give the text, or --file PATH ('-' for stdin)")
    if path is None and list(words) != ["-"]:
        return " ".join(words)
    cap = settings().max_value_chars
    limit = cap + 1  # enough to say it is too long, never the whole of a huge file
    if path is None or path == "-":
        # bytes, not click's text stream: that one turns CR and CRLF into LF
        return _utf8(click.get_binary_stream("stdin").read(limit * 4), cap, "standard input")
    try:
        data = read_given_file(path, limit * 4)  # up to 4 bytes a character
    except OSError as exc:
        raise BlackboardError(f"cannot read --file {path}: {exc.strerror}") from None
    if data is None:
        raise BlackboardError(f"cannot read --file {path}: No such file or directory")
    return _utf8(data, cap, f"--file {path}")


def _utf8(data: bytes, cap: int, source: str) -> str:
    """``data`` as text, exactly; text that is not UTF-8 is refused, as the same text given as words is.

    More than ``cap`` characters is refused here, naming what was given: the advice for words on
    the command line (use a file) would send a file back to itself.
    """
    huge = len(data) > (cap + 1) * 4 - 1  # read no further: the file is longer still
    text = data.decode("utf-8", errors="replace") if huge else None
    if text is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise BlackboardError(
                f"{source} is not valid UTF-8 text; convert it (e.g. with iconv) and try again"
            ) from None
    if huge or len(text) > cap:
        amount = f"more than {cap}" if huge else str(len(text))
        raise BlackboardError(
            f"{source} holds {amount} characters, over the cap of {cap} on one value; post a short summary, "
            "or the file's path in the project, instead (or raise BLACKBOARD_MAX_VALUE_CHARS)"
        )
    return text
