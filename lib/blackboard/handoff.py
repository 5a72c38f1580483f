"""Handoff files on disk: their front matter, reading them, and publishing ``latest-handoff.md``.

A handoff is markdown with YAML front matter. We write one ``key: <JSON scalar>`` per line,
a subset of YAML that python-frontmatter reads and that is parsed here without PyYAML
(docs/adr/0005-handoff-format.md); a file a person edited into other YAML is read with
python-frontmatter. What the body says is built by ``render``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import time
from collections.abc import Mapping

from .clock import epoch_seconds, format_utc, now_iso
from .fsutil import atomic_write, make_dirs, read_head, refuse_links
from .ids import is_session_id
from .ledger import MAX_BYTES, Ledger, merge
from .locks import file_lock
from .meta import FINISHED
from .paths import PathResolver
from .render import OPEN_WORK, open_section, replace_section

FIELDS = (
    "session_id",
    "org",
    "project",
    "status",
    "started",
    "ended",
    "end_reason",
    "parent_session_id",
    "git_branch",
    "host",
    "generation",
)
MAX_HANDOFF_BYTES = 128 * 1024  # and the open work's front matter line past FRONT_MATTER_BYTES (summary.bounded)
FRONT_MATTER_BYTES = 48 * 1024  # all but the open work (ledger.MAX_BYTES); the rest of a handoff is its body
MAX_HANDOFF_READ = 2 * 1024 * 1024  # a handoff at its largest: the open work, the rest of the front matter, the body
SHORT_TEXT = 60  # what an open item's text keeps when the open work is over ledger.MAX_BYTES
MAX_PREVIOUS = 10
MAX_OFFERS_PUBLISHED = 20  # handoffs one import merges into the latest, the newest
CLOCK_SLACK_SECONDS = 300
MAX_YAML_NESTING = 32
MAX_GENERATION = 2**31  # a remote's larger number counts as this: it cannot pin the latest forever
STRUCTURED = ("open_work", "closed_work", "asked", "changed")  # JSON lists or objects: the ledger and the digest


def handoff_fields(
    meta: Mapping[str, object], open_tasks: int, done_tasks: int, notes: int, claimed_tasks: int = 0
) -> dict[str, object]:
    """The front matter of a handoff: the session's identity and state, and its counts."""
    fields = {key: meta.get(key) for key in FIELDS}
    fields.update(open_tasks=open_tasks, claimed_tasks=claimed_tasks, done_tasks=done_tasks, notes=notes)
    return fields


def dump_front_matter(fields: Mapping[str, object]) -> str:
    """``---`` delimited front matter with one JSON value per key (valid YAML), within its budget.

    The open work has ``ledger.MAX_BYTES`` of its own (``fit_open_work``); the rest keeps
    within ``FRONT_MATTER_BYTES``, the least needed parts giving way first (``_SHRINKS``). A
    cut never falls inside the front matter, so the ledger it carries always reads back.
    """
    fields = dict(fields)
    fit_open_work(fields)
    open_work = _value_bytes(fields["open_work"]) if "open_work" in fields else 0
    text = _dump(fields)
    for shrink in _SHRINKS:
        if len(text.encode()) - open_work <= FRONT_MATTER_BYTES:
            break
        shrink(fields)
        text = _dump(fields)
    return text


def fit_open_work(fields: dict[str, object]) -> bool:
    """``open_work`` within ``ledger.MAX_BYTES`` (thousands of items); True when something had to give way.

    Past it, every text is shortened to ``SHORT_TEXT`` characters; if that is not enough, the
    oldest items (the list's end) are left out and counted in ``open_work_cut``, which the
    handoff and ``blackboard task list`` report.
    """
    items = fields.get("open_work")
    if not isinstance(items, list) or _value_bytes(items) <= MAX_BYTES:
        return False
    items = [{**i, "text": str(i.get("text", ""))[:SHORT_TEXT]} if isinstance(i, dict) else i for i in items]
    room, kept = MAX_BYTES, 0
    for item in items:
        room -= _value_bytes(item) + 2  # and its ", "
        if room < 0:
            break
        kept += 1
    fields["open_work"] = items[:kept]
    if kept < len(items):
        cut = fields.get("open_work_cut")
        fields["open_work_cut"] = (cut if type(cut) is int and cut > 0 else 0) + len(items) - kept
    return True


def _value_bytes(value: object) -> int:
    """The bytes ``value`` takes in front matter, as ``_dump`` writes it."""
    return len(_yaml_safe(json.dumps(value, ensure_ascii=False, default=str)).encode())


def _dump(fields: Mapping[str, object]) -> str:
    # default=str: a date a person wrote as bare YAML comes back from PyYAML as a datetime
    lines = [
        f"{key}: {_yaml_safe(json.dumps(value, ensure_ascii=False, default=str))}" for key, value in fields.items()
    ]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _yaml_safe(text: str) -> str:
    """JSON as YAML reads it the same: what YAML refuses or takes for a line break, escaped.

    A lone surrogate (half an emoji) has no UTF-8 at all: it becomes U+FFFD.
    """
    text = re.sub("[\ud800-\udfff]", "\\\\ufffd", text)
    return re.sub("[\x7f-\x9f\u2028\u2029\ufffe\uffff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def _fewer_files(fields: dict[str, object]) -> None:
    changed = fields.get("changed")
    if not isinstance(changed, dict):
        return
    changed = fields["changed"] = dict(changed)
    if isinstance(changed.get("files"), list):
        changed["files"] = changed["files"][:10]
    others = changed.get("uncommitted_others")
    if isinstance(others, list):  # each other live session's count, not its files
        changed["uncommitted_others"] = [
            {k: v for k, v in o.items() if k != "paths"} if isinstance(o, dict) else o for o in others
        ]


def _no_latest_requests(fields: dict[str, object]) -> None:
    asked = fields.get("asked")
    if isinstance(asked, dict):
        fields["asked"] = {**asked, "latest": []}


def _fewer_closed(fields: dict[str, object]) -> None:
    closed = fields.get("closed_work")
    if isinstance(closed, list):
        fields["closed_work"] = closed[:100]


def _no_digest(fields: dict[str, object]) -> None:
    for key in ("asked", "stopped", "changed"):
        fields.pop(key, None)


_SHRINKS = (_fewer_files, _no_latest_requests, _fewer_closed, _no_digest)


def split_front_matter(text: str, yaml_allowed: bool = True) -> tuple[dict[str, object], str]:
    """``(fields, body)`` of a handoff; a file without front matter has empty fields.

    Without ``yaml_allowed`` only our own front matter is read and anything else is a
    ValueError: a handoff from another machine never reaches PyYAML (an alias bomb would).
    """
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 3)
    if end < 0:
        return {}, text
    head, body = text[4:end], text[end + 5 :]
    try:
        return _json_front_matter(head), body
    except RecursionError:  # nested past any sense: PyYAML would overflow the C stack on it
        if not yaml_allowed:
            raise ValueError("front matter nested too deep") from None
        return {}, text
    except ValueError:
        if not yaml_allowed:
            raise ValueError("front matter that is not the plugin's own") from None
        if _nesting(head) > MAX_YAML_NESTING:
            return {}, text
        import frontmatter  # a person wrote YAML we do not emit; let the real parser read it
        import yaml

        try:
            post = frontmatter.loads(text)
            json.dumps(post.metadata, default=str)  # what `handoff --json` prints must be printable
        except (ValueError, RecursionError, yaml.YAMLError):  # unreadable front matter is no front matter
            return {}, text
        return dict(post.metadata), post.content


def _nesting(head: str) -> int:
    """How deep brackets or indentation nest in front matter, roughly: enough to keep PyYAML off a bomb."""
    depth = deepest = 0
    for char in head:
        depth += 1 if char in "[{" else -1 if char in "]}" else 0
        deepest = max(deepest, depth)
    indents = (len(line) - len(line.lstrip(" ")) for line in head.split("\n"))
    return max(deepest, max(indents, default=0) // 2)


def _json_front_matter(head: str) -> dict[str, object]:
    """Our own front matter: a JSON value per line; ValueError for anything else.

    A value is a scalar or a list of scalars, but for the ``STRUCTURED`` keys (the ledger and
    the digest), whose shape their readers check (``ledger.items_from``).
    """
    fields: dict[str, object] = {}
    for line in head.split("\n"):
        key, sep, value = line.partition(": ")
        if not sep or not key.isidentifier():
            raise ValueError(line)
        parsed = json.loads(value)
        items = parsed if isinstance(parsed, list) else [parsed]
        if key not in STRUCTURED and any(isinstance(item, (list, dict)) for item in items):
            raise ValueError(f"{key}: not a scalar")
        fields[key] = parsed
    return fields


def read_handoff(path: str) -> tuple[dict[str, object], str] | None:
    """``(fields, body)`` of the handoff at ``path`` (its first 512 KiB), or None when there is none.

    A link, a folder or a FIFO in its place counts as none (``blackboard doctor`` names it).
    """
    try:
        text = read_head(path, MAX_HANDOFF_READ)
    except OSError:
        return None
    return split_front_matter(text) if text else None


def write_session_handoff(resolver: PathResolver, session_id: str, text: str, durable: bool = True) -> None:
    """Write ``handoff-{id}.md`` (``durable=False``: a draft, rebuilt from the board if a power loss takes it)."""
    refuse_links(resolver.root, resolver.get_handoff_dir())
    make_dirs(resolver.get_handoff_dir())
    atomic_write(resolver.handoff_path(session_id), text, durable)


def effective_end(fields: Mapping[str, object]) -> float | None:
    """When a handoff's session ended, as far as this machine can tell: ``ended``, but never after ``published``.

    ``ended`` comes from the ending machine's clock (or a legacy file); ``published`` is this
    machine's clock when the handoff was offered. A clock that ran ahead, or a file stamped
    2999, cannot make a handoff newer than the moment it arrived. None when ``ended`` is no time.
    """
    ended = epoch_seconds(str(fields.get("ended") or ""))  # str(): a date a person wrote as bare YAML
    published = epoch_seconds(str(fields.get("published") or ""))
    if ended is None:
        return None
    return ended if published is None else min(ended, published)


def ended_at(fields: Mapping[str, object]) -> float | None:
    """``effective_end`` as worked out when the handoff was published here (``ended_epoch``); no date to parse."""
    stored = fields.get("ended_epoch")
    if isinstance(stored, (int, float)) and not isinstance(stored, bool) and 0 <= stored < 1e11:  # no NaN, no 2999+
        return float(stored)
    return effective_end(fields)


def generation(fields: Mapping[str, object]) -> int:
    """A handoff's place in the project's history: one more than the latest its machine knew when it ended.

    Clocks cannot order handoffs across machines (one may run a day behind) nor across a
    corrected clock (a session stamped a month ahead), but this can: a session that ended
    after another's handoff reached its machine comes after it (docs/adr/0019-sync-through-git.md).
    0 for a handoff without one (an older version's).
    """
    value = fields.get("generation")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return 0
    return min(value, MAX_GENERATION)


def next_generation(resolver: PathResolver, ended: float | None = None) -> int:
    """The generation of a handoff this machine writes now: after the latest's.

    ``ended``: a session found abandoned, which stopped at that time; it comes after the
    latest only when it stopped after the latest ended, else it sits beside it and the
    clock decides.
    """
    latest = read_handoff(resolver.latest_handoff_path())
    if latest is None:
        return 1
    known, end = generation(latest[0]), ended_at(latest[0])
    after = ended is None or end is None or ended > end
    return min(known + 1, MAX_GENERATION) if after else known


def order(fields: Mapping[str, object]) -> tuple[int, float, str]:
    """Newer handoffs sort higher: by generation, then by when they ended (as far as this machine can tell).

    An ``ended`` that is not a timestamp sorts oldest.
    """
    end = effective_end(fields)
    return (generation(fields), float("-inf") if end is None else end, str(fields.get("session_id") or ""))


def publish_latest(resolver: PathResolver, *texts: str) -> bool:
    """Make each of ``texts`` in turn (oldest first) the project's ``latest-handoff.md`` unless a newer one is there.

    An older handoff arriving late is kept reachable: its id joins the newer one's
    ``previous_sessions``. A session that did nothing (``nothing_done``) replaces only a latest
    that did nothing too (or is unreadable), and joins no chain (docs/adr/0034-handoffs-with-parallel-sessions.md).
    The file is written once, however many texts, and not at all when only such handoffs came.
    Returns True when the last of ``texts`` became the latest.
    """
    path = resolver.latest_handoff_path()
    refuse_links(resolver.root, resolver.get_handoff_dir())
    make_dirs(resolver.get_handoff_dir())
    with file_lock(path):
        current = read_handoff(path)
        if current is not None and "published" not in current[0]:  # written before this field existed
            current[0]["published"] = _written_at(path)
        became = changed = False
        for text in texts:
            fields, body = _arriving(text)
            if current is not None and did_nothing(fields) and _holds_work(current[0]):
                became = False  # what it carries is the latest's already: it took its ledger from it
                continue
            changed = True
            if current is None or order(fields) >= order(current[0]):
                became = True
                older = current[0] if current else {}
                chain = [older.get("session_id")] + previous_sessions(older)
                fields["previous_sessions"] = _unique(chain, exclude=fields.get("session_id"))
                published = _with_ledger(fields, body, merge(Ledger.from_fields(fields), Ledger.from_fields(older)))
            else:
                became = False
                newer, newer_body = current
                chain = [fields.get("session_id")] + previous_sessions(newer)
                newer["previous_sessions"] = _unique(chain, exclude=newer.get("session_id"))
                ledger = merge(Ledger.from_fields(newer), Ledger.from_fields(fields))
                published = _with_ledger(newer, newer_body, ledger)
            current = split_front_matter(published)
        if changed:
            atomic_write(path, published)
        return became


def did_nothing(fields: Mapping[str, object]) -> bool:
    """Whether a handoff's session did nothing another would continue from (``summary.did_nothing``)."""
    return fields.get("nothing_done") is True


def _holds_work(fields: Mapping[str, object]) -> bool:
    """Whether the latest handoff is one a session that did nothing must leave in place: a session's that did
    something (a legacy seed's included), not one whose front matter cannot be read."""
    return is_session_id(fields.get("session_id")) and not did_nothing(fields)


def _arriving(text: str) -> tuple[dict[str, object], str]:
    """A handoff's ``(fields, body)`` as it is published here: stamped now, its end checked against this clock."""
    fields, body = split_front_matter(text)
    fields["published"] = now_iso()
    fields.pop("clock_ahead", None)
    end, claimed = effective_end(fields), epoch_seconds(str(fields.get("ended") or ""))
    if end is not None:
        fields["ended_epoch"] = int(end)  # read at every SessionStart without parsing a date
    if end is not None and claimed is not None and claimed > end + CLOCK_SLACK_SECONDS:
        fields["clock_ahead"] = True  # its clock was ahead of this machine's
    return fields, body


def handoff_id(name: str) -> str | None:
    """The session of ``handoff-{id}.md``, or None for any other name."""
    if not (name.startswith("handoff-") and name.endswith(".md")):
        return None
    session_id = name[len("handoff-") : -len(".md")]
    return session_id if is_session_id(session_id) else None


def publish_newest(resolver: PathResolver) -> bool:
    """Make the newest finished session's handoff this machine holds the latest, if it is not yet.

    Publishing is the last step of an ending; a kill or a full disk just before it leaves a
    newer handoff unpublished, and nothing later would offer it again. A sync round starts
    with this: it reads every handoff written since the latest was, so a round over 10 000
    sessions reads a few files, not 10 000. Returns whether the latest changed.
    """
    try:
        since = os.stat(resolver.latest_handoff_path()).st_mtime
    except OSError:
        since = 0.0
    found = _finished_since(resolver, since)
    if not found:
        return False
    newest = max(found)
    current = read_handoff(resolver.latest_handoff_path())
    if current is not None and (current[0].get("session_id") == newest[0][2] or order(current[0]) >= newest[0]):
        return False
    return publish_latest(resolver, newest[1])


def publish_since(resolver: PathResolver, since: float, most: int) -> bool:
    """Publish the newest ``most`` finished handoffs written here since ``since`` (a ``time.time()``), oldest first.

    What an import killed before it published left: the newest becomes the latest unless a
    newer one is there, and each brings its open work and closings into it, even one older
    than a latest a session here published meanwhile. Returns whether the latest changed.
    """
    found = _finished_since(resolver, since)
    for folder in glob.glob(os.path.join(glob.escape(resolver.sync_dir), "machines", "*", "handoff")):
        found += _finished_since(resolver, since, folder)  # what an import kept of other machines (ADR 30)
    texts = [text for _, text in sorted(found)[-most:]]
    return publish_latest(resolver, *texts) if texts else False


def publish_what_an_import_left(resolver: PathResolver) -> None:
    """An import killed before it published left ``_sync/publishing``: publish the newest finished handoffs
    written since it began (``MAX_OFFERS_PUBLISHED``), and remove the marker.

    Every one of them, not only those newer than the latest: a session that ended here since may
    have published a newer latest, which still lacks what they closed. For a caller that holds
    the round's lock (no import is under way); a SessionStart does it too, sync on or off.
    """
    marker = resolver.sync_file("publishing")
    try:
        began = os.lstat(marker).st_mtime
    except FileNotFoundError:
        return
    publish_since(resolver, began, MAX_OFFERS_PUBLISHED)
    remove_marker(marker)


def remove_marker(path: str) -> None:
    """Remove an empty marker file; a folder a hand put in its place is set aside, so it stops nothing."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except (IsADirectoryError, PermissionError):  # a folder: Linux says EISDIR, macOS EPERM
        os.rename(path, f"{path}.{time.time_ns()}.aside")


def _finished_since(
    resolver: PathResolver, since: float, folder: str | None = None
) -> list[tuple[tuple[int, float, str], str]]:
    """``(order, text)`` of each finished session's handoff written here (in ``folder``, else the project's
    handoff folder) at or after ``since``."""
    try:
        found = [e for e in os.scandir(folder or resolver.get_handoff_dir()) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
    finished = []
    for entry in found:
        session_id = handoff_id(entry.name)
        if session_id is None:
            continue
        try:
            arrived = entry.stat(follow_symlinks=False).st_mtime
            if arrived < since:
                continue  # the latest was written after it, and weighed it then
            text = read_head(entry.path, MAX_HANDOFF_READ)
            fields, _ = split_front_matter(text)
        except (OSError, ValueError):
            continue  # unreadable: `blackboard doctor` names it
        # a handoff cannot have ended after it was written here: a remote's that claims an end
        # ahead (within the hour the clock check allows) must not outrank sessions that end later
        claimed = epoch_seconds(str(fields.get("published") or ""))  # a remote's own claim counts no later
        fields["published"] = format_utc(arrived if claimed is None else min(claimed, arrived))
        if fields.get("session_id") != session_id or fields.get("status") not in FINISHED or did_nothing(fields):
            continue  # an active session's draft is no one's handoff yet; one that did nothing is no one's latest
        finished.append((order(fields), text))
    return finished


def _with_ledger(fields: dict[str, object], body: str, ledger: Ledger) -> str:
    """The handoff ``fields`` and ``body`` carrying ``ledger``, its open work section rendered again.

    A handoff without a ledger (a legacy seed, an older version's) gets one only when there is
    open work to carry.
    """
    if not ledger.open and not ledger.closed and "open_work" not in fields:
        return dump_front_matter(fields) + body
    fields.update(ledger.to_fields())
    if fit_open_work(fields):
        ledger = Ledger.from_fields(fields)
    fields["open_tasks"], fields["claimed_tasks"] = len(ledger.open) + ledger.cut, ledger.claimed
    session_id = fields.get("session_id")
    section = open_section(ledger, session_id if isinstance(session_id, str) else "")
    return dump_front_matter(fields) + replace_section(body, OPEN_WORK, section)


def _written_at(path: str) -> str:
    try:
        return format_utc(os.stat(path).st_mtime)
    except OSError:
        return now_iso()


def previous_sessions(fields: Mapping[str, object]) -> list[str]:
    """The ids a handoff chains to; a hand-edited value that is not a list counts as none."""
    value = fields.get("previous_sessions")
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _unique(ids: list[object], exclude: object) -> list[str]:
    seen: list[str] = []
    for item in ids:
        if isinstance(item, str) and is_session_id(item) and item != exclude and item not in seen:
            seen.append(item)
    return seen[:MAX_PREVIOUS]
