"""The ``blackboard`` command: a thin click layer over the library.

Exit statuses, as pre-commit's error handler has them: 0 success; 1 an expected failure
(``BlackboardError``, a file system that says no), one line on stderr naming the fix; 2 a
usage error; 3 a bug, its traceback in ``$ROOT/logs/cli.log``; 130 Ctrl+C. ``--debug``
prints the traceback too.

Each command lives in a module of this package, imported only when it runs (click's lazy
subcommands): ``board`` (what agents use), ``sessions`` (looking around), ``upkeep``
(migrate, cleanup, doctor) and ``sync``. ``common`` holds what they share.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Any

import click

from .. import environment, failures
from ..errors import BlackboardError
from ..redact import redact_remote
from ..settings import Settings
from .common import BUG, EXPECTED, GLOBAL, INTERRUPTED, USAGE

COMMANDS = {  # each command: the module of this package that holds it, and its name there
    "note": "board:note",
    "task": "board:task",
    "post": "board:post",
    "read": "board:read",
    "claim": "board:claim_key",
    "list": "board:list_keys",
    "sessions": "sessions:sessions",
    "show": "sessions:show",
    "handoff": "sessions:handoff_command",
    "where": "sessions:where",
    "who": "sessions:who",
    "hold": "holds:hold",
    "release": "holds:release",
    "share": "holds:share",
    "migrate": "upkeep:migrate",
    "cleanup": "upkeep:cleanup",
    "doctor": "upkeep:doctor",
    "sync": "sync:sync",
}


class _Commands(click.Group):
    """The root group: a command's module is imported when it runs, or when help lists it."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name = COMMANDS[cmd_name].split(":")
        command: click.Command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return command


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"blackboard {environment.plugin_version()}")
        ctx.exit()


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with its status (see the module docstring)."""
    sys.exit(run(argv))


def run(argv: list[str] | None = None) -> int:
    """The CLI's exit status for ``argv``; every failure ends as one line on stderr."""
    obj: dict[str, Any] = {"settings": Settings(os.environ)}  # the one read of the environment
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
        where = failures.record("cli", " ".join(argv if argv is not None else sys.argv[1:])[:200], obj["settings"])
        return _fail(f"unexpected {failures.summary()} ({where}; rerun with --debug to see it)", BUG, obj)
    return result if isinstance(result, int) else 0


def _fail(message: str, status: int, obj: dict[str, Any]) -> int:
    if obj.get("debug"):
        traceback.print_exc()
    click.echo(f"blackboard: error: {redact_remote(message.splitlines()[0]) if message else 'failed'}", err=True)
    return status
