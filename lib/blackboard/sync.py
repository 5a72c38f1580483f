"""Boards and handoffs travel between machines through the project's own git remote (ADR 19).

The remote holds ``refs/blackboard/{org}/{project}``: commits whose tree is the local layout,

    sessions/{id}/_meta.json, active-tasks.md, session-notes.md, shared-context.md
    handoff/handoff-{id}.md
    removed/{id}          a session a cleanup removed: never imported again
    active/{host}.json    a machine's active sessions, a light record

Each machine pushes its own finished sessions, redacted, and imports everyone else's. A
merge is a union of disjoint folders; a rejected push fetches, merges and tries again.
What comes from the remote is untrusted: checked, bounded, never followed or executed.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping

from . import handoff, settings
from .clock import epoch_seconds, now_iso
from .errors import BlackboardError
from .fsutil import (
    atomic_write,
    create_exclusive,
    file_lock,
    json_object,
    make_dirs,
    read_bounded,
    read_json_object,
    refuse_links,
    try_lock,
)
from .gitstore import BLOB, Entry, GitFailed, Reader, Store, TooLarge
from .ids import is_session_id
from .meta import FINISHED, MAX_META_BYTES, Meta, read_meta_or_none, upgrade
from .paths import BOARD_FILES, META_FILE, PathResolver
from .project import safe_segment
from .redact import redact
from .registry import CLOCK_AHEAD_SECONDS, active_session_ids, session_folders, still_active
from .render import inline

FETCHED, BUILT = "refs/fetched", "refs/built"  # in the private repository
SESSION_FILES = (META_FILE, *BOARD_FILES.values())
MAX_FILE_BYTES = 8 * 1024 * 1024  # larger board files stay on their machine; status says so
MAX_OFFERS_PUBLISHED = 20  # handoffs imported in one round that are merged into the latest
MAX_ACTIVE_BYTES = 64 * 1024
HOST_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
MAX_ACTIVE_RECORDS = 50
MAX_REFUSALS = 50  # lines of one round's refusals, and of those ``sync status`` keeps
MAX_STATE_BYTES = 16 * 1024 * 1024
MAX_FETCH_BYTES = 64 * 1024 * 1024  # one fetch; board files are text, and over 8 MiB are never sent
MAX_REMOVED = 100_000  # about 4 MiB of state.json
PUSH_ATTEMPTS = 6
ROUND_SECONDS = 300.0
# A remote on this machine (a path, ``file://``) is served by a git started here, in that
# repository: it would run that repository's hooks and configured commands as this user.
# Its side runs with none: no hooks, and no command to list an alternate's refs.
LOCAL_SIDE = "git -c core.hooksPath=/dev/null -c core.alternateRefsCommand=true"
Progress = Callable[[str], None]


# ---- opting in -------------------------------------------------------------------------


def enabled(resolver: PathResolver) -> bool:
    """Whether this project syncs (``blackboard sync enable`` was run)."""
    return os.path.isfile(resolver.sync_file("config.json"))


def remote_url(resolver: PathResolver, remote: str | None) -> str:
    """The remote sync would use: ``remote`` or the project's ``origin``, a relative path made absolute."""
    url = remote or resolver.project.remote
    if not url:
        raise BlackboardError("this project has no origin remote; name one: blackboard sync enable --remote URL")
    if not _usable_remote(url):
        raise BlackboardError(f"not a git remote: {redact(url)!r}")
    if url.startswith((".", "~")) or ("://" not in url and ":" not in url.split("/")[0] and not url.startswith("/")):
        # a path relative to the checkout, as git reads it there; every process must find the same one
        url = os.path.normpath(os.path.join(resolver.project.toplevel or os.getcwd(), os.path.expanduser(url)))
    return url


def readers_warning(url: str) -> str:
    """What turning sync on means, said before it is turned on and in every status."""
    return f"anyone who can read {redact(url)} can read this project's synced boards (secrets redacted)"


def enable(resolver: PathResolver, remote: str | None, environ: Mapping[str, str]) -> str:
    """Turn sync on, to ``remote`` or the project's ``origin``; returns the remote."""
    url = remote_url(resolver, remote)
    refuse_links(resolver.root, resolver.sync_dir)
    make_dirs(resolver.sync_dir)
    Store(resolver.sync_repo, environ).ensure()
    atomic_write(resolver.sync_file("config.json"), json.dumps({"remote": url, "ref": remote_ref(resolver)}) + "\n")
    return url


def disable(resolver: PathResolver) -> bool:
    """Turn sync off; what was fetched stays. Returns whether it was on."""
    try:
        os.unlink(resolver.sync_file("config.json"))
    except FileNotFoundError:
        return False
    return True


def _usable_remote(url: str) -> bool:
    """Nothing git could take for an option (``--upload-pack=…``), and one line."""
    return bool(url) and not url.startswith("-") and not any(c in url for c in "\0\n\r")


def _served_by(program: str, url: str) -> list[str]:
    """The option that runs a local remote's ``program`` (upload-pack, receive-pack) as ``LOCAL_SIDE``."""
    if not url.startswith(("/", "file://")):
        return []  # the remote's own server runs its side, with its own rules
    return [f"--{program}={LOCAL_SIDE} {program}"]


def remote_ref(resolver: PathResolver) -> str:
    """``refs/blackboard/{org}/{project}``: the project's ref on the remote."""
    parts = [resolver.project.org, resolver.project.name]
    if any(p != safe_segment(p) or ".." in p or p.endswith(".lock") for p in parts):
        raise BlackboardError(f"{'/'.join(parts)} cannot be a git ref name; this project cannot sync")
    return f"refs/blackboard/{parts[0]}/{parts[1]}"


def _config(resolver: PathResolver) -> dict[str, str]:
    data = _read_json(resolver.sync_file("config.json"))
    remote = data.get("remote")
    if not isinstance(remote, str) or not _usable_remote(remote):
        raise BlackboardError(f"{resolver.sync_file('config.json')} names no remote; run `blackboard sync enable`")
    return {"remote": data["remote"], "ref": remote_ref(resolver)}


# ---- state on disk ---------------------------------------------------------------------


def _read_json(path: str) -> dict:
    """A state file of ours as a dict; ``{}`` when it is missing, damaged or over 16 MiB."""
    return read_json_object(path, 16 * 1024 * 1024)


class StatePaused(BlackboardError):
    """``state.json`` cannot be read whole: sync waits rather than send everything again and forget removals."""


class State:
    """What this machine knows of the remote: ``_sync/state.json``, at most ``MAX_STATE_BYTES``.

    It stays bounded: sessions gone from this machine are forgotten (the remote's own
    ``removed/`` markers keep a removal), and only the newest ``MAX_REMOVED`` removals are kept.
    """

    def __init__(self, data: dict) -> None:
        self.imported = data.get("imported_commit") if isinstance(data.get("imported_commit"), str) else None
        self.pushed: dict[str, str] = {k: v for k, v in _dict(data, "pushed").items() if isinstance(v, str)}
        self.foreign: set[str] = {i for i in _list(data, "foreign") if isinstance(i, str)}
        self.removed: dict[str, None] = dict.fromkeys(i for i in _list(data, "removed") if isinstance(i, str))
        self.conflicts: dict[str, str] = {k: v for k, v in _dict(data, "conflicts").items() if isinstance(v, str)}
        self.refused: list[str] = [r for r in _list(data, "refused") if isinstance(r, str)][-MAX_REFUSALS:]
        self.active: list[str] = [i for i in _list(data, "active_pushed") if isinstance(i, str)]

    @classmethod
    def load(cls, resolver: PathResolver) -> State:
        """The state on disk; a fresh one only when there is none (StatePaused when it cannot be read whole)."""
        path = resolver.sync_file("state.json")
        fix = f"sync is paused; move {path} aside to start afresh (every session is then sent again)"
        try:
            data = read_bounded(path, MAX_STATE_BYTES + 1)
        except OSError as exc:
            raise StatePaused(f"cannot read {path} ({exc.strerror}); {fix}") from None
        if data is None:
            return cls({})
        if len(data) > MAX_STATE_BYTES:
            raise StatePaused(f"{path} is over {MAX_STATE_BYTES // (1024 * 1024)} MiB; {fix}")
        loaded = json_object(data)
        if not loaded and data.strip() != b"{}":
            raise StatePaused(f"{path} is damaged; {fix}")
        return cls(loaded)

    def forget_missing(self, resolver: PathResolver) -> None:
        """Forget sessions that are gone from this machine; keep the newest ``MAX_REMOVED`` removals."""
        present = set(session_folders(resolver))
        for known in (self.pushed, self.conflicts):
            for session_id in [i for i in known if i not in present]:
                del known[session_id]
        self.foreign &= present
        for session_id in list(self.removed)[: max(len(self.removed) - MAX_REMOVED, 0)]:
            del self.removed[session_id]

    def save(self, resolver: PathResolver) -> None:
        data = {
            "imported_commit": self.imported,
            "pushed": self.pushed,
            "foreign": sorted(self.foreign),
            "removed": list(self.removed),  # oldest first
            "conflicts": self.conflicts,
            "refused": self.refused,
            "active_pushed": self.active,
        }
        atomic_write(resolver.sync_file("state.json"), json.dumps(data) + "\n")  # no indent: the C encoder

    def refuse(self, line: str) -> None:
        """Remember a refusal for ``sync status``: the last ``MAX_REFUSALS`` kept, so each call is short."""
        if line not in self.refused:
            self.refused.append(line)
            del self.refused[:-MAX_REFUSALS]


def _dict(data: dict, key: str) -> dict:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _list(data: dict, key: str) -> list:
    value = data.get(key)
    return value if isinstance(value, list) else []


def _note_status(resolver: PathResolver, step: str, ok: bool, detail: str) -> None:
    """Record the outcome of a fetch or push in ``_sync/status.json``; never raises."""
    try:
        status = _read_json(resolver.sync_file("status.json"))
        status[step] = {"at": now_iso(), "ok": ok, "detail": redact(detail)}
        atomic_write(resolver.sync_file("status.json"), json.dumps(status, indent=1) + "\n")
    except Exception:  # noqa: BLE001 - a status line must never cost a session anything
        pass


# ---- fetching and importing ------------------------------------------------------------


class Fetch:
    """The remote's commit for this project: asked for with ``git ls-remote`` (a probe) or fetched at once.

    Git starts at once and works while the caller does its own work. ``git ls-remote``
    costs a fraction of a ``git fetch``, which negotiates and checks connectivity even when
    nothing changed: most SessionStarts find the commit they know, and fetch nothing.
    """

    def __init__(self, resolver: PathResolver, environ: Mapping[str, str], probe: bool = True) -> None:
        refuse_links(resolver.root, resolver.sync_dir)
        self.resolver = resolver
        self.config = _config(resolver)
        self.store = Store(resolver.sync_repo, environ)
        self.store.ensure()
        self.probe = probe
        probing = [
            "ls-remote",
            *_served_by("upload-pack", self.config["remote"]),
            self.config["remote"],
            self.config["ref"],
        ]
        self.proc = self.store.spawn(probing if probe else self._args())
        self.record_up_to_date = True  # SessionStart leaves that to the round it starts: one write less

    def finish(self, deadline: float, known: str | None) -> str | None:
        """The remote's commit, fetched unless it is ``known``; None when the remote has none yet."""
        try:
            listed = self._listed(deadline)
            if not listed:
                _note_status(self.resolver, "fetch", True, "the remote has no boards of this project yet")
                return None
            if self.probe and listed != known:  # probed, and new: fetch it now
                self.store.finish(self.store.spawn(self._args()), None, deadline, self._too_much)
                listed = self._fetched()
        except GitFailed as exc:
            self.store.remove_partial_packs()
            _note_status(self.resolver, "fetch", False, str(exc))
            raise
        if listed != known or self.record_up_to_date:
            _note_status(self.resolver, "fetch", True, "up to date" if listed == known else "fetched")
        return listed

    def _args(self) -> list[str]:
        remote = self.config["remote"]
        return [
            *("-c", "fetch.unpackLimit=1"),  # always one pack, written where _too_much can see it grow
            "fetch",
            "--no-write-fetch-head",  # it would name the remote in a file git makes under the umask
            "--no-tags",
            "--quiet",
            *_served_by("upload-pack", remote),
            remote,
            f"+{self.config['ref']}:{FETCHED}",
        ]

    def _listed(self, deadline: float) -> str:
        """The remote's commit as ``ls-remote`` saw it; without a probe, as the fetch brought it."""
        try:
            out = self.store.finish(self.proc, None, deadline, None if self.probe else self._too_much)
        except GitFailed as exc:
            if not self.probe and "couldn't find remote ref" in str(exc):
                return ""
            raise
        return out.split(b"\t", 1)[0].decode("ascii", "replace") if self.probe else self._fetched()

    def _too_much(self) -> str | None:
        """Why the fetch under way must stop: it has brought more than ``MAX_FETCH_BYTES``."""
        if self.store.partial_pack_bytes() <= MAX_FETCH_BYTES:
            return None
        return f"the remote sent over {MAX_FETCH_BYTES // (1024 * 1024)} MiB of boards; refused, nothing kept"

    def _fetched(self) -> str:
        """The commit the fetch brought. A remote's ref may name anything: a tree or a blob is refused."""
        commit = self.store.resolve(FETCHED)
        if commit is None:
            raise GitFailed(f"the remote's {self.config['ref']} names no commit; refused")
        return commit

    def stop(self) -> None:
        self.store.stop(self.proc)


class Imported:
    """What an import brought: sessions, conflicts, refusals, and whether it finished."""

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.conflicts: list[str] = []
        self.refused: list[str] = []
        self.complete = True


def import_commit(
    resolver: PathResolver, store: Store, state: State, commit: str | None, host: str, deadline: float
) -> Imported:
    """Take what ``commit`` holds that this machine lacks, checking every file; stops at ``deadline``.

    What moved in is recorded in ``state`` at once, so an import that stops half-way (a
    deadline, a disk error) never mistakes its own arrivals for this machine's sessions.
    """
    result = Imported()
    if commit is None or commit == state.imported:
        return result
    _remove_tree(os.path.join(resolver.sync_dir, "incoming"))  # what an import killed half-way left
    offers: list[tuple[tuple[int, float, str], str]] = []
    with store.reader(deadline) as reader:  # one git for every blob, started while the trees are compared
        entries, unremoved = _entries_to_read(store, reader, state.imported, commit, deadline)
        layout = _Layout(entries)
        if layout.oversized:
            over = f"over {MAX_FILE_BYTES // (1024 * 1024)} MiB"
            raise TooLarge(f"the remote holds files {over} ({layout.oversized[0]}…); refused, nothing kept")
        result.refused += layout.problems
        result.refused += _take_removals(resolver, state, layout.removed, host)
        for session_id in unremoved:  # a machine went on in a removed session and sent it again
            state.removed.pop(session_id, None)
        ids = [i for i in sorted(layout.sessions) if i not in layout.removed and i not in layout.spoiled]
        ids = [i for i in ids if not _removed(resolver, state, i)]
        ours = [i for i in ids if _written_here(resolver, state, i, host)]
        try:
            _import_active(resolver, reader, layout, host)
            clashes, continued = _clashes(resolver, state, reader, layout, ours, host)
            result.conflicts += clashes
            mine = set(ours) - set(continued)
            theirs = [i for i in ids if i not in mine]
            for session_id in theirs:  # one session's files in memory at a time
                if time.monotonic() > deadline:
                    result.complete = False  # the next round takes up from the same commit
                    break
                shas = [e.sha for e in layout.files_of(session_id)]
                contents = dict(zip(shas, reader.read_many(shas, MAX_FILE_BYTES)))
                problem, offer = _import_session(resolver, state, layout, contents, session_id)
                if problem is not None:
                    kind = result.conflicts if problem.startswith("conflict") else result.refused
                    kind.append(f"{session_id}: {problem}")
                    continue
                result.sessions.append(session_id)
                if offer is not None:
                    offers.append(offer)
        finally:
            # the newest few, oldest first: the newest is the latest, and each brings its open work
            # and closings into it (docs/adr/0022-open-work-ledger.md); the rest are archived
            for _, text in sorted(offers)[-MAX_OFFERS_PUBLISHED:]:
                handoff.publish_latest(resolver, text)
            for line in result.refused:
                state.refuse(line)
            for line in result.conflicts:
                session_id, _, detail = line.partition(": ")
                state.conflicts[session_id] = detail
    if result.complete:
        state.imported = commit
    return result


def _take_removals(resolver: PathResolver, state: State, removed: set[str], host: str) -> list[str]:
    """Remember the remote's removals of sessions the remote had from here or another machine; refuse the rest.

    A removal of a session this machine wrote but never sent is no cleanup's: the remote never
    held it. Taking it would keep that session from ever being sent. Removals of sessions this
    machine never had are not remembered (the tree's own ``removed/`` keeps them from import).
    """
    refused = []
    for session_id in sorted(removed):
        written_here = _written_here(resolver, state, session_id, host)  # False, too, for one imported earlier
        if session_id in state.foreign or session_id in state.pushed:
            state.removed[session_id] = None
        elif written_here:
            refused.append(f"removed/{session_id}: this machine's session was never sent; the removal is ignored")
    return refused


def _written_here(resolver: PathResolver, state: State, session_id: str, host: str) -> bool:
    """Whether the local session of that id is this machine's own (by the host its metadata names)."""
    if session_id in state.foreign or not os.path.lexists(resolver.get_session_blackboard_dir(session_id)):
        return False
    local = read_meta_or_none(resolver.meta_path(session_id)) or {}
    if local.get("host") not in (None, host):
        state.foreign.add(session_id)  # brought in by an import that stopped before it was recorded
        return False
    return True


def _clashes(
    resolver: PathResolver, state: State, reader: Reader, layout: _Layout, ours: list[str], host: str
) -> tuple[list[str], list[str]]:
    """Sessions the remote holds under ids this machine also wrote: ``(conflicts, continued)``.

    Fine when the remote's copy is ours, pushed earlier. One another machine sent is a
    continuation when this machine's copy is finished and unchanged since it was pushed (that
    machine resumed it): it is imported. Otherwise both went on in it: a conflict, ours kept.
    """
    clashes, continued = [], []
    for session_id in ours:
        entry = layout.sessions[session_id].get(META_FILE)
        theirs = json_object(reader.read(entry.sha, 64 * 1024) if entry is not None else None)
        other = theirs.get("host")
        if other == host:
            continue
        if _unchanged_since_sync(resolver, state, session_id):
            continued.append(session_id)
        else:
            clashes.append(f"{session_id}: conflict: also written by {inline(other, 64)}; kept this machine's")
    return clashes, continued


def _unchanged_since_sync(resolver: PathResolver, state: State, session_id: str) -> bool:
    """Whether the local session is finished, not active here, and as it was when last pushed or imported."""
    if os.path.lexists(resolver.active_marker(session_id)):
        return False
    local = read_meta_or_none(resolver.meta_path(session_id)) or {}
    return local.get("status") in FINISHED and state.pushed.get(session_id) == _signature(resolver, session_id)


def _entries_to_read(
    store: Store, reader: Reader, old: str | None, new: str, deadline: float
) -> tuple[list[Entry], set[str]]:
    """The files of ``new`` worth a look, with their sizes: all of them the first time, else what changed since
    ``old``; and the sessions whose removal marker went since ``old`` (sent again by a machine that resumed them).

    A new session folder comes whole in the diff. One that changed is listed whole, since
    an import replaces a folder whole; so is the folder of a handoff that changed alone (a
    round that ran between a session's end and its final handoff). A diff names no sizes:
    they are asked for before any content, so an oversized file is refused unread.
    """
    changes = None
    if old:
        try:
            changes = store.diff(old, new, deadline)
        except GitFailed as exc:
            if isinstance(exc, TooLarge) or "ran out of time" in str(exc):
                raise
            changes = None  # the old commit is gone (the remote was rewritten): read the whole tree
    if changes is None:
        entries = store.tree(new, deadline=deadline)
        held = {e.path.split("/")[1] for e in entries if e.path.startswith("sessions/")}
        return entries, held - {e.path.split("/")[1] for e in entries if e.path.startswith("removed/")}
    whole = {e.path for status, e in changes if status == "A" and e.kind == "tree"}
    entries = []
    relist: set[str] = set()
    unremoved = set()
    for status, entry in changes:
        if status == "D" and entry.path.startswith("removed/"):
            unremoved.add(entry.path[len("removed/") :])
        if status == "D" or entry.kind == "tree":
            continue
        parts = entry.path.split("/")
        folder = "/".join(parts[:2])
        if parts[0] == "sessions" and len(parts) > 2 and folder not in whole:
            relist.add(folder)
            continue
        entries.append(entry)
        handed_off = _handoff_id(parts[1]) if parts[0] == "handoff" and len(parts) == 2 else None
        if handed_off is not None and f"sessions/{handed_off}" not in whole:
            relist.add(f"sessions/{handed_off}")
    if len(relist) >= 1000:  # one listing of the whole tree is cheaper than a long argument list
        return store.tree(new, deadline=deadline), unremoved
    blobs = [e for e in entries if e.kind == BLOB]
    for entry, size in zip(blobs, reader.sizes([e.sha for e in blobs])):
        entry.size = size
    return entries + (store.tree(new, sorted(relist), deadline) if relist else []), unremoved


class _Layout:
    """A remote tree sorted into sessions, handoffs, removals and active records; anything else is refused."""

    def __init__(self, entries: list[Entry]) -> None:
        self.sessions: dict[str, dict[str, Entry]] = {}
        self.handoffs: dict[str, Entry] = {}
        self.removed: set[str] = set()
        self.active: dict[str, Entry] = {}
        self.problems: list[str] = []
        self.spoiled: set[str] = set()  # sessions with a refused file: refused whole
        self.oversized: list[str] = []  # files over MAX_FILE_BYTES: the whole commit is refused and forgotten
        refused = 0
        for entry in entries:
            problem = self._place(entry)
            if problem:
                refused += 1
                if refused <= MAX_REFUSALS:
                    self.problems.append(f"{inline(entry.path, 200)}: {problem}")
                parts = entry.path.split("/")
                if parts[0] in ("sessions", "handoff") and len(parts) > 1:
                    self.spoiled.add(parts[1] if parts[0] == "sessions" else _handoff_id(parts[1]) or parts[1])
        if refused > MAX_REFUSALS:
            self.problems.append(f"and {refused - MAX_REFUSALS} more entries refused")

    def files_of(self, session_id: str) -> list[Entry]:
        """A session's entries: its folder's files, then its handoff when it has one."""
        files = list(self.sessions[session_id].values())
        return files + [self.handoffs[session_id]] if session_id in self.handoffs else files

    def _place(self, entry: Entry) -> str | None:
        path, kind, mode, size = entry.path, entry.kind, entry.mode, entry.size
        parts = path.split("/")
        if kind != BLOB or mode not in ("100644", "100755"):
            return "not a regular file (a link or a submodule); refused"
        if parts[0] == "removed" and len(parts) == 2 and is_session_id(parts[1]):
            self.removed.add(parts[1])
            return None
        if size > MAX_FILE_BYTES:
            self.oversized.append(inline(path, 200))
            return f"over {MAX_FILE_BYTES // (1024 * 1024)} MiB; refused"
        if parts[0] == "sessions" and len(parts) == 3 and is_session_id(parts[1]) and parts[2] in SESSION_FILES:
            self.sessions.setdefault(parts[1], {})[parts[2]] = entry
            return None
        if parts[0] == "handoff" and len(parts) == 2:
            session_id = _handoff_id(parts[1])
            if session_id is not None:
                self.handoffs[session_id] = entry
                return None
        if parts[0] == "active" and len(parts) == 2 and parts[1].endswith(".json") and size <= MAX_ACTIVE_BYTES:
            self.active[parts[1][: -len(".json")]] = entry
            return None
        return "not part of the board layout; refused"


def _handoff_id(name: str) -> str | None:
    """The session of ``handoff-{id}.md``, or None for any other name."""
    if not (name.startswith("handoff-") and name.endswith(".md")):
        return None
    session_id = name[len("handoff-") : -len(".md")]
    return session_id if is_session_id(session_id) else None


def _removed(resolver: PathResolver, state: State, session_id: str) -> bool:
    """Whether a cleanup removed the session, here or on another machine: then it is never imported again."""
    return session_id in state.removed or os.path.lexists(resolver.sync_removed_marker(session_id))


def _import_session(
    resolver: PathResolver,
    state: State,
    layout: _Layout,
    contents: dict[str, bytes | None],
    session_id: str,
) -> tuple[str | None, tuple[tuple[int, float, str], str] | None]:
    """Check one remote session (not one of this machine's) and move it in whole.

    Returns a problem to report (or None), and ``(its order, handoff)`` when it brought a new
    handoff (``handoff.order``: the newest becomes the latest).
    """
    files = {name: contents.get(entry.sha) for name, entry in layout.sessions[session_id].items()}
    if any(data is None for data in files.values()):
        return "a file is missing or too large; refused", None
    meta, problem = _check_meta(resolver, session_id, files.get(META_FILE))
    if problem:
        return problem, None
    handoff_text, place = None, None
    if session_id in layout.handoffs:
        handoff_text, place, problem = _check_handoff(session_id, meta, contents.get(layout.handoffs[session_id].sha))
        if problem:
            return problem, None
    same = False
    if os.path.lexists(resolver.get_session_blackboard_dir(session_id)):  # imported before: an update from its machine
        existing = read_meta_or_none(resolver.meta_path(session_id)) or {}
        if existing.get("status") not in FINISHED or os.path.lexists(resolver.active_marker(session_id)):
            return "conflict: resumed on this machine, which is working in it; kept this machine's", None
        if existing.get("host") != meta.get("host") and not _unchanged_since_sync(resolver, state, session_id):
            return f"conflict: also sent by {inline(existing.get('host'), 64)}; kept the first one", None
        same = _same(resolver, session_id, files)
    state.foreign.add(session_id)  # before the move: an import cut short must not take it for this machine's
    if not same:
        _move_in(resolver, session_id, files)
    state.pushed[session_id] = _signature(resolver, session_id)  # as the remote has it: sent again once changed
    state.conflicts.pop(session_id, None)
    if handoff_text is None or read_bounded(resolver.handoff_path(session_id), handoff.MAX_HANDOFF_READ) == (
        handoff_text.encode()
    ):
        return None, None  # nothing new to offer
    handoff.write_session_handoff(resolver, session_id, handoff_text)
    return None, (place, handoff_text) if place is not None else None


def _same(resolver: PathResolver, session_id: str, files: dict[str, bytes | None]) -> bool:
    directory = resolver.get_session_blackboard_dir(session_id)
    return all(read_bounded(os.path.join(directory, name), MAX_FILE_BYTES + 1) == data for name, data in files.items())


def _check_meta(resolver: PathResolver, session_id: str, data: bytes | None) -> tuple[Meta, str | None]:
    empty: Meta = {}
    if data is None:
        return empty, "no _meta.json; refused"
    if len(data) > MAX_META_BYTES:
        return empty, "its _meta.json is too large; refused"
    try:
        loaded = json.loads(data.decode("utf-8"))
        meta = upgrade(loaded if isinstance(loaded, dict) else {}, f"{session_id}/_meta.json")
    except (ValueError, RecursionError, BlackboardError) as exc:
        return empty, f"unreadable _meta.json ({inline(exc, 80)}); refused"
    if meta.get("session_id") != session_id:
        return empty, "its _meta.json names another session; refused"
    if (meta.get("org"), meta.get("project")) != (resolver.project.org, resolver.project.name):
        return empty, "its _meta.json names another project; refused"
    if meta.get("status") not in FINISHED:
        return empty, "not a finished session; refused"
    if not isinstance(meta.get("host"), str) or not re.fullmatch(HOST_NAME, meta["host"]):
        return empty, "its _meta.json names no host, or not as a host name; refused"
    if any(isinstance(v, str) and not v.isprintable() for v in meta.values()):
        return empty, "its _meta.json holds control characters; refused"  # `sessions` and `show` print them
    stamps = [meta.get("started"), meta.get("ended"), meta.get("last_activity")]
    times = [epoch_seconds(str(stamp)) for stamp in stamps if stamp]
    if any(t is None for t in times):
        return empty, "its _meta.json has a time that is not one; refused"
    if any(t is not None and t > time.time() + CLOCK_AHEAD_SECONDS for t in times):
        return empty, "its _meta.json has a time in the future; refused"
    return meta, None


def _check_handoff(
    session_id: str, meta: Meta, data: bytes | None
) -> tuple[str | None, tuple[int, float, str] | None, str | None]:
    """``(text, its order, None)`` of a remote handoff that agrees with its checked ``meta``, or
    ``(None, None, problem)``; a handoff with no end to be ordered by has no order."""
    if data is None or len(data) > handoff.MAX_HANDOFF_READ:
        return None, None, "its handoff is missing or too large; refused"
    text = data.decode("utf-8", "replace")
    try:
        fields, _ = handoff.split_front_matter(text, yaml_allowed=False)
    except ValueError:
        return None, None, "its handoff's front matter is not the plugin's own; refused"
    if fields.get("session_id") != session_id:
        return None, None, "its handoff names another session; refused"
    if any(key in fields and fields[key] != meta.get(key) for key in ("org", "project", "host")):
        return None, None, "its handoff names another project or host than its _meta.json; refused"
    end = handoff.effective_end(fields)
    if end is not None and end > time.time() + CLOCK_AHEAD_SECONDS:
        return None, None, "its handoff ends in the future; refused"
    return text, handoff.order(fields) if end is not None else None, None


def _move_in(resolver: PathResolver, session_id: str, files: dict[str, bytes | None]) -> None:
    """Assemble the session under ``_sync/incoming`` and rename it into ``sessions/`` in one step."""
    incoming = resolver.sync_incoming(session_id, os.getpid())
    target = resolver.get_session_blackboard_dir(session_id)
    refuse_links(resolver.root, incoming)
    refuse_links(resolver.root, target)
    if os.path.lexists(incoming):  # left by a process of the same pid that died half-way
        _remove_tree(incoming)
    make_dirs(incoming)
    for name, data in files.items():
        atomic_write(os.path.join(incoming, name), data or b"")
    make_dirs(resolver.sessions_dir)
    if os.path.isdir(target):  # a newer copy of a session imported before: set the old one aside first
        old = incoming + ".replaced"  # under _sync, not sessions/: a kill here leaves no twin there
        os.rename(target, old)
        os.rename(incoming, target)
        _remove_tree(old)
    else:
        os.rename(incoming, target)


def _remove_tree(path: str) -> None:
    import shutil  # only then: most imports bring new sessions

    shutil.rmtree(path, ignore_errors=True)


def _import_active(resolver: PathResolver, reader: Reader, layout: _Layout, host: str) -> None:
    """Other machines' active sessions, checked and bounded, into ``_sync/remote-active.json``.

    Each machine's file replaces what was known of that machine. A record names the host
    of the file it came from, is dropped once it is a day old, and the most recently
    updated machines are kept: fake files cannot crowd out real ones for good.
    """
    theirs = {name: entry for name, entry in layout.active.items() if name != safe_segment(host)}
    if not theirs:
        return
    known = _read_json(resolver.sync_file("remote-active.json")).get("machines")
    machines = {k: v for k, v in known.items() if isinstance(v, list)} if isinstance(known, dict) else {}
    for name, entry in theirs.items():
        machines[name] = _active_records(name, reader.read(entry.sha, MAX_ACTIVE_BYTES))
    fresh = {k: v for k, v in machines.items() if v and still_active(_updated(v))}
    newest = sorted(fresh, key=lambda k: _updated(fresh[k]), reverse=True)[:MAX_ACTIVE_RECORDS]
    text = json.dumps({"machines": {k: fresh[k] for k in newest}}, indent=1) + "\n"
    atomic_write(resolver.sync_file("remote-active.json"), text)


def _updated(records: list) -> float:
    stamps = [r.get("updated") for r in records if isinstance(r, dict)]
    return max((t for t in stamps if isinstance(t, (int, float))), default=0.0)


def _active_records(name: str, data: bytes | None) -> list[dict[str, object]]:
    """The records of one ``active/{name}.json``; none when its host is not the one its name says."""
    loaded = json_object(data)
    host = loaded.get("host")
    if not isinstance(host, str) or not re.fullmatch(HOST_NAME, host) or safe_segment(host) != name:
        return []
    updated = epoch_seconds(str(loaded.get("updated") or ""))
    if updated is None or updated > time.time() + CLOCK_AHEAD_SECONDS:  # a future stamp would never expire
        return []
    items = loaded.get("sessions")
    records: list[dict[str, object]] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and is_session_id(item.get("session_id")):
            started = item.get("started")
            since = started if isinstance(started, str) and epoch_seconds(started) is not None else "?"
            records.append({"host": host, "session_id": str(item["session_id"]), "since": since, "updated": updated})
    return records[:MAX_ACTIVE_RECORDS]


# ---- what this machine sends -----------------------------------------------------------


def _signature(resolver: PathResolver, session_id: str) -> str:
    """The sizes and times of a session's files and its handoff: it changes whenever one of them does.

    The handoff counts: a round that ran between the end's metadata and its handoff must
    not keep the next round from sending the handoff.
    """
    directory = resolver.get_session_blackboard_dir(session_id)
    paths = [os.path.join(directory, name) for name in SESSION_FILES] + [resolver.handoff_path(session_id)]
    parts = []
    for path in paths:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        parts.append(f"{os.path.basename(path)}:{info.st_size}:{info.st_mtime_ns}")
    return ";".join(parts)


class Outgoing:
    """The changes one push carries, and what to remember once it lands."""

    def __init__(self) -> None:
        self.sessions: dict[str, list[tuple[str, bytes | None]]] = {}  # each session's files
        self.others: list[tuple[str, bytes | None]] = []  # removals and this machine's active record
        self.signatures: dict[str, str] = {}
        self.removals: list[str] = []
        self.active: list[str] | None = None
        self.skipped: list[str] = []

    @property
    def changes(self) -> list[tuple[str, bytes | None]]:
        return [change for files in self.sessions.values() for change in files] + self.others

    def drop_settled(self, state: State, imported: list[str]) -> None:
        """Leave out sessions an import has just brought in (another machine went on in them) or found in conflict."""
        settled = state.conflicts.keys() | set(imported)
        for session_id in [i for i in self.sessions if i in settled]:
            del self.sessions[session_id]
            del self.signatures[session_id]


def outgoing(resolver: PathResolver, state: State, host: str) -> Outgoing:
    """This machine's finished sessions not yet pushed, its removals, and its active sessions if they changed."""
    out = Outgoing()
    for name in session_folders(resolver, excluding=state.conflicts):
        if not is_session_id(name):
            continue  # a board a cleanup set aside
        signature = _signature(resolver, name)
        if state.pushed.get(name) == signature:
            continue  # as the remote has it: most folders of a synced project
        meta = read_meta_or_none(resolver.meta_path(name))
        if meta is not None and meta.get("host", host) != host:
            state.pushed[name] = signature  # another machine's, as imported by an older version: read once
            continue
        if meta is None or meta.get("status") not in FINISHED:
            continue  # another machine's session resumed here is this machine's now (session.start)
        _add_session(resolver, meta, host, out)
        out.signatures[name] = signature
    for session_id in _removal_markers(resolver):
        out.removals.append(session_id)
        out.others += [
            (f"removed/{session_id}", b""),
            (f"sessions/{session_id}", None),
            (f"handoff/handoff-{session_id}.md", None),
        ]
    active = sorted(active_session_ids(resolver))
    if active != state.active:
        out.active = active
        out.others.append((f"active/{safe_segment(host)}.json", _active_file(resolver, active, host)))
    return out


def _add_session(resolver: PathResolver, meta: Meta, host: str, out: Outgoing) -> None:
    session_id = meta["session_id"]
    files = out.sessions[session_id] = []
    sent: Meta = {k: (redact(v) if isinstance(v, str) else v) for k, v in meta.items()}  # type: ignore[assignment]
    sent.pop("transcript_path", None)  # a path on this machine, of no use elsewhere
    sent["host"] = host
    files.append((f"sessions/{session_id}/{META_FILE}", (json.dumps(sent, indent=2) + "\n").encode()))
    for kind in BOARD_FILES:
        path = resolver.board_file(session_id, kind)
        data = read_bounded(path, MAX_FILE_BYTES + 1)
        if data is None:
            continue
        if len(data) > MAX_FILE_BYTES:
            out.skipped.append(
                f"{session_id}/{BOARD_FILES[kind]}: over {MAX_FILE_BYTES // (1024 * 1024)} MiB, kept here"
            )
            continue
        text = redact(data.decode("utf-8", "surrogateescape"))
        files.append((f"sessions/{session_id}/{BOARD_FILES[kind]}", text.encode("utf-8", "surrogateescape")))
    written = read_bounded(resolver.handoff_path(session_id), handoff.MAX_HANDOFF_READ)
    if written is not None:  # redacted again: an older plugin or a person may have written it
        text = redact(written.decode("utf-8", "surrogateescape"))
        files.append((f"handoff/handoff-{session_id}.md", text.encode("utf-8", "surrogateescape")))
    # A removal the remote holds for a session this machine sends was never a cleanup's (those
    # it takes, and sends no more): the session goes out, and the marker that would hide it goes.
    files.append((f"removed/{session_id}", None))


def _removal_markers(resolver: PathResolver) -> list[str]:
    try:
        return sorted(n for n in os.listdir(resolver.sync_removed_dir) if is_session_id(n))
    except FileNotFoundError:
        return []


def _active_file(resolver: PathResolver, active: list[str], host: str) -> bytes:
    sessions = []
    for session_id in active[:MAX_ACTIVE_RECORDS]:
        meta = read_meta_or_none(resolver.meta_path(session_id)) or {}
        sessions.append({"session_id": session_id, "started": meta.get("started")})
    return (json.dumps({"host": host, "updated": now_iso(), "sessions": sessions}, indent=1) + "\n").encode()


# ---- a round ---------------------------------------------------------------------------


class Round:
    """What one round did, for ``blackboard sync`` and the status."""

    def __init__(self) -> None:
        self.imported: list[str] = []
        self.pushed = 0
        self.removed = 0
        self.conflicts: list[str] = []
        self.refused: list[str] = []
        self.skipped: list[str] = []


def background_round(resolver: PathResolver, environ: Mapping[str, str]) -> Round | None:
    """A round a hook started, or None when another already waits for the running one.

    At most one round runs and one waits: the waiting one reads this machine's changes
    only once it runs, so it takes along whatever a round that found it waiting would have.
    Behind a hung remote, ten sessions' ends leave two processes, not twenty.
    """
    refuse_links(resolver.root, resolver.sync_dir)
    release_waiting = try_lock(resolver.sync_file("waiting"))
    if release_waiting is None:
        return None
    return sync_round(resolver, environ, started=release_waiting)


def round_waiting(resolver: PathResolver) -> bool:
    """Whether a round already waits for the running one (then starting another is of no use)."""
    release = try_lock(resolver.sync_file("waiting"))
    if release is None:
        return True
    release()
    return False


def sync_round(
    resolver: PathResolver,
    environ: Mapping[str, str],
    progress: Progress | None = None,
    seconds: float = ROUND_SECONDS,
    started: Callable[[], object] = lambda: None,
) -> Round:
    """Fetch, import, and push this machine's changes until the push lands (one round at a time per project).

    ``started`` is called once the round may start: when no other round runs.
    """
    say = progress or (lambda _: None)
    host = settings.host(environ)
    result = Round()
    refuse_links(resolver.root, resolver.sync_dir)
    with file_lock(resolver.sync_file("round"), timeout=seconds):
        started()
        handoff.publish_newest(resolver)  # a round cut short may have left the newest unpublished
        deadline = time.monotonic() + seconds  # from when the round may start, not from when it queued
        state = State.load(resolver)
        state.forget_missing(resolver)
        for _ in range(PUSH_ATTEMPTS):
            say("fetching")
            fetch = Fetch(resolver, environ, probe=False)  # a round fetches anyway: no ls-remote first
            try:
                out = outgoing(resolver, state, host)  # this machine's side needs no remote: while git fetches
                commit = fetch.finish(deadline, state.imported)
            finally:
                fetch.stop()
            try:
                with fetch.store.tidying(deadline) as tidying:  # git packs what earlier rounds left meanwhile
                    imported = import_commit(resolver, fetch.store, state, commit, host, deadline)
            except TooLarge as exc:  # refused whole: what the fetch brought leaves the disk
                fetch.store.forget(FETCHED, state.imported)
                _note_status(resolver, "fetch", False, str(exc))
                raise
            finally:
                state.save(resolver)  # what moved in is remembered even when the import stopped half-way
            _note_status(resolver, "tidy", tidying.problem is None, tidying.problem or "packed when due")
            out.drop_settled(state, imported.sessions)
            result.imported += imported.sessions
            result.conflicts += imported.conflicts
            result.refused += imported.refused
            if imported.sessions:
                say(f"imported {len(imported.sessions)} session(s)")
            result.skipped = out.skipped
            if not out.changes:
                _note_status(resolver, "push", True, "nothing to push")
                break
            say(f"pushing {len(out.signatures)} session(s), {len(out.removals)} removal(s)")
            pushed = _push(resolver, fetch, commit, out, host, deadline)
            if pushed is not None:
                if state.imported == commit:  # everything up to it is here, and the rest is ours
                    state.imported = pushed
                _landed(resolver, state, out)
                result.pushed += len(out.signatures)
                result.removed += len(out.removals)
                break
        else:
            _note_status(resolver, "push", False, f"the remote kept moving; gave up after {PUSH_ATTEMPTS} tries")
    return result


def _push(
    resolver: PathResolver, fetch: Fetch, base: str | None, out: Outgoing, host: str, deadline: float
) -> str | None:
    """Commit ``out`` on top of ``base`` and push it: the commit, or None when the remote moved meanwhile."""
    message = f"blackboard: {len(out.signatures)} session(s), {len(out.removals)} removal(s) from {host}"
    who = f"blackboard <blackboard@{safe_segment(host)}>"
    try:
        commit = fetch.store.commit(BUILT, base, message, who, out.changes)
        spec = f"{commit}:{fetch.config['ref']}"
        remote = fetch.config["remote"]
        pushing = fetch.store.spawn(
            ["push", "--porcelain", "--quiet", *_served_by("receive-pack", remote), remote, spec]
        )
        fetch.store.finish(pushing, None, deadline)
    except GitFailed as exc:
        # `--porcelain` puts one line per ref on stdout; "!" means it was refused, and for a
        # ref nobody else can hold a lock on, refused means someone pushed first.
        if any(line.startswith(b"!") and b"rejected]" in line for line in exc.output.splitlines()):
            return None
        _note_status(resolver, "push", False, str(exc))
        raise
    _note_status(resolver, "push", True, message)
    return commit


def _landed(resolver: PathResolver, state: State, out: Outgoing) -> None:
    state.pushed.update(out.signatures)
    state.foreign -= out.signatures.keys()  # resumed here: this machine's from now on
    for session_id in out.signatures:  # resumed after a removal: sent again, marker and all
        state.removed.pop(session_id, None)
    for session_id in out.removals:
        state.removed[session_id] = None
        state.pushed.pop(session_id, None)
        state.foreign.discard(session_id)
        try:
            os.unlink(resolver.sync_removed_marker(session_id))
        except FileNotFoundError:
            pass
    if out.active is not None:
        state.active = out.active
    state.save(resolver)


# ---- at SessionStart and SessionEnd ------------------------------------------------------


def start_fetch(resolver: PathResolver, environ: Mapping[str, str]) -> Fetch | None:
    """SessionStart of a project that syncs, first thing: ask the remote while the hook does its local work.

    None when that cannot start (say, no git); the status says why.
    """
    try:
        return Fetch(resolver, environ)
    except BlackboardError as exc:
        _note_status(resolver, "fetch", False, str(exc))
        return None


def finish_fetch(resolver: PathResolver, fetch: Fetch, environ: Mapping[str, str], deadline: float) -> Imported | None:
    """SessionStart: import whatever arrived by ``deadline``; a round already running here brings the rest."""
    fetch.record_up_to_date = False
    release = try_lock(resolver.sync_file("round"))
    if release is None:
        fetch.stop()  # a round running here fetches anyway
        return None
    try:
        state = State.load(resolver)
        commit = fetch.finish(deadline, state.imported)
        if commit is None or commit == state.imported:  # the usual start: nothing new since the last round
            return Imported()
        try:
            return import_commit(resolver, fetch.store, state, commit, settings.host(environ), deadline)
        except TooLarge as exc:  # the round this SessionStart starts forgets it: no time for that here
            _note_status(resolver, "fetch", False, str(exc))
            return None
        finally:
            state.save(resolver)  # what moved in is remembered even when the import stopped half-way
    finally:
        fetch.stop()
        release()


def start_background_round(resolver: PathResolver, environ: Mapping[str, str]) -> None:
    """Start a detached round that outlives the hook (SessionEnd must not wait on the network).

    The round reads its project from stdin, to the end. This process keeps the other end
    of that pipe open until it exits, so the round starts its work once the hook is done:
    it never competes with the session's start for the machine.
    """
    import subprocess
    import sys

    from .environment import PLUGIN_ROOT

    if round_waiting(resolver):
        return  # it takes this machine's changes along when it runs
    payload = json.dumps({"org": resolver.project.org, "project": resolver.project.name}).encode()
    launcher = os.path.join(PLUGIN_ROOT, "hooks", "launch.py")
    read_end, write_end = os.pipe()  # neither is inherited: the round gets read_end as its stdin only
    try:
        subprocess.Popen(
            [sys.executable, "-I", "-S", launcher, "sync"],
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(environ),
            start_new_session=True,
        )
    finally:
        os.close(read_end)
    os.write(write_end, payload)  # a few bytes: a pipe takes them without blocking
    # write_end stays open on purpose: the kernel closes it when this hook exits


def status(resolver: PathResolver) -> dict[str, object]:
    """The remote, the last fetch and push with their outcome, and what is pending."""
    if not enabled(resolver):
        return {"enabled": False}
    config = _config(resolver)
    try:
        state, paused = State.load(resolver), None
    except StatePaused as exc:
        state, paused = State({}), str(exc)
    pending = outgoing(resolver, state, settings.host()) if paused is None else Outgoing()
    recorded = _read_json(resolver.sync_file("status.json"))
    return {
        "enabled": True,
        "remote": redact(config["remote"]),
        "readers": readers_warning(config["remote"]),
        "ref": config["ref"],
        "paused": paused,
        "last_fetch": recorded.get("fetch"),
        "last_push": recorded.get("push"),
        "last_tidy": recorded.get("tidy"),
        "pending_sessions": len(pending.signatures),
        "pending_removals": len(pending.removals),
        "imported_sessions": len(state.foreign),
        "conflicts": state.conflicts,
        "refused": state.refused[-10:],
        "not_synced": pending.skipped,
    }


def record_removal(resolver: PathResolver, session_id: str) -> None:
    """Cleanup removed ``session_id`` here: the next push removes it from the remote too (if this project syncs)."""
    if not os.path.isdir(resolver.sync_dir) or not is_session_id(session_id):
        return
    refuse_links(resolver.root, resolver.sync_removed_dir)
    make_dirs(resolver.sync_removed_dir)
    create_exclusive(resolver.sync_removed_marker(session_id), "")
