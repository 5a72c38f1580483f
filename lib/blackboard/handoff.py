"""Handoff files: what an ending session leaves for the next one, as markdown with YAML front matter.

The front matter is written one ``key: <JSON scalar>`` per line, a subset of YAML that
python-frontmatter reads and that SessionStart parses without importing PyYAML
(docs/adr/0005-handoff-format.md). A file a person edited into other YAML is read with
python-frontmatter.
"""

from __future__ import annotations

import os

from . import entries, jsonfast
from .clock import epoch_seconds
from .fsutil import atomic_write, file_lock, read_head
from .ids import is_session_id
from .meta import Meta, read_meta_or_none
from .paths import PathResolver
from .redact import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

META_KEYS = (
    "session_id",
    "org",
    "project",
    "status",
    "started",
    "ended",
    "end_reason",
    "parent_session_id",
    "git_branch",
)
MAX_HANDOFF_BYTES = 60 * 1024
MAX_ITEM_CHARS = 1200
MAX_ITEMS = {"open": 100, "done": 50, "context": 50, "notes": 12, "active": 10}
MAX_PREVIOUS = 10
MAX_HANDOFF_READ = 512 * 1024
TAIL_BYTES = {"tasks": 256 * 1024, "context": 128 * 1024, "notes": 96 * 1024}
ACTIVE_HEADING = "## Sessions still active in this project"
_NOTE_NUMBER = r"^n(\d+)$"


def dump_front_matter(fields: Dict[str, Any]) -> str:
    """``---`` delimited front matter with one JSON scalar per key (valid YAML)."""
    # default=str: a date a person wrote as bare YAML comes back from PyYAML as a datetime
    lines = [f"{key}: {jsonfast.dumps(value, ensure_ascii=False, default=str)}" for key, value in fields.items()]
    return "---\n" + "\n".join(lines) + "\n---\n"


def split_front_matter(text: str) -> Tuple[Dict[str, Any], str]:
    """``(fields, body)`` of a handoff; a file without front matter has empty fields."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 3)
    if end < 0:
        return {}, text
    head, body = text[4:end], text[end + 5 :]
    try:
        return _json_front_matter(head), body
    except ValueError:
        import frontmatter  # a person wrote YAML we do not emit; let the real parser read it
        import yaml

        try:
            post = frontmatter.loads(text)
        except (ValueError, RecursionError, yaml.YAMLError):  # unreadable front matter is no front matter
            return {}, text
        return dict(post.metadata), post.content


def _json_front_matter(head: str) -> Dict[str, Any]:
    fields: Dict[str, Any] = {}
    for line in head.split("\n"):
        key, sep, value = line.partition(": ")
        if not sep or not key.isidentifier():
            raise ValueError(line)
        fields[key] = jsonfast.loads(value)
    return fields


def read_handoff(path: str) -> Optional[Tuple[Dict[str, Any], str]]:
    """``(fields, body)`` of the handoff at ``path`` (its first 512 KiB), or None when there is none."""
    text = read_head(path, MAX_HANDOFF_READ)
    return split_front_matter(text) if text else None


def board_state(board_dir: str) -> Dict[str, Any]:
    """Open and done tasks, shared context and recent notes of a session, read from file tails."""
    tasks, context, notes = (
        entries.read_tail_entries(os.path.join(board_dir, entries.BOARD_FILES[kind][0]), TAIL_BYTES[kind])
        for kind in ("tasks", "context", "notes")
    )
    import re  # not on SessionStart's path

    last_number = max((int(m.group(1)) for n in notes if (m := re.match(_NOTE_NUMBER, n.id))), default=0)
    open_tasks, done_tasks = split_tasks(tasks)
    return {
        "open": open_tasks,
        "done": done_tasks,
        "context": context,
        "notes": notes[-MAX_ITEMS["notes"] :],
        "note_count": max(last_number, len(notes)),
    }


def split_tasks(tasks: List[entries.Entry]) -> Tuple[List[entries.Entry], List[entries.Entry]]:
    """``(not done, done)``."""
    done = [t for t in tasks if t.fields.get("status") == "done"]
    return [t for t in tasks if t.fields.get("status") != "done"], done


def render_sections(state: Dict[str, Any], sections: Tuple[str, ...]) -> str:
    """The named body sections (``open``, ``done``, ``context``, ``notes``) as markdown, bounded."""
    titles = {
        "open": "Open tasks",
        "done": "Tasks done this session",
        "context": "Shared context",
        "notes": "Recent notes",
    }
    render = {"open": _task_line, "done": _task_line, "context": _context_line, "notes": _note_line}
    parts = []
    for name in sections:
        items = state[name]
        shown = items[-MAX_ITEMS[name] :] if name == "notes" else items[: MAX_ITEMS[name]]
        lines = [render[name](item) for item in shown]
        if len(items) > len(shown):
            lines.append(f"- … and {len(items) - len(shown)} more (`blackboard show` lists them all)")
        parts.append(f"## {titles[name]}\n\n" + ("\n".join(lines) if lines else "_none_") + "\n")
    return "\n".join(parts)


def _task_line(task: entries.Entry) -> str:
    who = task.fields.get("claimed_by")
    claim = f" — claimed by {who}" if who else (" — unclaimed" if task.fields.get("status") != "done" else "")
    return f"- **{task.id}** {_item(task.body)}{claim}"


def _context_line(entry: entries.Entry) -> str:
    return f"- **{entry.id}** (by {entry.fields.get('author', '?')}): {_item(entry.body)}"


def _note_line(note: entries.Entry) -> str:
    return f"- {note.fields.get('at', '?')} · {note.fields.get('author', '?')}: {_item(note.body)}"


def _item(text: str) -> str:
    """One entry's text, secrets redacted before it is cut so no token is left half-shown."""
    text = text.strip()
    length = len(text)
    text = redact(text[: MAX_ITEM_CHARS + 512])  # a token crossing the cut is still whole here
    if length > MAX_ITEM_CHARS:
        text = text[:MAX_ITEM_CHARS] + f" … [{length - MAX_ITEM_CHARS} characters cut]"
    return text.replace("\n", "\n  ")


def active_sessions_section(resolver: PathResolver, exclude: str) -> str:
    """The project's other active sessions, from the active markers."""
    others = [i for i in resolver.active_session_ids() if i != exclude]
    lines = []
    for session_id in others[: MAX_ITEMS["active"]]:
        meta = read_meta_or_none(resolver.meta_path(session_id)) or {}
        lines.append(f"- {session_id} (started {meta.get('started', '?')}, branch {meta.get('git_branch') or '?'})")
    if len(others) > len(lines):
        lines.append(f"- … and {len(others) - len(lines)} more (`blackboard sessions --status active`)")
    return f"{ACTIVE_HEADING}\n\n" + ("\n".join(lines) or "_none_") + "\n"


def build(resolver: PathResolver, meta: Meta) -> str:
    """The handoff text for a session, bounded in size and with secrets redacted."""
    session_id = meta["session_id"]
    state = board_state(resolver.get_session_blackboard_dir(session_id))
    fields = {key: meta.get(key) for key in META_KEYS}
    fields.update(open_tasks=len(state["open"]), done_tasks=len(state["done"]), notes=state["note_count"])
    body = f"# Handoff from session {session_id}\n\n" + render_sections(state, ("open", "done", "context"))
    others = active_sessions_section(resolver, session_id)
    notes = render_sections(state, ("notes",))
    room = MAX_HANDOFF_BYTES - len(body.encode()) - len(others.encode()) - 2048
    if len(notes.encode()) > room:
        notes = notes.encode()[: max(room, 0)].decode("utf-8", "ignore") + "\n\n[… older notes cut]\n"
    text = dump_front_matter(fields) + "\n" + redact(body + "\n" + notes + "\n" + others)
    if len(text.encode()) > MAX_HANDOFF_BYTES:
        text = text.encode()[:MAX_HANDOFF_BYTES].decode("utf-8", "ignore") + "\n\n[… handoff cut to size]\n"
    return text


def write_session_handoff(resolver: PathResolver, meta: Meta) -> str:
    """Write ``handoff-{id}.md`` for a session; returns its text."""
    text = build(resolver, meta)
    os.makedirs(resolver.get_handoff_dir(), exist_ok=True)
    atomic_write(resolver.handoff_path(meta["session_id"]), text)
    return text


def _order(fields: Dict[str, Any]) -> Tuple[float, str]:
    """Newer handoffs sort higher; an ``ended`` that is not a timestamp sorts oldest."""
    ended = epoch_seconds(str(fields.get("ended") or ""))
    return (float("-inf") if ended is None else ended, str(fields.get("session_id") or ""))


def publish_latest(resolver: PathResolver, text: str) -> bool:
    """Make ``text`` the project's ``latest-handoff.md`` unless a newer one is there.

    An older handoff arriving late is kept reachable: its id joins the newer one's
    ``previous_sessions``. Returns True when ``text`` became the latest.
    """
    path = resolver.latest_handoff_path()
    os.makedirs(resolver.get_handoff_dir(), exist_ok=True)
    fields, body = split_front_matter(text)
    with file_lock(path):
        current = read_handoff(path)
        if current is None or _order(fields) >= _order(current[0]):
            older = current[0] if current else {}
            chain = [older.get("session_id")] + previous_sessions(older)
            fields["previous_sessions"] = _unique(chain, exclude=fields.get("session_id"))
            atomic_write(path, dump_front_matter(fields) + body)
            return True
        newer, newer_body = current
        chain = [fields.get("session_id")] + previous_sessions(newer)
        newer["previous_sessions"] = _unique(chain, exclude=newer.get("session_id"))
        atomic_write(path, dump_front_matter(newer) + newer_body)
        return False


def previous_sessions(fields: Dict[str, Any]) -> List[str]:
    """The ids a handoff chains to; a hand-edited value that is not a list counts as none."""
    value = fields.get("previous_sessions")
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _unique(ids: List[Any], exclude: Any) -> List[str]:
    seen: List[str] = []
    for item in ids:
        if is_session_id(item) and item != exclude and item not in seen:
            seen.append(item)
    return seen[:MAX_PREVIOUS]
