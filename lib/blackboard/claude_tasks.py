"""Claude Code's own task list (TaskCreate, TaskUpdate): ``{config dir}/tasks/{session_id}/{n}.json``.

Read for the handoff's open work. Only regular files directly in that folder are read, none
through a link, each bounded, and at most ``MAX_TASKS`` of them.
"""

from __future__ import annotations

import os
import re
import stat

from .fsutil import json_object, read_bounded
from .ids import is_session_id

MAX_TASKS = 200
NAME = re.compile(r"[0-9]{1,9}\.json")  # Claude Code's own: the task's number
MAX_TASK_BYTES = 64 * 1024
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


def read_tasks(config_dir: str, session_id: str) -> tuple[list[ClaudeTask], bool]:
    """The session's tasks, in their numbers' order, and whether that is every one of them.

    Only names of ASCII digits count (``².json`` is a digit to ``str.isdigit``, not to ``int``);
    past ``MAX_TASKS``, the newest are read and the list is not whole: nothing it lacks is closed.
    Without a Claude Code folder to look in, or one that cannot be listed, nothing is whole either.
    """
    if not config_dir:
        return [], False
    folder = tasks_dir(config_dir, session_id)
    if folder is None:
        return [], os.path.isdir(config_dir)  # no list at all for this session: it has no task
    try:
        numbered = [n for n in os.listdir(folder) if NAME.fullmatch(n)]
    except OSError:
        return [], False
    names = sorted(numbered, key=_number)[-MAX_TASKS:]  # the newest, in a very long session
    found = []
    for name in names:
        task = parse_task(name[: -len(".json")], _read(os.path.join(folder, name)))
        if task is not None:
            found.append(task)
    return found, len(numbered) <= MAX_TASKS


def parse_task(number: str, data: bytes | None) -> ClaudeTask | None:
    """One task file's ``subject`` and ``status``; None for anything else."""
    task = json_object(data)
    subject, status = task.get("subject"), task.get("status")
    if not isinstance(subject, str) or not subject.strip() or not isinstance(status, str):
        return None
    return ClaudeTask(number, subject, status)


def _read(path: str) -> bytes | None:
    try:
        data = read_bounded(path, MAX_TASK_BYTES + 1)
    except OSError:  # a link, a FIFO, a folder
        return None
    return data if data is not None and len(data) <= MAX_TASK_BYTES else None


def _number(name: str) -> int:
    return int(name[: -len(".json")])
