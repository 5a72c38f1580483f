"""Claude Code's own task list (TaskCreate, TaskUpdate): ``{config dir}/tasks/{session_id}/{n}.json``.

Read for the handoff's open work, every task of it: only regular files directly in that folder,
none through a link, each within ``MAX_TASK_BYTES``, and, so that a session's end stays within
its budget (SPEC §12), at most ``MAX_TASKS`` files and ``MAX_TOTAL_BYTES`` in all, the newest
first. What a bound leaves unread is counted, never dropped without a word.
"""

from __future__ import annotations

import os
import re
import stat

from .fsutil import json_object, read_bounded
from .ids import is_session_id

MAX_TASKS = 2000  # files read, the newest: about 100 ms of a session's end on a slow disk
MAX_TOTAL_BYTES = 4 * 1024 * 1024  # read in all (a task file is a few hundred bytes)
MAX_TASK_BYTES = 64 * 1024  # of one file
NAME = re.compile(r"[0-9]{1,9}\.json")  # Claude Code's own: the task's number
UNFINISHED = ("pending", "in_progress")


class ClaudeTask:
    """One task of Claude Code's list: its number, subject and status."""

    __slots__ = ("number", "subject", "status")

    def __init__(self, number: str, subject: str, status: str) -> None:
        self.number = number
        self.subject = subject
        self.status = status


def tasks_dir(config_dir: str, session_id: str) -> str | None:
    """``{config dir}/tasks/{session_id}`` when it is a real folder (no link on the way below the config dir)."""
    if not config_dir or not is_session_id(session_id):
        return None  # "": no Claude Code folder (``Settings.claude_dir``)
    path = config_dir
    for part in ("tasks", session_id):
        path = os.path.join(path, part)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
        except OSError:
            return None
    return path


class TaskList:
    """What was read of a session's list: its ``tasks`` in their numbers' order, whether that is every task
    (``whole``), and how many task files a bound left unread (``unread``: too large, or past the totals).

    A plain class, as ``ClaudeTask``: ``dataclasses`` imports ``inspect``, a cost every hook would pay.
    """

    __slots__ = ("tasks", "whole", "unread")

    def __init__(self, tasks: list[ClaudeTask] | None = None, whole: bool = False, unread: int = 0) -> None:
        self.tasks = tasks or []
        self.whole = whole
        self.unread = unread


def read_tasks(config_dir: str, session_id: str) -> TaskList:
    """The session's tasks, and whether that is every one of them.

    Only names of ASCII digits count (``².json`` is a digit to ``str.isdigit``, not to ``int``).
    Past a bound the list is not whole, nothing it lacks is closed, and the files left unread are
    counted. Without a Claude Code folder to look in, or one that cannot be listed, nothing is whole either.
    """
    if not config_dir:
        return TaskList()
    folder = tasks_dir(config_dir, session_id)
    if folder is None:
        return TaskList(whole=os.path.isdir(config_dir))  # no list at all for this session: it has no task
    try:
        numbered = [n for n in os.listdir(folder) if NAME.fullmatch(n)]
    except OSError:
        return TaskList()
    newest_first = sorted(numbered, key=_number, reverse=True)  # a long session's latest are the ones still open
    found: list[ClaudeTask] = []
    oversized, room = 0, MAX_TOTAL_BYTES
    for index, name in enumerate(newest_first[:MAX_TASKS]):
        data = _read(os.path.join(folder, name))
        room -= len(data or b"")
        if room < 0:  # past the total: this one and every older one are left unread
            return TaskList(found[::-1], False, oversized + len(newest_first) - index)
        if data is not None and len(data) > MAX_TASK_BYTES:
            oversized += 1
            continue
        task = parse_task(name[: -len(".json")], data)
        if task is not None:
            found.append(task)
    unread = oversized + max(len(newest_first) - MAX_TASKS, 0)
    return TaskList(found[::-1], unread == 0, unread)


def parse_task(number: str, data: bytes | None) -> ClaudeTask | None:
    """One task file's ``subject`` and ``status``; None for anything else."""
    task = json_object(data)
    subject, status = task.get("subject"), task.get("status")
    if not isinstance(subject, str) or not subject.strip() or not isinstance(status, str):
        return None
    return ClaudeTask(number, subject, status)


def _read(path: str) -> bytes | None:
    """The file's bytes, one more than ``MAX_TASK_BYTES`` at most (so a file over it shows as such); None when
    it is no regular file (a link, a FIFO, a folder) or is gone."""
    try:
        return read_bounded(path, MAX_TASK_BYTES + 1)
    except OSError:
        return None


def _number(name: str) -> int:
    return int(name[: -len(".json")])
