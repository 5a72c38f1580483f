"""``blackboard doctor``: find damage under the root, say how to fix it, and do the safe fixes.

Safe means reversible: a corrupt file is renamed aside (``*.corrupt-{time}``), never deleted;
a session stuck ``active`` is marked abandoned the way SessionStart would.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import NamedTuple

from . import environment, handoff, recovery, render
from .clock import compact_now, format_utc, now_iso
from .errors import BlackboardError
from .fsutil import PRIVATE_DIR, PRIVATE_FILE, make_dirs, refuse_links
from .locks import held_for
from .meta import ABANDONED, ACTIVE, FINISHED, new_meta, write_meta
from .paths import PathResolver
from .registry import (
    SessionEntry,
    all_projects,
    is_set_aside,
    list_sessions,
    session_id_of,
    strays,
    unmark_active,
    unpublished_ids,
)
from .session import publish_pending
from .settings import Settings

LOCK_HELD_TOO_LONG = 600
TEMP_FILE_AGE = 3600


class Finding(NamedTuple):
    """A problem, how to fix it, and whether ``--fix`` did."""

    problem: str
    fix: str
    fixed: bool = False


def examine(settings: Settings, repair: bool, projects: list[PathResolver] | None = None) -> list[Finding]:
    """Every problem found under the root ``settings`` name, fixed where ``repair`` and the fix is safe.

    ``projects``: the projects looked at (their boards alone); None, every project under the
    root and the root's own files. Whatever cannot be read is a finding of its own, and the
    rest is still looked at; names are shown on one line, as data (``_as_data``).
    """
    root = settings.root
    findings = list(_check_root(root))
    if os.path.isdir(root) and not os.path.islink(root):
        for resolver in all_projects(root) if projects is None else projects:
            findings += _check_project(resolver, settings, repair)
        for top in [root] if projects is None else [r.project_dir for r in projects]:
            findings += _guarded(top, partial(_check_leftovers, top, repair))
    findings += _check_venv()
    return [Finding(_as_data(f.problem), _as_data(f.fix), f.fixed) for f in findings]


def _as_data(text: str) -> str:
    """``text`` on one line: a line break or another control character in a file's name is shown escaped,
    so no name can start a line of the report (``fixed: …``) of its own."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode() for c in text)


def _guarded(where: str, check: Callable[[], list[Finding]]) -> list[Finding]:
    """``check()``'s findings; a part of the tree it could not read is a finding, and the report goes on."""
    try:
        return check()
    except (OSError, BlackboardError, ValueError, RecursionError) as exc:
        problem = f"{where} could not be read whole: {getattr(exc, 'strerror', None) or exc}"
        return [Finding(problem, "make it readable (chmod u+rwx on folders, u+rw on files), then run doctor again")]


def _check_project(resolver: PathResolver, settings: Settings, repair: bool) -> list[Finding]:
    """One project's board: never through a link, every part that can be read looked at."""
    for folder in (resolver.project_dir, resolver.sessions_dir, resolver.get_handoff_dir()):
        try:
            refuse_links(resolver.root, folder)
        except BlackboardError:
            problem = f"{folder} is (or lies under) a symbolic link; nothing is read or written through one"
            return [Finding(problem, "replace the link with a folder of its own (move what it points to there)")]
    findings = _guarded(resolver.sessions_dir, partial(_check_sessions, resolver, settings, repair))
    return findings + _guarded(resolver.get_handoff_dir(), partial(_check_handoffs, resolver, settings, repair))


def _check_root(root: str) -> Iterator[Finding]:
    if os.path.lexists(root) and not os.path.isdir(root):
        yield Finding(f"the root {root} is not a directory", "move it away or set BLACKBOARD_ROOT elsewhere")
    elif os.path.isdir(root) and not os.access(root, os.W_OK | os.X_OK):
        yield Finding(f"the root {root} is not writable", f"chmod u+rwx {root}")
    elif not os.path.lexists(root):
        parent = os.path.dirname(root)
        while parent != os.path.dirname(parent) and not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
            problem = f"the root {root} cannot be created: {parent} is not a writable directory"
            yield Finding(problem, "set BLACKBOARD_ROOT to a directory you can write")


def _check_sessions(resolver: PathResolver, settings: Settings, repair: bool) -> list[Finding]:
    findings = []
    for name in strays(resolver):
        problem = f"{os.path.join(resolver.sessions_dir, name)} is not a session (a file, a link or an odd name)"
        fix = f"blackboard doctor --fix moves it to {resolver.strays_dir}"
        findings.append(Finding(problem, fix, repair and _move_stray(resolver, name)))
    for entry in list_sessions(resolver):
        findings += _guarded(entry.directory, partial(_check_session, resolver, entry, settings, repair))
    return findings


def _check_session(resolver: PathResolver, entry: SessionEntry, settings: Settings, repair: bool) -> list[Finding]:
    """One session's checks; a session that cannot be read costs only its own finding (``_guarded``)."""
    where = f"{resolver.project.org}/{resolver.project.name} session {entry.session_id}"
    links = _links_in(entry.directory)
    findings = []
    for name in links:
        problem = f"{os.path.join(entry.directory, name)} is a symbolic link; nothing is read or written through one"
        fix = f"blackboard doctor --fix moves the link (not what it points to) to {resolver.strays_dir}"
        findings.append(Finding(problem, fix, repair and _move_link(resolver, entry.directory, name)))
    if links:
        return findings  # the rest of its checks would read through the link
    if is_set_aside(entry.session_id):
        return _check_set_aside(resolver, entry)
    if entry.meta is None:
        problem = f"{where}: {entry.error}"
        fix = "blackboard doctor --fix sets the file aside and writes a fresh _meta.json (status abandoned)"
        return [Finding(problem, fix, repair and _rebuild_meta(resolver, entry.session_id))]
    active = entry.meta.get("status") == ACTIVE
    reason = recovery.stale_reason(resolver, entry.meta, settings.abandon_after, settings.host) if active else None
    if reason:
        fixed = repair and recovery.abandon(resolver, entry.session_id, reason, settings)
        findings.append(Finding(f"{where} is stuck active: {reason}", "blackboard doctor --fix abandons it", fixed))
    for problem in render.board_state(resolver, entry.session_id).problems:
        fix = f"edit {entry.directory} by hand: each entry is '## id', '- key: value' lines, a blank line, text"
        findings.append(Finding(f"{where}: unreadable block in {problem}", fix))
    return findings


def _check_set_aside(resolver: PathResolver, entry: SessionEntry) -> list[Finding]:
    """A board a cleanup renamed aside: to finish removing, or (resumed meanwhile) to put back by hand."""
    status = (entry.meta or {}).get("status")
    if status in FINISHED:
        return [Finding(f"{entry.directory} is left by an interrupted cleanup", "blackboard cleanup removes it")]
    if entry.meta is None:
        problem = f"{entry.directory} is left by an interrupted cleanup and has no readable _meta.json"
        return [Finding(problem, "look inside, then remove it by hand")]
    home = resolver.get_session_blackboard_dir(session_id_of(entry.session_id))
    problem = f"{entry.directory} holds a session that resumed while a cleanup removed it"
    return [Finding(problem, f"compare it with {home} and keep the board you want under that name")]


def _links_in(directory: str) -> list[str]:
    """The names in a session's folder that are symbolic links."""
    try:
        return sorted(e.name for e in os.scandir(directory) if e.is_symlink())
    except OSError:
        return []


def _move_link(resolver: PathResolver, directory: str, name: str) -> bool:
    """Set a link found in a session's folder aside in ``_strays``; the file it points to is never touched."""
    make_dirs(resolver.strays_dir)
    target, n = os.path.join(resolver.strays_dir, f"{os.path.basename(directory)}-{name}"), 1
    while os.path.lexists(target):
        n += 1
        target = os.path.join(resolver.strays_dir, f"{os.path.basename(directory)}-{name}.{n}")
    os.rename(os.path.join(directory, name), target)
    return True


def _move_stray(resolver: PathResolver, name: str) -> bool:
    """Move a stray out of ``sessions/`` whole (never following a link), under a name not yet taken."""
    make_dirs(resolver.strays_dir)
    target, n = os.path.join(resolver.strays_dir, name), 1
    while os.path.lexists(target):
        n += 1
        target = os.path.join(resolver.strays_dir, f"{name}.{n}")
    os.rename(os.path.join(resolver.sessions_dir, name), target)
    return True


def _rebuild_meta(resolver: PathResolver, session_id: str) -> bool:
    path = resolver.meta_path(session_id)
    if os.path.exists(path):
        quarantine(path)
    started = format_utc(os.path.getmtime(resolver.get_session_blackboard_dir(session_id)))
    meta = new_meta(session_id, resolver.project.org, resolver.project.name, started)
    meta.update({"status": ABANDONED, "ended": now_iso(), "end_reason": "abandoned: metadata rebuilt by doctor"})
    write_meta(path, meta)
    unmark_active(resolver, session_id)
    return True


def _check_handoffs(resolver: PathResolver, settings: Settings, repair: bool) -> list[Finding]:
    findings = []
    directory = resolver.get_handoff_dir()
    names = sorted(os.listdir(directory)) if os.path.isdir(directory) else []
    for name in names:
        path = os.path.join(directory, name)
        if not name.endswith(".md"):
            continue
        if os.path.islink(path) or not os.path.isfile(path):
            problem = f"{path} is not a regular file (a link or a folder); nothing reads it"
        elif not (handoff.read_handoff(path) or ({}, ""))[0].get("session_id"):
            problem = f"{path} has no readable front matter"
        else:
            continue
        findings.append(Finding(problem, "blackboard doctor --fix sets it aside", repair and quarantine(path)))
    for session_id in unpublished_ids(resolver):
        where = f"{resolver.project.org}/{resolver.project.name} session {session_id}"
        problem = f"{where} ended, but its handoff was not published"
        fix = "the next SessionStart publishes it; blackboard doctor --fix does it now"
        findings.append(Finding(problem, fix, repair and _publish(resolver, session_id, settings)))
    return findings


def _publish(resolver: PathResolver, session_id: str, settings: Settings) -> bool:
    try:
        return session_id in publish_pending(resolver, settings)
    except (BlackboardError, OSError):  # still failing: the finding stays open
        return False


def _check_leftovers(root: str, repair: bool) -> list[Finding]:
    """Temporary files of writers that crashed, and locks held for a long time."""
    findings: list[Finding] = []
    now = time.time()
    loose: list[tuple[str, int]] = []  # folders and files other users can read or write, with their modes
    for dirpath, dirnames, filenames in _walk(root, findings):
        if os.path.basename(dirpath) == "_strays":  # what doctor --fix set aside: named once, kept as it is
            dirnames[:] = []
            continue
        mode = _folder_mode(dirpath)
        if mode & 0o077:
            loose.append((dirpath, mode))
        links = [name for name in dirnames + filenames if os.path.islink(os.path.join(dirpath, name))]
        in_a_session = os.path.basename(os.path.dirname(dirpath)) == "sessions"  # _check_sessions names those
        for name in [] if in_a_session else links:
            path = os.path.join(dirpath, name)
            problem = f"{path} is a symbolic link; nothing under the root is read or written through one"
            findings.append(Finding(problem, "remove the link, or move what it points to into its place"))
        dirnames[:] = [d for d in dirnames if d not in links]
        for name in filenames:
            if name in links:
                continue
            path = os.path.join(dirpath, name)
            try:
                info = os.lstat(path)
            except FileNotFoundError:  # a writer finished (or a cleanup ran) during the walk
                continue
            age = now - info.st_mtime
            private = name.endswith(".lock") or not stat.S_ISREG(info.st_mode)  # a lock holds nothing
            if not private and info.st_mode & 0o077:
                loose.append((path, stat.S_IMODE(info.st_mode)))
            if name.startswith(".") and name.endswith(".tmp") and age > TEMP_FILE_AGE:
                fixed = repair and _remove(path)
                fix = "blackboard doctor --fix removes it (the file it was replacing is intact)"
                findings.append(Finding(f"{path} is left over from a crashed write", fix, fixed))
            elif name.endswith(".lock") and age > LOCK_HELD_TOO_LONG:  # untouched for long: is it held since?
                held = held_for(path)
                if held is not None and held > LOCK_HELD_TOO_LONG:
                    problem = f"{path} has been held for {held / 60:.0f} minutes"
                    findings.append(Finding(problem, f"find the holder: fuser {path}"))
    if loose:
        example = f"{loose[0][0]} (mode {loose[0][1]:04o})"
        problem = f"{len(loose)} file(s) and folder(s) under {root} can be read by other users, e.g. {example}"
        fix = f"blackboard doctor --fix makes files {PRIVATE_FILE:04o} and folders {PRIVATE_DIR:04o}"
        findings.append(Finding(problem, fix, repair and _tighten([path for path, _ in loose])))
    return findings


def _walk(top: str, findings: list[Finding]) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` without recursion (a tree a thousand folders deep is walked too), never through a link;
    a folder that cannot be listed is a finding, and the walk goes on."""
    pending = [top]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
        except OSError as exc:
            fix = "make it readable (chmod u+rwx), then run doctor again"
            findings.append(Finding(f"{folder} could not be read: {exc.strerror or exc}", fix))
            continue
        dirnames = sorted(name for name, is_dir in listed if is_dir)
        filenames = sorted(name for name, is_dir in listed if not is_dir)
        yield folder, dirnames, filenames
        pending += [os.path.join(folder, name) for name in reversed(dirnames)]


def _folder_mode(path: str) -> int:
    """The permission bits of a real folder (not a link); 0 for anything else."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return stat.S_IMODE(info.st_mode) if stat.S_ISDIR(info.st_mode) else 0


def _tighten(paths: list[str]) -> bool:
    """Make each file ``PRIVATE_FILE`` and each folder ``PRIVATE_DIR``, never through a link."""
    tightened = True
    for path in paths:
        try:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                tightened = False  # a hard link: its other name may lie outside the root, whose mode is not ours
            elif stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode):
                os.chmod(path, PRIVATE_DIR if stat.S_ISDIR(info.st_mode) else PRIVATE_FILE)
        except FileNotFoundError:
            continue
    return tightened


def _remove(path: str) -> bool:
    with contextlib.suppress(FileNotFoundError):  # gone meanwhile: what the fix wanted
        os.unlink(path)
    return True


def _check_venv() -> list[Finding]:
    venv = environment.current_venv()
    if venv and environment.ready(venv):
        return []
    wanted = environment.REQUIREMENTS
    bootstrap = os.path.join(environment.PLUGIN_ROOT, "hooks", "bootstrap.py")
    return [
        Finding(
            f"blackboard is running on {sys.executable}, not the plugin's environment built from {wanted}",
            "start a Claude Code session (its SessionStart hook rebuilds it), "
            f"or run python3 {bootstrap} VENV {wanted}",
        )
    ]


def quarantine(path: str) -> bool:
    """Rename a damaged file aside, keeping every byte."""
    os.rename(path, f"{path}.corrupt-{compact_now()}")
    return True
