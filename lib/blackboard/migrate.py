"""Move old flat blackboard files into ``_legacy/``, exactly once, byte for byte.

Sources: a project's ``.blackboard/*.md`` and the old global ``$ROOT/.blackboard/*.md``
(which moves into its own ``_legacy/``, so no project sees another's notes).
See docs/adr/0004-legacy-migration.md.
"""

from __future__ import annotations

import json
import os
import re

from . import handoff
from .clock import epoch_seconds, format_utc, now_iso
from .fsutil import atomic_write, file_lock, open_regular, read_tail, read_text, refuse_links
from .ids import is_session_id
from .paths import PathResolver
from .redact import redact

MANIFEST = "_migration.json"
_SEPARATOR = r"(?m)^---[ \t]*$"
_FIELD = r"(?m)^\*\*(Session|Time):\*\*[ \t]*(.+?)[ \t]*$"


class PlannedMove:
    """One legacy file: where it is, where it goes, and its size."""

    __slots__ = ("source", "destination", "size")

    def __init__(self, source: str, destination: str, size: int) -> None:
        self.source = source
        self.destination = destination
        self.size = size


def legacy_files(directory: str) -> list[str]:
    """Flat ``*.md`` files directly in ``directory`` (regular files, not symlinks), sorted."""
    try:
        scan = list(os.scandir(directory))
    except OSError:
        return []
    return sorted(e.path for e in scan if e.name.endswith(".md") and e.is_file(follow_symlinks=False))


def plan(resolver: PathResolver) -> list[PlannedMove]:
    """What a migration would move now (``blackboard migrate --dry-run``)."""
    moves = []
    for source, legacy_dir in resolver.legacy_locations():
        taken = set(os.listdir(legacy_dir)) if os.path.isdir(legacy_dir) else set()
        for path in legacy_files(source):
            name = _free_name(os.path.basename(path), taken)
            taken.add(name)
            moves.append(PlannedMove(path, os.path.join(legacy_dir, name), os.path.getsize(path)))
    return moves


def migrate_if_needed(resolver: PathResolver) -> list[PlannedMove]:
    """Migrate every source that has flat files; cheap (two ``scandir``) when none has."""
    moved: list[PlannedMove] = []
    for source, legacy_dir in resolver.legacy_locations():
        if legacy_files(source):
            moved += _migrate_source(resolver, source, legacy_dir)
    return moved


def _migrate_source(resolver: PathResolver, source: str, legacy_dir: str) -> list[PlannedMove]:
    refuse_links(resolver.root, legacy_dir)
    os.makedirs(legacy_dir, exist_ok=True)
    with file_lock(os.path.join(legacy_dir, MANIFEST)):
        files = legacy_files(source)  # re-check: another session may have migrated meanwhile
        if not files:
            return []
        taken = set(os.listdir(legacy_dir))
        records, moves = [], []
        for path in files:
            name = _free_name(os.path.basename(path), taken)
            taken.add(name)
            size, digest = _size_and_sha256(path)
            destination = os.path.join(legacy_dir, name)
            os.rename(path, destination)
            records.append({"file": os.path.basename(path), "stored_as": name, "size": size, "sha256": digest})
            moves.append(PlannedMove(path, destination, size))
        _record(legacy_dir, source, records)
    if source == resolver.project_dir:
        _seed_latest_handoff(resolver, moves)
    return moves


def _free_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    stem, n = name[: -len(".md")], 2
    while f"{stem}.{n}.md" in taken:
        n += 1
    return f"{stem}.{n}.md"


def _size_and_sha256(path: str) -> tuple[int, str]:
    import hashlib  # loads OpenSSL: only when something migrates, not on every SessionStart

    digest, size = hashlib.sha256(), 0
    with open_regular(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _record(legacy_dir: str, source: str, records: list[dict[str, object]]) -> None:
    path = os.path.join(legacy_dir, MANIFEST)
    try:
        manifest = json.loads(read_text(path) or '{"migrations": []}')
    except ValueError:
        manifest = {"migrations": [], "unreadable_previous_manifest": read_text(path)}
    manifest.setdefault("migrations", []).append({"at": now_iso(), "source": source, "files": records})
    atomic_write(path, json.dumps(manifest, indent=2) + "\n")


class LegacyNote:
    """One ``---``-separated entry of an old session-notes file: its ``**Session:**``, its time, its text."""

    __slots__ = ("session", "ended", "text")

    def __init__(self, session: str, ended: str | None, text: str) -> None:
        self.session = session
        self.ended = ended
        self.text = text


def newest_note(text: str) -> LegacyNote | None:
    """The newest entry of an old session-notes file.

    Newest by ``**Time:**`` when it parses as ISO-8601 (else it counts as oldest), then by position.
    """
    best: LegacyNote | None = None
    best_key = (float("-inf"), -1)
    for position, block in enumerate(re.split(_SEPARATOR, text)):
        body = block.strip()
        if not body:
            continue
        fields = {m.group(1).lower(): m.group(2) for m in re.finditer(_FIELD, body)}
        when = epoch_seconds(fields.get("time", ""))
        key = (when if when is not None else float("-inf"), position)
        if key >= best_key:
            ended = format_utc(when) if when is not None else None
            best, best_key = LegacyNote(fields.get("session", ""), ended, body), key
    return best


def _seed_latest_handoff(resolver: PathResolver, moves: list[PlannedMove]) -> None:
    notes = [m for m in moves if os.path.basename(m.source) == "session-notes.md"]
    if not notes or os.path.exists(resolver.latest_handoff_path()):
        return
    text, _ = read_tail(notes[0].destination, 256 * 1024)
    entry = newest_note(text)
    if entry is None:
        return
    legacy = {
        "session_id": entry.session if is_session_id(entry.session) else "legacy",
        "org": resolver.project.org,
        "project": resolver.project.name,
        "status": "legacy",
        "ended": entry.ended,
        "end_reason": "migrated",
    }
    fields = handoff.handoff_fields(legacy, open_tasks=0, done_tasks=0, notes=1)
    body = (
        "# Handoff migrated from the old flat blackboard\n\n"
        f"The newest entry of `_legacy/{os.path.basename(notes[0].destination)}`:\n\n"
        + redact(entry.text[: handoff.MAX_HANDOFF_BYTES // 2 + 512])[: handoff.MAX_HANDOFF_BYTES // 2]
        + "\n"
    )
    handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + "\n" + body)
