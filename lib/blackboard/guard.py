"""What a session must know of the project's other live sessions before it acts: whose file, whose work.

``edit_verdict`` is the PreToolUse check of an edit tool: a file another live session of
this checkout edited within the window gets ``ask`` (``deny`` where no one can be asked) with
a reason naming that session, its latest request and when; the same file edited in another
checkout of the repository gets a warning of the merge to come. ``shell_verdict`` does the same
for a shell command that would destroy, sweep up or overwrite files another session holds
(docs/adr/0033-reading-shell-commands.md). Neither ever answers ``allow``: the person's own rules decide
the rest. Whose branch is ``branch``'s. Other sessions' words are quoted as data (``render.quoted``).
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import time
from collections.abc import Callable

from . import holds, live, shell
from .branch import MAX_NAMED, describe
from .changes import staged as staged_files
from .gitinfo import checkout_of
from .ids import is_session_id
from .live import Liveness, Presence
from .paths import PathResolver
from .project import identify_project
from .render import quoted
from .settings import Settings

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
NO_ONE_TO_ASK = ("bypassPermissions", "dontAsk")  # modes that never show the person a question
MAX_FILES_NAMED = 5  # files at stake a reason names
SHARES = re.compile(r"\bblackboard\b[^;&|\n]*\bshare\b(?![^;&|\n]*--remove)")
MAX_EXPANDED = 1000  # files a glob of a command is expanded to, to meet the globs sessions hold
GIT_SECONDS = 0.5  # for git to say which held files are still uncommitted; past it, all of them are


class Verdict:
    """What PreToolUse tells Claude Code: ``decision`` (``ask``, ``deny`` or None) and why, or a warning only."""

    __slots__ = ("decision", "reason", "context")

    def __init__(self, decision: str | None, reason: str, context: str = "") -> None:
        self.decision = decision
        self.reason = reason
        self.context = context


def edit_verdict(
    session_id: str, file_path: str, permission_mode: object, settings: Settings, cwd: str | None = None
) -> Verdict | None:
    """The verdict on an edit of ``file_path`` by ``session_id`` working in ``cwd``; None when nothing is to be said.

    A file under the session's own checkout, in a submodule or nested repository too, is
    looked up in the session's project by its path from that checkout; a file of another
    repository in that repository's project. Nothing crosses into an unrelated project.
    """
    if settings.edit_window <= 0 or not is_session_id(session_id):
        return None
    where = live.locate(file_path, checkout_of(cwd))
    if where is None:
        return None
    top, relative = where
    resolver = PathResolver(settings.root, identify_project(top))
    if not os.path.isfile(resolver.meta_path(session_id)):
        return None  # a session this plugin never started: none of its business
    others = holds.presences(resolver, session_id, time.time() - settings.edit_window, relative)
    deadline = time.monotonic() + GIT_SECONDS
    holding = holds.holders(resolver, settings, others, top, deadline, relevant=lambda path: path == relative)
    here = [holder for holder in holding if holder.holds(relative)]
    if here:
        return _conflict(here, relative, permission_mode, settings)
    liveness = Liveness(resolver, settings)
    elsewhere = [
        (edited[1], other.session_id, other.presence, edited[0])
        for other in others
        if (edited := other.presence.last_edit(top, relative)) is not None and edited[0] != top
    ]
    elsewhere = [entry for entry in elsewhere if liveness.session_is_live(entry[1])]
    if elsewhere:
        return _merge_warning(sorted(elsewhere, key=lambda e: -e[0]), relative)
    return None


def _conflict(here: list[holds.Holder], relative: str, mode: object, settings: Settings) -> Verdict:
    here = sorted(here, key=lambda holder: -holder.files.get(relative, 0.0))
    named = "; ".join(_holding(holder, relative) for holder in here[:MAX_NAMED])
    what = (
        f"blackboard: the file {quoted(relative, 200)} is held by another live Claude Code session of this "
        f"checkout: {named}. Editing it now may undo or tangle that session's work."
    )
    return _ask_or_deny(
        what,
        mode,
        settings,
        "the edit was refused. To go on: work on another file, or leave this one until that session has "
        "committed or released it, or ended; `blackboard who` shows what it is doing.",
        "Allow the edit only if the two sessions are meant to share this file.",
    )


def _ask_or_deny(what: str, mode: object, settings: Settings, refused: str, allow_if: str) -> Verdict:
    """``deny`` where no one can be asked (``bypassPermissions``, ``dontAsk``, a headless run), else ``ask``."""
    if mode in NO_ONE_TO_ASK or settings.attended is False:
        return Verdict("deny", f"{what} No one can be asked in this mode, so {refused}")
    return Verdict("ask", f"{what} {allow_if}")


def _holding(holder: holds.Holder, relative: str) -> str:
    """``session 5f1c8a2e, 4 minutes ago, whose …`` for a file it wrote, or with the reason it holds it."""
    if relative in holder.files:
        return describe(holder.session_id, holder.presence, holder.files[relative], ", not committed yet")
    why = next((why for glob, why, _ in holder.globs if holds.matches(glob, relative)), "")
    reason = f" because {quoted(why, 160)}" if why else ""
    return describe(holder.session_id, holder.presence, note=f", which holds it explicitly{reason}")


def _merge_warning(edits: list[tuple[float, str, Presence, str]], relative: str) -> Verdict:
    at, other, presence, top = edits[0]
    context = (
        f"blackboard: the same file, {quoted(relative, 200)}, was edited in another checkout of this repository "
        f"({quoted(top, 200)}) by a live session: {describe(other, presence, at)}. Expect a merge conflict in it "
        "when the two branches meet; `blackboard who` shows what that session is doing."
    )
    return Verdict(None, "", context)


# --- the shell ----------------------------------------------------------------------------------


def shell_verdict(
    session_id: str,
    command: str,
    permission_mode: object,
    settings: Settings,
    cwd: str | None,
    effects: list[shell.Effect] | None = None,
    resolver: PathResolver | None = None,
) -> Verdict | None:
    """The verdict on a shell command of ``session_id``; None when it only reads, or touches nothing another live
    session holds. ``effects``: what ``shell.effects`` read of it, and ``resolver``: the project of ``cwd``, when
    the caller has them already.

    What the command would do is read from its text (``shell.effects``). An effect on the whole
    checkout (a stash, a reset, a switch of branch, a pull, ``git add -A``…) is at stake whenever
    another live session holds anything in that checkout; one on paths, when they reach what it holds.
    """
    if settings.edit_window <= 0 or not is_session_id(session_id) or not cwd or not os.path.isabs(cwd):
        return None
    effects = list(shell.effects(command, cwd, os.path.isdir) if effects is None else effects)
    if SHARES.search(command):  # naming files shared frees them for every session: the person says so
        effects.append(shell.Effect("share", cwd, (), True, command[: shell.WORDS_SHOWN]))
    own_top = checkout_of(cwd)
    if not effects or own_top is None:
        return None
    if resolver is None or resolver.project.toplevel != own_top:
        resolver = PathResolver(settings.root, identify_project(own_top))
    if not os.path.isfile(resolver.meta_path(session_id)):
        return None  # a session this plugin never started: none of its business
    others = holds.presences(resolver, session_id, time.time() - settings.edit_window)
    if not any(other.presence.edits or other.presence.holds for other in others):
        return None  # nobody else wrote or holds anything: the common case costs no git
    deadline = time.monotonic() + GIT_SECONDS
    stakes: list[tuple[holds.Holder, list[str], shell.Effect]] = []
    for top, group in _by_checkout(effects, own_top).items():
        staged = _staged(group, top, settings, deadline)
        reached = _reached_by(group, top, staged)
        enough = MAX_NAMED if _reaches_all(group) else None
        for holder in holds.holders(resolver, settings, others, top, deadline, reached, enough):
            for effect in group:
                at_stake = holder.at_stake(_reached_by([effect], top, staged))
                if at_stake:
                    stakes.append((holder, at_stake, effect))
                    break
    return _shell_conflict(stakes, permission_mode, settings) if stakes else None


def _by_checkout(effects: list[shell.Effect], own_top: str) -> dict[str, list[shell.Effect]]:
    """The effects grouped by the checkout they land in, each path as a path from that checkout's top.

    A command in a submodule or nested repository of the session's checkout lands in that checkout, under
    the nested repository's folder. Links are resolved: a path through a linked folder or to a linked file
    (``innocent.txt -> src/auth.py``), a ``cwd`` given through a link, and a path that reaches another
    worktree (``rm ../review/a.py``) are judged where the file really is, and a glob as well as the files it
    names now. A ``cwd`` only the shell knows (``cd $DIR``) is taken as the session's own; ``shell.effects``
    has made ``~/x`` whole already (its home is the shell's to say).
    """
    grouped: dict[str, list[shell.Effect]] = {}
    for effect in effects:
        base = os.path.realpath(effect.cwd) if os.path.isabs(effect.cwd) else own_top
        if effect.whole or not effect.paths:
            top = checkout_of(base) or own_top
            if _within(top, own_top) and effect.kind != "commit-staged":  # `git -C vendor/hal stash`: all of it
                inner = shell.Effect(effect.kind, own_top, (os.path.relpath(top, own_top),), False, effect.words)
                grouped.setdefault(own_top, []).append(inner)
            else:
                grouped.setdefault(top, []).append(effect)
            continue
        for written in _expanded(base, effect.paths):
            real = os.path.realpath(os.path.join(base, written))
            landing = checkout_of(real if os.path.isdir(real) else os.path.dirname(real))
            if landing is not None:
                landing = own_top if _within(landing, own_top) else landing
                landed = shell.Effect(effect.kind, landing, (os.path.relpath(real, landing),), False, effect.words)
                grouped.setdefault(landing, []).append(landed)
    return grouped


def _expanded(base: str, written: tuple[str, ...]) -> list[str]:
    """The paths as written, and what each glob among them names on the disk now, as the shell will expand it
    (``rm docs/in*`` removes ``docs/intro.md``, which a held ``docs/*.md`` covers); at most ``MAX_EXPANDED``."""
    found = list(written)
    for pattern in written:
        if any(char in pattern for char in "*?["):
            found += itertools.islice(glob.iglob(os.path.join(glob.escape(base), pattern)), MAX_EXPANDED)
    return found


def _within(top: str, own_top: str) -> bool:
    """Whether checkout ``top`` is a submodule or nested repository of the session's own checkout: its files are
    held by their path from the session's checkout (``vendor/hal/gpio.c``), as edits name them."""
    return top != own_top and top.startswith(own_top.rstrip("/") + "/")


def _staged(group: list[shell.Effect], top: str, settings: Settings, deadline: float) -> set[str] | None:
    """What a plain ``git commit`` in ``top`` would take (asked of git only for one); None: all of it may be."""
    if not any(effect.kind == "commit-staged" for effect in group):
        return set()
    return staged_files(top, settings.environ, deadline)


def _reaches_all(effects: list[shell.Effect]) -> bool:
    """Whether one of ``effects`` reaches every file of its checkout: a stash, a reset, a switch (a plain commit
    reaches only what is staged)."""
    return any(effect.whole and effect.kind != "commit-staged" for effect in effects)


def _reached_by(effects: list[shell.Effect], top: str, staged: set[str] | None) -> Callable[[str], bool]:
    """Whether any of ``effects`` reaches a path (or held glob) of checkout ``top``; a plain commit reaches what
    is ``staged`` there (everything, when git could not say)."""
    if _reaches_all(effects):
        return lambda relative: True

    def reached(relative: str) -> bool:
        path = os.path.join(top, relative)
        for effect in effects:
            if effect.kind == "commit-staged":
                if staged is None or relative in staged:
                    return True
                continue
            if effect.whole or shell.touches(effect, path):
                return True
            # a held glob (`src/auth/*`) is reached by an effect on a path it covers (`rm src/auth/x.py`)
            if any(holds.matches(relative, _relative(top, effect.cwd, written)) for written in effect.paths):
                return True
        return False

    return reached


def _relative(top: str, cwd: str, written: str) -> str:
    path = os.path.normpath(os.path.join(cwd, written)) if os.path.isabs(cwd) else os.path.normpath(written)
    return os.path.relpath(path, top) if os.path.isabs(path) else path


def _shell_conflict(
    stakes: list[tuple[holds.Holder, list[str], shell.Effect]], mode: object, settings: Settings
) -> Verdict:
    named = []
    for holder, at_stake, _ in stakes[:MAX_NAMED]:
        files = ", ".join(_held_as(holder, path) for path in at_stake[:MAX_FILES_NAMED])
        more = f" and {len(at_stake) - MAX_FILES_NAMED} more" if len(at_stake) > MAX_FILES_NAMED else ""
        named.append(f"{describe(holder.session_id, holder.presence)}, which holds {files}{more}")
    effect = stakes[0][2]
    what = (
        f"blackboard: this command would {_ACTS.get(effect.kind, 'change')} work another live Claude Code session "
        f"holds in this checkout ({quoted(effect.words, 160)}): {'; '.join(named)}."
    )
    return _ask_or_deny(
        what,
        mode,
        settings,
        "the command was refused. To go on: leave those files alone, or ask that session to commit or release "
        "them (`blackboard who` shows what it is doing); commands that only read are never refused.",
        "Allow it only if that session's work may be lost or swept into this one.",
    )


def _held_as(holder: holds.Holder, path: str) -> str:
    """``"src/auth.py" (uncommitted)`` for a file it wrote, ``"docs/*" (held explicitly, because "…")`` for a hold."""
    if path in holder.files:
        return f"{quoted(path, 120)} (uncommitted)"
    why = next((why for glob, why, _ in holder.globs if glob == path), "")
    return f"{quoted(path, 120)} (held explicitly" + (f", because {quoted(why, 160)})" if why else ")")


_ACTS = {
    "stash": "stash away",
    "reset": "reset",
    "switch": "switch the branch under",
    "restore": "overwrite",
    "clean": "delete",
    "pull": "pull over",
    "rebase": "rebase under",
    "merge": "merge into",
    "cherry-pick": "apply commits over",
    "revert": "revert over",
    "am": "apply patches over",
    "sweep": "sweep into this session's commit",
    "commit-paths": "commit, as this session's,",
    "commit-staged": "commit, as this session's, staged",
    "share": "name shared, and so free for every session,",
    "remove": "remove",
    "overwrite": "overwrite",
    "move": "move or overwrite",
    "rewrite": "rewrite",
    "unread": "run a git command only the shell can name (`git $VERB`) over",
}
