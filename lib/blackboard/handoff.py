"""Handoff files: what an ending session leaves for the next one, as markdown with YAML front matter.

The front matter is written one ``key: <JSON scalar>`` per line, a subset of YAML that
python-frontmatter reads and that SessionStart parses without importing PyYAML
(docs/adr/0005-handoff-format.md). A file a person edited into other YAML is read with
python-frontmatter.
"""

import json
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from . import entries
from .fsutil import atomic_write, file_lock, read_tail, read_text
from .meta import Meta, read_meta_or_none
from .paths import PathResolver
from .redact import redact

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
MAX_NOTES = 12
MAX_PREVIOUS = 10
TAIL_BYTES = {"tasks": 512 * 1024, "context": 256 * 1024, "notes": 96 * 1024}
ACTIVE_HEADING = "## Sessions still active in this project"
_NOTE_NUMBER = re.compile(r"^n(\d+)$")


def dump_front_matter(fields: Dict[str, Any]) -> str:
    """``---`` delimited front matter with one JSON scalar per key (valid YAML)."""
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields.items()]
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
        except (ValueError, yaml.YAMLError):  # unreadable front matter is no front matter
            return {}, text
        return dict(post.metadata), post.content


def _json_front_matter(head: str) -> Dict[str, Any]:
    fields: Dict[str, Any] = {}
    for line in head.split("\n"):
        key, sep, value = line.partition(": ")
        if not sep or not key.isidentifier():
            raise ValueError(line)
        fields[key] = json.loads(value)
    return fields


def read_handoff(path: str) -> Optional[Tuple[Dict[str, Any], str]]:
    """``(fields, body)`` of the handoff at ``path``, or None when there is none."""
    text = read_text(path)
    return split_front_matter(text) if text else None


def board_state(board_dir: str) -> Dict[str, Any]:
    """Open and done tasks, shared context and recent notes of a session, read from file tails."""
    tasks, _ = _read_entries(board_dir, "tasks")
    context, _ = _read_entries(board_dir, "context")
    notes, _ = _read_entries(board_dir, "notes")
    last_number = max((int(m.group(1)) for n in notes if (m := _NOTE_NUMBER.match(n.id))), default=0)
    return {
        "open": [t for t in tasks if t.fields.get("status", "open") != "done"],
        "done": [t for t in tasks if t.fields.get("status") == "done"],
        "context": context,
        "notes": notes[-MAX_NOTES:],
        "note_count": max(last_number, len(notes)),
    }


def _read_entries(board_dir: str, kind: str) -> Tuple[List[entries.Entry], bool]:
    path = os.path.join(board_dir, entries.BOARD_FILES[kind][0])
    text, cut = read_tail(path, TAIL_BYTES[kind])
    if cut:
        text = text[text.find("\n## ") + 1 :] if "\n## " in text else ""
    return entries.parse(text)[0], cut


def render_sections(state: Dict[str, Any], sections: Tuple[str, ...]) -> str:
    """The named body sections (``open``, ``done``, ``context``, ``notes``) as markdown."""
    renderers = {
        "open": ("Open tasks", [_task_line(t) for t in state["open"]]),
        "done": ("Tasks done this session", [_task_line(t) for t in state["done"]]),
        "context": ("Shared context", [_context_line(e) for e in state["context"]]),
        "notes": ("Recent notes", [_note_line(n) for n in state["notes"]]),
    }
    parts = []
    for name in sections:
        title, lines = renderers[name]
        parts.append(f"## {title}\n\n" + ("\n".join(lines) if lines else "_none_") + "\n")
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
    text = text.strip()
    if len(text) > MAX_ITEM_CHARS:
        text = text[:MAX_ITEM_CHARS] + f" … [{len(text) - MAX_ITEM_CHARS} characters cut]"
    return text.replace("\n", "\n  ")


def active_sessions_section(resolver: PathResolver, exclude: str) -> str:
    """The project's other active sessions, from the active markers."""
    lines = []
    for session_id in resolver.active_session_ids():
        if session_id == exclude:
            continue
        meta = read_meta_or_none(resolver.meta_path(session_id)) or {}
        lines.append(f"- {session_id} (started {meta.get('started', '?')}, branch {meta.get('git_branch') or '?'})")
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


def _order(fields: Dict[str, Any]) -> Tuple[str, str]:
    return (str(fields.get("ended") or ""), str(fields.get("session_id") or ""))


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
            chain = [older.get("session_id")] + list(older.get("previous_sessions") or [])
            fields["previous_sessions"] = _unique(chain, exclude=fields.get("session_id"))
            atomic_write(path, dump_front_matter(fields) + body)
            return True
        newer, newer_body = current
        chain = [fields.get("session_id")] + list(newer.get("previous_sessions") or [])
        newer["previous_sessions"] = _unique(chain, exclude=newer.get("session_id"))
        atomic_write(path, dump_front_matter(newer) + newer_body)
        return False


def _unique(ids: List[Any], exclude: Any) -> List[str]:
    seen: List[str] = []
    for item in ids:
        if isinstance(item, str) and item and item != exclude and item not in seen:
            seen.append(item)
    return seen[:MAX_PREVIOUS]
