"""A sync round: list the refs, import other machines', push this machine's own; the rounds hooks start (ADR 30)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

from .. import handoff
from ..clock import now_iso
from ..environment import PLUGIN_ROOT
from ..errors import BlackboardError
from ..fsutil import names_in, refuse_links
from ..gitstore import GitFailed, Store, TooLarge
from ..locks import file_lock, held_for, try_lock
from ..machines import LEGACY_SOURCE, copies_dir, held_bytes, machine_id, sources
from ..paths import PathResolver
from ..project import safe_segment
from ..redact import redact_remote
from ..registry import session_folders
from ..settings import Settings
from . import importing
from .config import enabled, read_config, readers_warning, served_by
from .importing import Imported, clear_leftovers, import_machines
from .inbound import MAX_REFS, max_sessions
from .outbound import Outgoing, outgoing
from .remote import FETCHED, MINE, Fetch, Listing, commit_times, forget_fetched, settle
from .state import State, StatePaused, note_status, read_json

PUSH_ATTEMPTS = 6
MEASURE_EVERY = 3600.0  # seconds between two whole measures of what other machines' copies hold here
NEAR_BOUND = 0.9  # of MAX_HELD_BYTES: past it, every round measures
ROUND_SECONDS = 300.0
PUSHING = "refs/pushing"  # the commit a push carries, made before it goes
Progress = Callable[[str], None]


class Round:
    """What one round did, for ``blackboard sync`` and the status."""

    __slots__ = ("imported", "pushed", "removed", "refused", "skipped")

    def __init__(self) -> None:
        self.imported: list[str] = []
        self.pushed = 0
        self.removed = 0  # sessions this machine's ref holds no more (cleaned up here, or past the bound)
        self.refused: list[str] = []
        self.skipped: list[str] = []


def background_round(resolver: PathResolver, settings: Settings) -> Round | None:
    """A round a hook started, or None when another already waits for the running one.

    At most one round runs and one waits: the waiting one reads this machine's changes
    only once it runs, so it takes along whatever a round that found it waiting would have.
    Behind a hung remote, ten sessions' ends leave two processes, not twenty.
    """
    refuse_links(resolver.root, resolver.sync_dir)
    release_waiting = try_lock(resolver.sync_file("waiting"))
    if release_waiting is None:
        return None
    return sync_round(resolver, settings, started=release_waiting)


def round_waiting(resolver: PathResolver) -> bool:
    """Whether a round already waits for the running one (then starting another is of no use).

    Asked without taking the lock, so a hook that starts a round never imports filelock.
    """
    return held_for(resolver.sync_file("waiting") + ".lock") is not None


def sync_round(
    resolver: PathResolver,
    settings: Settings,
    progress: Progress | None = None,
    seconds: float = ROUND_SECONDS,
    started: Callable[[], object] = lambda: None,
) -> Round:
    """Import what other machines' refs hold that is new here, and push this machine's changes to its own ref
    (one round at a time per project). ``started`` is called once the round may start: when no other runs.
    """
    say = progress or (lambda _: None)
    environ, me, limit = settings.environ, machine_id(resolver.root), max_sessions(settings.environ)
    result = Round()
    refuse_links(resolver.root, resolver.sync_dir)
    with file_lock(resolver.sync_file("round"), timeout=seconds):
        started()
        handoff.publish_what_an_import_left(resolver)
        deadline = time.monotonic() + seconds  # from when the round may start, not from when it queued
        settle(resolver, environ, time.monotonic() + seconds / 2)  # the rest of the round's time is its own
        clear_leftovers(resolver)
        state: State | None = None
        for attempt in range(PUSH_ATTEMPTS):
            fetch = Fetch(resolver, environ, me, locked=True)
            try:
                # this machine's side needs no remote: it is read while git lists the refs
                if state is None:
                    state = State.load(resolver, fetch.config["remote"])  # the remote this round talks to
                base = _base(fetch.store, state)
                out = outgoing(resolver, state, settings.host, limit, session_folders(resolver), settings.home)
                say("fetching")
                listing = fetch.listed(deadline)
            finally:
                fetch.stop()
            if attempt == 0:
                try:
                    imported = _import(resolver, fetch, state, listing, limit, deadline, _held_now(resolver, state))
                finally:
                    state.looked = _copies_changed(resolver)  # what this round changed there is counted
                    state.save(resolver)  # what moved in is remembered even when the import stopped half-way
                settle(resolver, environ, deadline)  # what a refused commit brought leaves the disk
                result.imported += imported.sessions
                result.refused += imported.refused
                if imported.sessions:
                    say(f"imported {len(imported.sessions)} session(s)")
            result.skipped = out.skipped
            _overwritten(resolver, state, listing, result)
            if not out.changes and listing.mine == state.mine:  # nothing new, and its ref as it left it
                note_status(resolver, "push", True, "nothing to push")
                break
            say(f"pushing {len(out.signatures)} session(s)")
            pushed = push(resolver, fetch, state, base, listing.mine, out, settings.host, me, deadline)
            if pushed is not None:
                _landed(fetch.store, state, out, pushed)
                state.save(resolver)
                result.pushed += len(out.signatures)
                result.removed += len(out.gone)
                break
        else:
            note_status(resolver, "push", False, f"this machine's ref kept moving; gave up after {PUSH_ATTEMPTS} tries")
        with fetch.store.tidying(deadline) as tidying:  # git packs what earlier rounds left
            tidying.start()
        note_status(resolver, "tidy", tidying.problem is None, tidying.problem or "packed when due")
    return result


def _base(store: Store, state: State) -> str | None:
    """The commit this machine's next push goes on from: its last pushed, when this repository still holds it.

    A round killed after its push landed and before it wrote ``state.json`` left the remote at
    the commit it was pushing: that one is this machine's own. With neither here (the private
    repository was deleted), the ref is written afresh from every session this machine holds.
    """
    local = store.resolve(MINE)
    if state.pushing is not None and state.pushing != state.mine and store.resolve(state.pushing) == state.pushing:
        local = state.pushing  # adopted once the listing shows the remote at it (``_overwritten``)
    if local is None or local not in (state.mine, state.pushing):
        state.pushed = {}
        return None
    return local


def _overwritten(resolver: PathResolver, state: State, listing: Listing, result: Round) -> None:
    """Say so when this machine's ref is not at what it pushed last: someone else changed it. The push
    that follows overwrites it (this machine is its only writer)."""
    if listing.mine is not None and listing.mine == state.pushing and state.pushing != state.mine:
        state.mine = state.pushing  # its own push, which a kill kept from being recorded
        return
    if state.mine is None or listing.mine == state.mine:
        return
    line = (
        f"this machine's ref was changed by someone else (found {str(listing.mine)[:12]}, pushed "
        f"{state.mine[:12]}); overwritten with this machine's sessions"
    )
    state.overwritten = f"{now_iso()}: {line}"
    result.refused.append(line)
    note_status(resolver, "overwritten", False, line)


def _held_now(resolver: PathResolver, state: State) -> int | None:
    """What copies of other machines' sessions hold here, measured whole (a ``stat`` per file: 30 000 of them for
    5 000 sessions, most of a round's time) when the last measure is ``MEASURE_EVERY`` old or was never taken, its
    figure nears the bound, or something but a round changed the copies since (a cleanup made room, a hand removed
    some); else None: the state's figure, to which every import adds what it writes."""
    now = time.time()
    due = state.measured is None or not 0 <= now - state.measured < MEASURE_EVERY
    due = due or _copies_changed(resolver) != state.looked
    if due or state.held > NEAR_BOUND * importing.MAX_HELD_BYTES:
        # the figure is kept at once: a round with nothing new to import stands on it too, and for the hour after
        state.measured, state.held = now, held_bytes(resolver)
        return state.held
    return None


def _copies_changed(resolver: PathResolver) -> int:
    """When the folders of other machines' copies last changed (a copy added or removed), in nanoseconds: one
    ``stat`` per machine, not per file."""
    folders = [copies_dir(resolver)] + [os.path.join(copies_dir(resolver, s), "sessions") for s in sources(resolver)]
    changed = 0
    for folder in folders:
        try:
            changed = max(changed, os.stat(folder).st_mtime_ns)
        except OSError:
            continue
    return changed


def _import(
    resolver: PathResolver,
    fetch: Fetch,
    state: State,
    listing: Listing,
    limit: int,
    deadline: float,
    held: int | None = None,
) -> Imported:
    """Fetch what changed of other machines' refs (the newest ``MAX_REFS`` by commit time; the old shared ref once)
    and import it, with what was refused before."""
    try:
        commits = fetch_others(fetch, state, listing, deadline)
        imported = import_machines(resolver, fetch.store, state, commits, limit, deadline, held)
        imported.refused[:0] = fetch.problems
        for line in fetch.problems:
            state.refuse(line)
        return imported
    except TooLarge as exc:  # refused whole: what the fetch brought leaves the disk
        forget_fetched(resolver, fetch.environ, deadline)
        note_status(resolver, "fetch", False, str(exc))
        raise
    finally:
        if state.legacy is None and LEGACY_SOURCE in state.known:
            state.legacy = state.known[LEGACY_SOURCE]  # read once, whole: never again


def fetch_others(fetch: Fetch, state: State, listing: Listing, deadline: float) -> dict[str, str]:
    """Each other machine's commit to import (machine id -> commit): those the listing names, fetched where
    this repository lacks them, the newest ``MAX_REFS`` by commit time; and the old shared ref, once."""
    local = _local_refs(fetch.store)
    wanted = [s for s, commit in listing.others.items() if local.get(s) != commit]
    legacy = state.legacy is None and listing.legacy is not None
    if legacy and local.get(LEGACY_SOURCE) != listing.legacy:
        wanted.append(LEGACY_SOURCE)
    if wanted:
        fetch.fetch(wanted, deadline)
        local = _local_refs(fetch.store)
    times = commit_times(fetch.store)
    current = [s for s, commit in listing.others.items() if local.get(s) == commit]
    newest = sorted(current, key=lambda s: (times.get(s, 0), s), reverse=True)[:MAX_REFS]
    if len(current) > MAX_REFS:
        note_status(fetch.resolver, "refs", False, f"{len(current)} machines' refs; the newest {MAX_REFS} read")
    commits = {s: local[s] for s in newest}
    if legacy and local.get(LEGACY_SOURCE) == listing.legacy:
        commits[LEGACY_SOURCE] = local[LEGACY_SOURCE]
    return commits


def _local_refs(store: Store) -> dict[str, str]:
    out = store.run(["for-each-ref", "--format=%(objectname) %(refname)", FETCHED])
    pairs = (line.split(" ", 1) for line in out.decode("ascii", "replace").splitlines())
    return {name[len(FETCHED) :]: sha for sha, name in pairs}


def push(
    resolver: PathResolver,
    fetch: Fetch,
    state: State,
    base: str | None,
    lease: str | None,
    out: Outgoing,
    host: str,
    me: str,
    deadline: float,
) -> str | None:
    """Commit ``out`` on top of ``base`` and push it to this machine's ref, as a compare-and-swap on ``lease``
    (what the listing found there; none: the ref must not exist). The commit, or None when the ref moved meanwhile.
    """
    message = f"blackboard: {len(out.signatures)} session(s) from {host}, {len(out.gone)} no more"
    who = f"blackboard <blackboard@{safe_segment(host)}>"
    ref = f"{fetch.config['prefix']}/{me}"
    try:
        commit = fetch.store.commit(PUSHING, base, message, who, out.changes)
        state.pushing = commit
        state.save(resolver)  # before it goes: a kill after it landed must not take it for someone else's
        remote = fetch.config["remote"]
        args = ["push", "--porcelain", "--quiet", f"--force-with-lease={ref}:{lease or ''}"]
        pushing = fetch.store.spawn([*args, *served_by("receive-pack", remote), remote, f"{commit}:{ref}"])
        fetch.store.finish(pushing, None, deadline)
    except GitFailed as exc:
        # `--porcelain` puts one line per ref on stdout; "!" means it was refused: the lease failed,
        # someone wrote this machine's ref after the listing. The next try lists it again.
        if any(line.startswith(b"!") and b"rejected]" in line for line in exc.output.splitlines()):
            return None
        note_status(resolver, "push", False, str(exc))
        raise
    note_status(resolver, "push", True, message)
    return commit


def _landed(store: Store, state: State, out: Outgoing, commit: str) -> None:
    store.run(["update-ref", MINE, commit])
    state.mine = state.pushing = commit
    state.pushed.update(out.signatures)
    for session_id in out.gone:
        state.pushed.pop(session_id, None)
    if out.active is not None:
        state.active = out.active


def start_fetch(resolver: PathResolver, settings: Settings) -> Fetch | None:
    """SessionStart of a project that syncs, first thing: list the remote's refs while the hook does its local
    work. None when that cannot start (say, no git); the status says why."""
    try:
        return Fetch(resolver, settings.environ, machine_id(resolver.root))
    except BlackboardError as exc:
        note_status(resolver, "fetch", False, str(exc))
        return None


def finish_fetch(resolver: PathResolver, fetch: Fetch, settings: Settings, deadline: float) -> Imported | None:
    """SessionStart: import whatever arrived by ``deadline``; the round it starts brings the rest.

    The usual start finds every commit it knows, and takes no lock: only an import needs one.
    """
    try:
        state = State.load(resolver, fetch.config["remote"])
        listing = fetch.listed(deadline)
        changed = any(state.known.get(s) != commit for s, commit in listing.others.items())
        if not changed and (state.legacy is not None or listing.legacy is None):
            return Imported()  # the usual start: nothing new since the last round
    finally:
        fetch.stop()
    release = try_lock(resolver.sync_file("round"))
    if release is None:
        return None  # a round running here fetches anyway
    try:
        fetch.store.clear_stale_locks()  # before git fetches here
        state = State.load(resolver, fetch.config["remote"])  # as the round that held the lock left it
        try:
            return _import(resolver, fetch, state, listing, max_sessions(settings.environ), deadline)
        except TooLarge:
            return None
        finally:
            state.save(resolver)  # what moved in is remembered even when the import stopped half-way
    finally:
        release()


def start_background_round(resolver: PathResolver, settings: Settings) -> None:
    """Start a detached round that outlives the hook (SessionEnd must not wait on the network).

    The round reads its project from stdin, to the end. This process keeps the other end
    of that pipe open until it exits, so the round starts its work once the hook is done:
    it never competes with the session's start for the machine.
    """

    if round_waiting(resolver):
        return  # it takes this machine's changes along when it runs
    payload = json.dumps({"org": resolver.project.org, "project": resolver.project.name}).encode()
    launcher = os.path.join(PLUGIN_ROOT, "hooks", "launch.py")
    read_end, write_end = os.pipe()  # neither is inherited: the round gets read_end as its stdin only
    try:
        subprocess.Popen(
            [sys.executable, "-I", *(["-S"] if sys.flags.no_site else []), launcher, "sync"],  # as this hook runs
            stdin=read_end,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(settings.environ),
            start_new_session=True,
        )
    finally:
        os.close(read_end)
    os.write(write_end, payload)  # a few bytes: a pipe takes them without blocking
    # write_end stays open on purpose: the kernel closes it when this hook exits


def status(resolver: PathResolver, settings: Settings) -> dict[str, object]:
    """The remote, this machine's ref, the last fetch and push with their outcome, and what is pending."""
    if not enabled(resolver):
        return {"enabled": False}
    config = read_config(resolver)
    me = machine_id(resolver.root)
    try:
        state, paused = State.load(resolver, config["remote"]), None
    except StatePaused as exc:
        state, paused = State({}), str(exc)
    pending = outgoing(resolver, state, settings.host, max_sessions(settings.environ)) if paused is None else Outgoing()
    recorded = read_json(resolver.sync_file("status.json"))
    copies = {s: len(names_in(os.path.join(copies_dir(resolver, s), "sessions"))) for s in sources(resolver)}
    return {
        "enabled": True,
        "remote": redact_remote(config["remote"]),
        "readers": readers_warning(config["remote"]),
        "ref": f"{config['prefix']}/{me}",
        "machine": me,
        "label": settings.host,
        "paused": paused,
        "last_fetch": recorded.get("fetch"),
        "last_push": recorded.get("push"),
        "last_tidy": recorded.get("tidy"),
        "last_settle": recorded.get("settle"),
        "pending_sessions": len(pending.signatures) + pending.later,
        "pending_gone": len(pending.gone),
        "kept_here": pending.kept,  # this machine's oldest sessions, past what its ref holds
        "limit": max_sessions(settings.environ),
        "copies": copies,
        "overwritten": state.overwritten,
        "legacy": config["legacy"] if state.legacy is not None else None,
        "refused": state.refused[-10:],
        "retrying": sum(len(v) for v in state.retry.values()),
        "not_synced": pending.skipped,
    }


def status_lines(info: dict[str, object]) -> list[str]:
    """``sync status`` as a person reads it, from what ``status`` returns for a project that syncs."""
    lines = [f"remote: {info['remote']}", f"this machine: {info['label']} ({info['machine']}), writes {info['ref']}"]
    lines.append(str(info["readers"]))
    if info["paused"]:
        lines.append(f"PAUSED: {info['paused']}")
    for step in ("last_fetch", "last_push"):
        record = info[step]
        if isinstance(record, dict):
            outcome = "ok" if record.get("ok") else "FAILED"
            lines.append(f"{step.replace('_', ' ')}: {record.get('at')} {outcome}: {record.get('detail')}")
        else:
            lines.append(f"{step.replace('_', ' ')}: never")
    for step in ("last_tidy", "last_settle"):
        record = info.get(step)
        if isinstance(record, dict) and not record.get("ok"):
            lines.append(f"last packing of the private repository: {record.get('at')} FAILED: {record.get('detail')}")
    lines.append(f"pending: {info['pending_sessions']} session(s) to send, {info['pending_gone']} to take off its ref")
    if info["kept_here"]:
        lines.append(
            f"kept here only: {info['kept_here']} of this machine's oldest session(s); its ref holds its newest "
            f"{info['limit']} (BLACKBOARD_SYNC_MAX_SESSIONS)"
        )
    copies = dict(info["copies"])  # type: ignore[call-overload]
    lines.append(f"from other machines: {sum(copies.values())} session(s) of {len(copies)} machine(s)")
    if info["overwritten"]:
        lines.append(f"WARNING: {info['overwritten']}")
    if info["legacy"]:
        lines.append(
            f"the old shared ref {info['legacy']} was read once and is never written again; once every machine "
            f"syncs with this version, delete it: git push {info['remote']} :{info['legacy']}"
        )
    if info["retrying"]:
        lines.append(f"refused, looked at again every round: {info['retrying']} session(s)")
    lines += [f"refused: {r}" for r in info["refused"]]  # type: ignore[attr-defined]
    lines += [f"not synced: {s}" for s in info["not_synced"]]  # type: ignore[attr-defined]
    return lines
