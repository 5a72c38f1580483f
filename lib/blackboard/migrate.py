"""Take old flat blackboard files into ``_legacy/``, exactly once, byte for byte.

Under the root they move: a project's ``.blackboard/*.md``, and the old global
``$ROOT/.blackboard/*.md`` into its own ``_legacy/`` so no project sees another's notes
(docs/adr/0004-legacy-migration.md). From a mnemonic store they are copied, and mnemonic
is left as it was (docs/adr/0017-importing-a-mnemonic-store.md). A project whose name
changed when hosts entered its identity takes its former board's handoff along
(docs/adr/0018-hosts-in-project-identity.md). A board a repository without a remote had
under a worktree's or a link's own name moves into the repository's board
(docs/adr/0031-one-project-every-way-in.md). A file git tracks came with a repository: it is
left where it is, never moved, copied or made a handoff (docs/adr/0024-what-the-repository-ships.md).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import time
from collections.abc import Mapping

from . import handoff, mnemonic
from .changes import TRACKED_SECONDS, git_tracks
from .clock import epoch_seconds, format_utc, now_iso
from .fsutil import (
    MAX_WHOLE_READ,
    atomic_write,
    make_dirs,
    open_regular,
    read_bounded,
    read_json_object,
    read_tail,
    read_text,
    refuse_links,
    resolves_inside,
)
from .gitinfo import common_git_dir, worktree_checkouts
from .ids import is_session_id
from .locks import file_lock
from .meta import read_meta_or_none
from .paths import PathResolver
from .project import Project, former_local_name, former_name, identify_project
from .redact import redact_prefix

MANIFEST = "_migration.json"
MERGED_PARTS = ("sessions", "handoff", "_active", "_unpublished", "_claims")  # one entry per session or task
BOARD_ASIDE = "board-"  # _legacy/board-{former id}/: what of a former board could not join this one
LEFT = "tracked by git: the repository's, not this user's"
_SEPARATOR = r"(?m)^---[ \t]*$"
_FIELD = r"(?m)^\*\*(Session|Time):\*\*[ \t]*(.+?)[ \t]*$"


class PlannedMove:
    """One legacy file: where it is, where it goes, its size, and whether it is copied (mnemonic's) or moved."""

    __slots__ = ("source", "destination", "size", "copy")

    def __init__(self, source: str, destination: str, size: int, copy: bool = False) -> None:
        self.source = source
        self.destination = destination
        self.size = size
        self.copy = copy


def legacy_files(directory: str) -> list[str]:
    """Flat ``*.md`` files directly in ``directory`` (regular files, not symlinks), sorted."""
    try:
        scan = list(os.scandir(directory))
    except OSError:
        return []
    return sorted(e.path for e in scan if e.name.endswith(".md") and e.is_file(follow_symlinks=False))


def plan(resolver: PathResolver, cwd: str, home: str, environ: Mapping[str, str]) -> list[PlannedMove]:
    """What a migration would move or copy now (``blackboard migrate --dry-run``)."""
    moves = _planned_board_moves(resolver, cwd)
    for source, legacy_dir in resolver.legacy_locations():
        taken = set(os.listdir(legacy_dir)) if os.path.isdir(legacy_dir) else set()
        for path in _users_files(_unsettled(legacy_dir, source, legacy_files(source)), environ) or []:
            name = _free_name(os.path.basename(path), taken)
            taken.add(name)
            moves.append(PlannedMove(path, os.path.join(legacy_dir, name), os.path.getsize(path)))
    for folder, legacy_dir in _mnemonic_imports(resolver, cwd, home):
        if not _imported(legacy_dir, folder):
            destination = resolver.legacy_copy_dir(legacy_dir, folder)
            for path in _users_files(legacy_files(folder), environ) or []:
                target = os.path.join(destination, os.path.basename(path))
                moves.append(PlannedMove(path, target, os.path.getsize(path), copy=True))
    return moves


def migrate_if_needed(resolver: PathResolver, cwd: str, home: str, environ: Mapping[str, str]) -> list[PlannedMove]:
    """Migrate every source that has flat files; cheap (a few ``scandir``) when none has.

    ``cwd`` and ``home`` say where to look for a mnemonic store: the session's folder and
    the user's home. ``environ`` is what git runs with, when a source is in a checkout.
    """
    carry_over_former_handoff(resolver)  # first: it only acts while the project has no board yet
    moved = move_former_boards(resolver, cwd)
    for source, legacy_dir in resolver.legacy_locations():
        if _unsettled(legacy_dir, source, legacy_files(source)):
            moved += _migrate_source(resolver, source, legacy_dir, environ)
    for folder, legacy_dir in _mnemonic_imports(resolver, cwd, home, only_with_files=True):
        if not _imported(legacy_dir, folder):
            moved += _import_copy(resolver, folder, legacy_dir, environ)
    return moved


def _users_files(files: list[str], environ: Mapping[str, str]) -> list[str] | None:
    """The ``files`` (of one folder) git does not track: the user's own; None while git cannot say which."""
    tracked = git_tracks(files, environ, time.monotonic() + TRACKED_SECONDS)
    return None if tracked is None else [path for path in files if path not in tracked]


def _unsettled(legacy_dir: str, source: str, files: list[str]) -> list[str]:
    """The ``files`` of ``source`` still to decide on: all but those a run left where they are and that are unchanged.

    So a checkout's tracked files cost a manifest read at SessionStart, not a git process.
    """
    if not files:
        return []
    left: dict[object, object] = {}  # file name: its size and time when it was left
    for run in _runs(legacy_dir):
        records = run.get("files")
        if run.get("source") == source and not run.get("copied") and isinstance(records, list):
            left.update((r.get("file"), r.get("stat")) for r in records if isinstance(r, dict) and "left" in r)
    return [path for path in files if left.get(os.path.basename(path)) != _stat(path)]


def _stat(path: str) -> list[int] | None:
    """A file's size and modification time: a file git checks out again, or anyone writes, has new ones."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns]


def _migrate_source(
    resolver: PathResolver, source: str, legacy_dir: str, environ: Mapping[str, str]
) -> list[PlannedMove]:
    refuse_links(resolver.root, legacy_dir)
    make_dirs(legacy_dir)
    with file_lock(os.path.join(legacy_dir, MANIFEST)):
        files = _unsettled(legacy_dir, source, legacy_files(source))  # re-check: another session may have been first
        if not files:
            return []
        users = _users_files(files, environ)
        if users is None:  # git could not say which are the repository's: the next SessionStart asks again
            return []
        taken = set(os.listdir(legacy_dir))
        records: list[dict[str, object]] = [
            {"file": os.path.basename(path), "left": LEFT, "stat": _stat(path)} for path in files if path not in users
        ]
        moves = []
        for path in users:
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


def _mnemonic_imports(
    resolver: PathResolver, cwd: str, home: str, only_with_files: bool = False
) -> list[tuple[str, str]]:
    """``(mnemonic folder, legacy dir it is copied under)``; a folder the root's own migration moves is left to it.

    ``only_with_files``: just the folders holding flat files (a ``scandir`` each, the usual
    SessionStart's whole cost here).
    """
    (own_project, project_legacy), (own_global, global_legacy) = resolver.legacy_locations()
    project = resolver.project
    own: set[str] = set()  # resolved once, and only when a folder is worth comparing
    found = []
    for source in mnemonic.sources(home, project.remote, project.toplevel, cwd):
        if only_with_files and not legacy_files(source.folder):
            continue
        own = own or {os.path.realpath(own_project), os.path.realpath(own_global)}
        if os.path.realpath(source.folder) not in own:
            found.append((source.folder, project_legacy if source.per_project else global_legacy))
    return found


def _runs(legacy_dir: str) -> list[dict[str, object]]:
    """The runs the manifest of ``legacy_dir`` records."""
    runs = read_json_object(os.path.join(legacy_dir, MANIFEST), MAX_WHOLE_READ).get("migrations")
    return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


def _imported(legacy_dir: str, folder: str) -> bool:
    """Whether the manifest records a finished import of ``folder``."""
    return any(r.get("copied") and r.get("source") == folder for r in _runs(legacy_dir))


def _import_copy(resolver: PathResolver, folder: str, legacy_dir: str, environ: Mapping[str, str]) -> list[PlannedMove]:
    """Copy mnemonic's flat files in ``folder`` into ``legacy_dir``, once, and record them.

    Each file lands under a name fixed by its folder, so an import a crash cut short is
    simply done again; mnemonic's files are only read. Files git tracks (a checkout's
    ``.claude/mnemonic/.blackboard``) are the repository's: recorded as left, not copied.
    """
    refuse_links(resolver.root, legacy_dir)
    make_dirs(legacy_dir)
    with file_lock(os.path.join(legacy_dir, MANIFEST)):
        if _imported(legacy_dir, folder):  # re-check: another session may have imported meanwhile
            return []
        files = legacy_files(folder)
        users = _users_files(files, environ)
        if users is None:  # git could not say which are the repository's: the next SessionStart asks again
            return []
        destination = resolver.legacy_copy_dir(legacy_dir, folder)
        make_dirs(destination)
        records: list[dict[str, object]] = [
            {"file": os.path.basename(p), "left": LEFT} for p in files if p not in users
        ]
        copies = []
        for path in users:
            name = os.path.basename(path)
            try:
                data = read_bounded(path, MAX_WHOLE_READ + 1) or b""
            except OSError as exc:
                records.append({"file": name, "skipped": exc.strerror or "unreadable"})
                continue
            if len(data) > MAX_WHOLE_READ:
                records.append({"file": name, "skipped": f"over {MAX_WHOLE_READ // (1024 * 1024)} MiB"})
                continue
            target = os.path.join(destination, name)
            atomic_write(target, data)
            relative = os.path.relpath(target, legacy_dir)
            records.append({"file": name, "stored_as": relative, "size": len(data), "sha256": _sha256(data)})
            copies.append(PlannedMove(path, target, len(data), copy=True))
        _record(legacy_dir, folder, records, copied=True)
    if legacy_dir == resolver.get_legacy_dir():
        _seed_latest_handoff(resolver, copies)
    return copies


def _sha256(data: bytes) -> str:
    import hashlib  # loads OpenSSL (5.8 ms): only when something migrates, not on every SessionStart (ADR 27)

    return hashlib.sha256(data).hexdigest()


def carry_over_former_handoff(resolver: PathResolver) -> bool:
    """Give a project's first board the handoff its former board left, when it came from this checkout.

    Hosts entered project identity (ADR 18): ``gitlab.com/acme/widget`` was ``acme/widget``
    and is now ``gitlab.com+acme/widget``. The former board stays where it is (another
    host's checkout may still use it); its latest handoff is copied only when the session
    that wrote it ran in this very checkout, so no other host's notes come along.
    """
    project = resolver.project
    if not project.remote or not project.toplevel or os.path.lexists(resolver.project_dir):
        return False
    former = former_name(project.remote)
    if former is None:
        return False
    old = PathResolver(resolver.root, Project(former[0], former[1], None, "former name"))
    found = handoff.read_handoff(old.latest_handoff_path())
    session_id = str(found[0].get("session_id") or "") if found else ""
    if not found or not is_session_id(session_id):
        return False
    meta = read_meta_or_none(old.meta_path(session_id))
    cwd = meta.get("cwd") if meta else None
    if not isinstance(cwd, str) or not resolves_inside(project.toplevel, cwd):
        return False
    fields, body = found
    fields["carried_over_from"] = f"{former[0]}/{former[1]}"
    handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + body)
    return True


def move_former_boards(resolver: PathResolver, cwd: str) -> list[PlannedMove]:
    """Move the boards this project had under former local ids into its board, each once.

    Before ADR 31 a repository without a remote was a project per worktree and per link
    (``local/widget-review-…``, ``local/current-…``), and a folder reached through a link was
    named after the link. The boards looked for: the one of this way in (the checkout as
    reached, or the folder outside git), and those of the repository's other worktrees. Each
    is moved here whole: each session, handoff, marker and claim into its place, what is
    already taken (and anything else) into ``_legacy/board-{former id}/``, so nothing is lost.
    Under the manifest's lock and checked again after taking it, as the flat files are:
    concurrent starts move it once. Costs a ``stat`` a way in when there is nothing to move.
    """
    moves = []
    for old in _former_boards(resolver, cwd):
        moves += _move_board(resolver, old)
    return moves


def _former_boards(resolver: PathResolver, cwd: str) -> list[PathResolver]:
    """The boards kept under a former id of this project that are there now."""
    project = resolver.project
    if project.org != "local" or project.remote:
        return []  # a project named after its remote kept its name
    here = project.toplevel or os.path.abspath(cwd)
    common = common_git_dir(project.toplevel) if project.toplevel else None
    found: list[PathResolver] = []
    for way_in in [here] + (worktree_checkouts(common) if common else []):
        old = PathResolver(resolver.root, Project("local", former_local_name(way_in), None, "former local id"))
        if old.project_dir in [resolver.project_dir, *(f.project_dir for f in found)]:
            continue
        if not os.path.isdir(old.project_dir):
            continue
        if way_in != here and identify_project(way_in) != project:
            continue  # a worktree the repository lists but that is no longer its own: its board is not ours
        found.append(old)
    return found


def _planned_board_moves(resolver: PathResolver, cwd: str) -> list[PlannedMove]:
    """What ``move_former_boards`` would move now, and where (``blackboard migrate --dry-run``)."""
    moves = []
    for old in _former_boards(resolver, cwd):
        aside = os.path.join(resolver.get_legacy_dir(), BOARD_ASIDE + old.project.name)
        for relative, joins in _board_entries(old):
            target = os.path.join(resolver.project_dir, relative)
            destination = target if joins and not os.path.lexists(target) else os.path.join(aside, relative)
            source = os.path.join(old.project_dir, relative)
            moves.append(PlannedMove(source, destination, _tree_size(source)))
    return moves


def _board_entries(old: PathResolver) -> list[tuple[str, bool]]:
    """``(path in the former board, whether it joins the same place here)``: each session, handoff, marker
    and claim does; anything else is kept aside whole."""
    entries = []
    for part in sorted(os.listdir(old.project_dir)):
        source = os.path.join(old.project_dir, part)
        if part in MERGED_PARTS and os.path.isdir(source) and not os.path.islink(source):
            entries += [(os.path.join(part, name), True) for name in sorted(os.listdir(source))]
        else:
            entries.append((part, False))
    return entries


def _move_board(resolver: PathResolver, old: PathResolver) -> list[PlannedMove]:
    refuse_links(resolver.root, old.project_dir)
    legacy_dir = resolver.get_legacy_dir()
    refuse_links(resolver.root, legacy_dir)
    make_dirs(legacy_dir)
    with file_lock(os.path.join(legacy_dir, MANIFEST)):
        if not os.path.isdir(old.project_dir):  # re-check: another session may have moved it meanwhile
            return []
        aside = os.path.join(legacy_dir, BOARD_ASIDE + old.project.name)
        records: list[dict[str, object]] = []
        moves = []
        try:
            for relative, joins in _board_entries(old):
                source = os.path.join(old.project_dir, relative)
                size = _tree_size(source)
                if joins:
                    record = _move_entry(resolver, relative, source, aside)
                else:
                    record = _set_aside(resolver, relative, source, os.path.join(aside, relative))
                records.append({**record, "size": size})
                destination = str(record.get("moved_to") or record.get("set_aside"))
                moves.append(PlannedMove(source, os.path.join(resolver.project_dir, destination), size))
        finally:
            if records:
                _record(legacy_dir, old.project_dir, records, board=True)
        for part in MERGED_PARTS:
            _remove_empty(os.path.join(old.project_dir, part))
        _remove_empty(old.project_dir)
        _remove_empty(os.path.dirname(old.project_dir))
    return moves


def _tree_size(path: str) -> int:
    """Bytes of a file, or of every file under a folder (links not followed); what vanishes meanwhile counts 0."""
    if not os.path.isdir(path) or os.path.islink(path):
        return _size(path)
    return sum(_size(os.path.join(top, name)) for top, _, names in os.walk(path) for name in names)


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _move_entry(resolver: PathResolver, relative: str, source: str, aside: str) -> dict[str, object]:
    """Move one session, handoff, marker or claim of a former board to its place here, or aside when taken."""
    target = os.path.join(resolver.project_dir, relative)
    if relative == os.path.join("handoff", "latest-handoff.md") and os.path.lexists(target):
        found = handoff.read_handoff(source)
        if found is not None:  # two latest handoffs: the newer stays the latest, the other joins its history
            handoff.publish_latest(resolver, handoff.dump_front_matter(found[0]) + found[1])
        return {**_set_aside(resolver, relative, source, os.path.join(aside, relative)), "published": found is not None}
    make_dirs(os.path.dirname(target))
    if _move_new(source, target):
        return {"file": relative, "moved_to": relative}
    return _set_aside(resolver, relative, source, os.path.join(aside, relative))


def _set_aside(resolver: PathResolver, relative: str, source: str, target: str) -> dict[str, object]:
    """Move ``source`` (``relative`` in its board) to ``target`` under ``_legacy/board-…``, or beside it."""
    make_dirs(os.path.dirname(target))
    candidate, n = target, 2
    while not _move_new(source, candidate):
        candidate, n = f"{target}.{n}", n + 1
    return {"file": relative, "set_aside": os.path.relpath(candidate, resolver.project_dir)}


def _move_new(source: str, target: str) -> bool:
    """Move ``source`` to ``target`` unless something is there already (then False); never replaces.

    A file is linked in, then unlinked: ``rename`` would replace a file another process just
    wrote. A folder's ``rename`` fails on a folder with content, and takes an empty one's place.
    """
    if os.path.lexists(target):
        return False
    if os.path.isdir(source) and not os.path.islink(source):
        try:
            os.rename(source, target)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                return False
            raise
        return True
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        os.rename(source, target)  # a file system without hard links: checked just above, under the lock
        return True
    os.unlink(source)
    return True


def _remove_empty(folder: str) -> None:
    with contextlib.suppress(OSError):  # not empty (or gone): kept
        os.rmdir(folder)


def _free_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    stem, n = name[: -len(".md")], 2
    while f"{stem}.{n}.md" in taken:
        n += 1
    return f"{stem}.{n}.md"


def _size_and_sha256(path: str) -> tuple[int, str]:
    import hashlib  # loads OpenSSL (5.8 ms): only when something migrates, not on every SessionStart (ADR 27)

    digest, size = hashlib.sha256(), 0
    with open_regular(path) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _record(
    legacy_dir: str, source: str, records: list[dict[str, object]], copied: bool = False, board: bool = False
) -> None:
    path = os.path.join(legacy_dir, MANIFEST)
    try:
        manifest = json.loads(read_text(path) or '{"migrations": []}')
    except ValueError:
        manifest = {"migrations": [], "unreadable_previous_manifest": read_text(path)}
    run: dict[str, object] = {"at": now_iso(), "source": source, "files": records}
    if copied:
        run["copied"] = True  # from mnemonic, whose files stay as they were
    if board:
        run["board"] = True  # a whole board kept under a former id, now this project's
    manifest.setdefault("migrations", []).append(run)
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
        + redact_prefix(entry.text, handoff.MAX_HANDOFF_BYTES // 2)[0]
        + "\n"
    )
    handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + "\n" + body)
