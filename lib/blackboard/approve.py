"""Which Bash commands the PreToolUse hook approves: one plain ``blackboard`` board command, nothing else.

``blackboard note 'parser: state machine'`` is approved; ``blackboard note a; touch x``,
``FOO=1 blackboard note a``, ``blackboard note $(cat f)`` and ``blackboard cleanup --yes``
are not (no decision: Claude Code's own rules apply). docs/adr/0014-approving-board-commands.md
gives the threat model.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Callable

from .fsutil import link_on_the_way

OPTION = r"--?[A-Za-z][-A-Za-z0-9_]*(=.*)?"  # how the CLI tells an option from a word (cli._Command)
# Options that take a value, as the CLI declares them: everywhere, and on each command.
GLOBAL_VALUED = {"--session", "--author"}
COMMAND_VALUED = {
    "note": {"--file"},
    "post": {"--file"},
    "task": {"--file", "--reason"},
    "cleanup": {"--older-than", "--keep"},
    "sessions": {"--status"},
    "hold": {"--reason", "--for"},
}
GROUPS = {"task"}  # a command whose first word names its own subcommand

# Outside quotes, each of these makes bash do something other than pass a literal word:
# separators and pipes, redirections, expansions, globs, groups, comments, escapes.
UNQUOTED_SPECIAL = frozenset(";&|<>()$`\\*?[]{}~#!\n\r")
# Inside double quotes bash still expands these; a backslash is left to single quotes too.
DOUBLE_QUOTED_SPECIAL = frozenset("$`\\\n\r")
# Inside single quotes everything is literal, but a newline would split the command for
# anyone reading it line by line, Claude Code's own rule matching included.
SINGLE_QUOTED_SPECIAL = frozenset("\n\r")

MAX_FILES = 4  # --file options one approved command may give (each is asked of git)
READ_ONLY = {"list", "read", "show", "sessions", "handoff", "where", "who"}
WRITES_OWN_BOARD = {"note", "task", "post", "claim", "hold", "release"}
TEXT_FILE_COMMANDS = {"note", "post", "task"}
# Names that say a file holds credentials: never read for the board without the person's say.
SECRET_NAME = (
    r"credential|secret|passw|token|private|^id_(?:rsa|dsa|ecdsa|ed25519)|\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ppk|"
    r"tfvars|keytab|p8|gpg|ovpn)$|\.tfstate(?:\.|$)|kube_?config|^(?:netrc|htpasswd|shadow|pgpass|env)$|"
    r"\.env(?:\.[a-z]+)?$|access[-_]?keys?|^service[-_]?account|wallet\.dat"
)


def _never(_: str) -> bool:
    return False


def _always(_: str) -> bool:
    return True


def decision(
    command: object,
    cwd: object,
    plugin_root: str,
    session_id: object = None,
    in_this_project: Callable[[str], bool] = _never,
    ignored: Callable[[str], bool] = _always,
) -> bool:
    """True when ``command`` is one plain invocation of the plugin's ``blackboard`` that may run unasked.

    ``cwd`` and ``session_id`` are the session's (from the hook's stdin): a ``--file`` must lie
    inside the one, and a ``--session`` must name the other. ``in_this_project(id)`` says
    whether a session id names a board of this project (``show ID``, ``handoff ID``), and
    ``ignored(path)`` whether git ignores a ``--file``; both are asked of the caller, and
    both default to the answer that gives no decision.
    """
    if not isinstance(command, str) or not _literal_words_only(command):
        return False
    try:
        words = shlex.split(command, posix=True)
    except ValueError:  # an unterminated quote
        return False
    if not words or not _is_our_blackboard(words[0], plugin_root):
        return False
    session = session_id if isinstance(session_id, str) else None
    if not _approved_arguments(words[1:], cwd if isinstance(cwd, str) else None, session):
        return False
    return _stays_in_the_project(words[1:], in_this_project, ignored)


def _literal_words_only(command: str) -> bool:
    """Whether bash would read ``command`` as plain words: quotes close, nothing expands or chains."""
    quote = ""
    for char in command:
        if quote == "'":
            if char == "'":
                quote = ""
            elif char in SINGLE_QUOTED_SPECIAL:
                return False
        elif quote == '"':
            if char == '"':
                quote = ""
            elif char in DOUBLE_QUOTED_SPECIAL:
                return False
        elif char in "'\"":
            quote = char
        elif char in UNQUOTED_SPECIAL:
            return False
        if not char.isprintable() and char not in " \t":  # control characters, in quotes or not
            return False
    return quote == ""


def _is_our_blackboard(program: str, plugin_root: str) -> bool:
    """``blackboard`` itself (the plugin's ``bin/`` is on the Bash tool's PATH), or this plugin's own path to it."""
    if program == "blackboard":
        return True
    if not os.path.isabs(program):
        return False
    roots = {plugin_root, os.path.realpath(plugin_root)}
    return os.path.normpath(program) in {os.path.join(os.path.normpath(root), "bin", "blackboard") for root in roots}


def _approved_arguments(args: list[str], cwd: str | None, session_id: str | None) -> bool:
    """Whether the subcommand and its options only touch the session's own board or only read."""
    words, options = _split(args)
    if words is None or not words:
        return False
    if any(name == "--session" and value != session_id for name, value in options):
        return False  # another session's board is for a person to write to
    command = words[0]
    if command == "task" and "--force" in {name for name, _ in options}:
        return False  # closing a task another live session claimed is for a person to approve
    if command in READ_ONLY or command in WRITES_OWN_BOARD:
        files = [value for name, value in options if name == "--file"]
        return all(_inside(path, cwd) for path in files) and (command in TEXT_FILE_COMMANDS or not files)
    if command == "doctor":
        return "--fix" not in {name for name, _ in options}
    if command == "cleanup":
        return "--dry-run" in {name for name, _ in options}
    if command == "sync":
        return words[1:] == ["status"]
    return False


def _stays_in_the_project(
    args: list[str], in_this_project: Callable[[str], bool], ignored: Callable[[str], bool]
) -> bool:
    """Whether what the command reads is this project's: its sessions, and files git does not ignore."""
    words, options = _split(args)
    names = {name for name, _ in options}
    if not words or "--all-projects" in names:
        return False
    if words[0] in ("show", "handoff") and len(words) > 1 and not in_this_project(words[1]):
        return False  # another project's board or handoff is for a person to look at
    files = [value for name, value in options if name == "--file" and value != "-"]
    if len(files) > MAX_FILES:
        return False
    return not any(ignored(path) for path in files if path is not None)


def _split(args: list[str]) -> tuple[list[str] | None, list[tuple[str, str | None]]]:
    """The words (subcommand and arguments) and the options, read as the CLI reads them; None if unreadable.

    A ``--`` ends the options only inside the command that takes the words: before the
    command's name, click's groups would swallow it and the command would read what follows
    as options again, so such a line is unreadable here.
    """
    words: list[str] = []
    options: list[tuple[str, str | None]] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            if not _command_named(words):
                return None, options
            words += rest
        elif re.fullmatch(OPTION, arg, re.DOTALL):
            name, equals, value = arg.partition("=")
            valued = GLOBAL_VALUED | COMMAND_VALUED.get(words[0] if words else "", set())
            if not equals and name in valued:
                following = next(rest, None)
                if following is None:
                    return None, options
                value = following
            options.append((name, value if equals or name in valued else None))
        else:
            words.append(arg)
    return words, options


def _command_named(words: list[str]) -> bool:
    """Whether the words so far name the command that takes the rest: ``note``, or ``task add``."""
    return bool(words) and (words[0] not in GROUPS or len(words) >= 2)


def _inside(path: str | None, cwd: str | None) -> bool:
    """Whether a ``--file`` is stdin, or a regular file inside the session's working directory (links
    resolved) with no part of its path starting with a dot (``.env``, ``.aws/``, ``.config/``)."""
    if path == "-":
        return True
    if not path or not cwd:
        return False
    real_cwd = os.path.realpath(cwd)
    real = os.path.realpath(os.path.join(cwd, path))
    if not real.startswith(real_cwd + os.sep):
        return False
    named = os.path.normpath(path).split(os.sep) + os.path.relpath(real, real_cwd).split(os.sep)
    if any(part.startswith(".") and part not in (".", "..") for part in named) or _through_a_link(cwd, path):
        return False
    if any(re.search(SECRET_NAME, part, re.IGNORECASE) for part in named):
        return False  # a repository's .gitignore can un-ignore it (`!credentials.json`): the person decides
    try:
        found = os.stat(real)
    except OSError:
        return False
    if _crosses_a_mount(real_cwd, os.path.relpath(real, real_cwd).split(os.sep)):
        return False
    return stat.S_ISREG(found.st_mode) and found.st_nlink == 1  # a hard link may be a secret's other name


def _crosses_a_mount(top: str, parts: list[str]) -> bool:
    """Whether a path below ``top`` passes a mount point: a bind mount (``~/.ssh`` mounted into the
    project) has no link for ``realpath`` to see, but its folder is not the one its parent lists:
    another inode than the parent's entry names, or another device."""
    parent = top
    for part in parts:
        child = os.path.join(parent, part)
        try:
            with os.scandir(parent) as entries:
                listed = next((e.inode() for e in entries if e.name == part), None)
            found, above = os.lstat(child), os.lstat(parent)
        except OSError:
            return True
        if listed != found.st_ino or found.st_dev != above.st_dev:
            return True
        parent = child
    return False


def _through_a_link(cwd: str, path: str) -> bool:
    """Whether ``path``, as written, passes through a symbolic link below ``cwd`` (or is one).

    Git judges a link by its own path, and ``link/..`` is one folder to git but another to
    the kernel: an approved file is one the written path names directly.
    """
    parts = os.path.relpath(path, cwd).split(os.sep) if os.path.isabs(path) else path.split(os.sep)
    if os.pardir in parts:
        return True  # after a link, '..' is not where the text says; before one, it leaves cwd
    return link_on_the_way(cwd, parts) is not None
