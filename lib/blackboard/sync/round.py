"""A sync round: fetch, import, push until the push lands; the rounds SessionStart and SessionEnd start (ADR 19)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

from .. import handoff
from ..environment import PLUGIN_ROOT
from ..errors import BlackboardError
from ..fsutil import refuse_links
from ..gitstore import GitFailed, Store, TooLarge
from ..locks import file_lock, held_for, try_lock
from ..paths import PathResolver
from ..project import safe_segment
from ..redact import redact_remote
from ..registry import session_folders
from ..settings import Settings
from .config import enabled, read_config, readers_warning, served_by
from .importing import Imported, import_commit
from .inbound import MAX_SESSIONS_SENT
from .outbound import Outgoing, outgoing
from .remote import FETCHED, IMPORTED, Fetch, forget_fetched, settle
from .state import State, StatePaused, note_status, read_json

PUSH_ATTEMPTS = 6
ROUND_SECONDS = 300.0
Progress = Callable[[str], None]


class Round:
    """What one round did, for ``blackboard sync`` and the status."""

    __slots__ = ("imported", "pushed", "removed", "conflicts", "refused", "skipped")

    def __init__(self) -> None:
        self.imported: list[str] = []
        self.pushed = 0
        self.removed = 0
        self.conflicts: list[str] = []
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
    """Fetch, import, and push this machine's changes until the push lands (one round at a time per project).

    ``started`` is called once the round may start: when no other round runs.
    """
    say = progress or (lambda _: None)
    host, environ = settings.host, settings.environ
    result = Round()
    refuse_links(resolver.root, resolver.sync_dir)
    with file_lock(resolver.sync_file("round"), timeout=seconds):
        started()
        handoff.publish_what_an_import_left(resolver)
        deadline = time.monotonic() + seconds  # from when the round may start, not from when it queued
        settle(resolver, environ, time.monotonic() + seconds / 2)  # the rest of the round's time is its own
        state: State | None = None
        for _ in range(PUSH_ATTEMPTS):
            fetch = Fetch(resolver, environ, probe=False, locked=True)  # a round fetches anyway: no ls-remote first
            try:
                # this machine's side needs no remote: it is read while git fetches
                folders = session_folders(resolver)  # each try lists them again: an import may have brought some
                if state is None:
                    state = State.load(resolver, fetch.config["remote"])  # the remote this round talks to
                    state.forget_missing(folders)
                _keep(fetch.store, state.imported, deadline)
                out = outgoing(resolver, state, host, folders)
                say("fetching")
                commit = fetch.finish(deadline, state.imported)
            finally:
                fetch.stop()
            try:
                with fetch.store.tidying(deadline) as tidying:  # git packs what earlier rounds left meanwhile
                    imported = import_commit(resolver, fetch.store, state, commit, host, deadline, tidying.start)
            except TooLarge as exc:  # refused whole: what the fetch brought leaves the disk
                forget_fetched(resolver, environ, deadline)
                note_status(resolver, "fetch", False, str(exc))
                raise
            finally:
                state.save(resolver)  # what moved in is remembered even when the import stopped half-way
            note_status(resolver, "tidy", tidying.problem is None, tidying.problem or "packed when due")
            out.drop_settled(state, imported.sessions, imported.theirs)
            result.imported += imported.sessions
            result.conflicts += imported.conflicts
            result.refused += imported.refused
            if imported.sessions:
                say(f"imported {len(imported.sessions)} session(s)")
            result.skipped = out.skipped
            if not out.changes:
                note_status(resolver, "push", True, "nothing to push")
                break
            say(f"pushing {len(out.signatures)} session(s), {len(out.removals)} removal(s)")
            pushed = push(resolver, fetch, commit, out, host, deadline)
            if pushed is not None:
                if state.imported == commit:  # everything up to it is here, and the rest is ours
                    state.imported = pushed
                _landed(resolver, state, out)
                result.pushed += len(out.signatures)
                result.removed += len(out.removals)
                break
        else:
            note_status(resolver, "push", False, f"the remote kept moving; gave up after {PUSH_ATTEMPTS} tries")
    return result


def _keep(store: Store, imported: str | None, deadline: float) -> None:
    """Point ``refs/imported`` at the commit ``state.json`` names; a round does it while git fetches.

    An import cut short (its deadline, a kill) leaves that commit there, and the next import
    compares against it: the gc that starts once the trees are compared must not delete it.
    Gone, that import would read the whole tree again, counting every file against its bounds.
    """
    if imported is None:
        return
    try:
        store.run(["update-ref", IMPORTED, imported], deadline=deadline)
    except GitFailed:  # gone already (the repository was deleted, or pruned by an older version)
        return  # the import reads the whole tree instead: slower, never stuck


def push(
    resolver: PathResolver, fetch: Fetch, base: str | None, out: Outgoing, host: str, deadline: float
) -> str | None:
    """Commit ``out`` on top of ``base`` and push it: the commit, or None when the remote moved meanwhile."""
    message = f"blackboard: {len(out.signatures)} session(s), {len(out.removals)} removal(s) from {host}"
    who = f"blackboard <blackboard@{safe_segment(host)}>"
    try:
        commit = fetch.store.commit(FETCHED, base, message, who, out.changes)  # the next fetch replaces it
        spec = f"{commit}:{fetch.config['ref']}"
        remote = fetch.config["remote"]
        pushing = fetch.store.spawn(
            ["push", "--porcelain", "--quiet", *served_by("receive-pack", remote), remote, spec]
        )
        fetch.store.finish(pushing, None, deadline)
    except GitFailed as exc:
        # `--porcelain` puts one line per ref on stdout; "!" means it was refused, and for a
        # ref nobody else can hold a lock on, refused means someone pushed first.
        if any(line.startswith(b"!") and b"rejected]" in line for line in exc.output.splitlines()):
            return None
        note_status(resolver, "push", False, str(exc))
        raise
    note_status(resolver, "push", True, message)
    return commit


def _landed(resolver: PathResolver, state: State, out: Outgoing) -> None:
    state.pushed.update(out.signatures)
    for session_id in out.signatures:
        state.foreign.pop(session_id, None)  # resumed here: this machine's from now on
        state.removed.pop(session_id, None)  # resumed after a removal: sent again, marker and all
        state.dropped.pop(session_id, None)
        state.resend.pop(session_id, None)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(resolver.sync_touched_marker(session_id))
    state.dropped.update(dict.fromkeys(out.dropped))
    for session_id in out.pruned:
        state.markers.pop(session_id, None)
    for session_id in out.removals:
        state.markers.pop(session_id, None)  # the newest again
        state.markers[session_id] = None
        state.removed[session_id] = None
        state.dropped.pop(session_id, None)
        state.resend.pop(session_id, None)
        state.left.pop(session_id, None)  # the remote holds it no more
        state.pushed.pop(session_id, None)
        state.foreign.pop(session_id, None)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(resolver.sync_removed_marker(session_id))
    if out.active is not None:
        state.active = out.active
    state.save(resolver)


def start_fetch(resolver: PathResolver, settings: Settings) -> Fetch | None:
    """SessionStart of a project that syncs, first thing: ask the remote while the hook does its local work.

    None when that cannot start (say, no git); the status says why.
    """
    try:
        return Fetch(resolver, settings.environ)
    except BlackboardError as exc:
        note_status(resolver, "fetch", False, str(exc))
        return None


def finish_fetch(resolver: PathResolver, fetch: Fetch, settings: Settings, deadline: float) -> Imported | None:
    """SessionStart: import whatever arrived by ``deadline``; a round already running here brings the rest.

    The usual start finds the commit it knows, and takes no lock: only an import needs one.
    """
    fetch.record_up_to_date = False
    try:
        known = State.load(resolver, fetch.config["remote"]).imported
        if fetch.listed(deadline) in (None, known):  # the usual start: nothing new since the last round
            return Imported()
    finally:
        fetch.stop()
    release = try_lock(resolver.sync_file("round"))
    if release is None:
        return None  # a round running here fetches anyway
    try:
        fetch.store.clear_stale_locks()  # before git fetches here
        state = State.load(resolver, fetch.config["remote"])  # as the round that held the lock left it
        commit = fetch.finish(deadline, state.imported)
        if commit is None or commit == state.imported:
            return Imported()
        try:
            return import_commit(resolver, fetch.store, state, commit, settings.host, deadline)
        except TooLarge as exc:  # the round this SessionStart starts forgets it: no time for that here
            forget_fetched(resolver, settings.environ, None)
            note_status(resolver, "fetch", False, str(exc))
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


def status(resolver: PathResolver, host: str) -> dict[str, object]:
    """The remote, the last fetch and push with their outcome, and what this machine (``host``) has pending."""
    if not enabled(resolver):
        return {"enabled": False}
    config = read_config(resolver)
    try:
        state, paused = State.load(resolver, config["remote"]), None
    except StatePaused as exc:
        state, paused = State({}), str(exc)
    pending = outgoing(resolver, state, host) if paused is None else Outgoing()
    recorded = read_json(resolver.sync_file("status.json"))
    return {
        "enabled": True,
        "remote": redact_remote(config["remote"]),
        "readers": readers_warning(config["remote"]),
        "ref": config["ref"],
        "paused": paused,
        "last_fetch": recorded.get("fetch"),
        "last_push": recorded.get("push"),
        "last_tidy": recorded.get("tidy"),
        "last_settle": recorded.get("settle"),
        "pending_sessions": len(pending.signatures) + pending.later,
        # this machine's oldest sessions, past what the remote may hold: kept here only
        "kept_here": pending.kept + len(pending.dropped) + len(state.dropped),
        "pending_removals": len(pending.removals),
        "imported_sessions": len(state.foreign),
        "imported_bytes": sum(state.foreign.values()),
        "conflicts": state.conflicts,
        "refused": state.refused[-10:],
        "not_synced": pending.skipped,
    }


def status_lines(info: dict[str, object]) -> list[str]:
    """``sync status`` as a person reads it, from what ``status`` returns for a project that syncs."""
    lines = [f"remote: {info['remote']} ({info['ref']})", str(info["readers"])]
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
    lines.append(f"pending: {info['pending_sessions']} session(s), {info['pending_removals']} removal(s)")
    if info["kept_here"]:
        lines.append(
            f"kept here only: {info['kept_here']} of this machine's oldest session(s); the remote holds at most "
            f"{MAX_SESSIONS_SENT} sessions, and this machine sends its newest"
        )
    held = int(info["imported_bytes"]) // (1024 * 1024)  # type: ignore[call-overload]
    lines.append(f"imported from other machines: {info['imported_sessions']} session(s), {held} MiB")
    lines += [f"conflict: {k}: {v}" for k, v in dict(info["conflicts"]).items()]  # type: ignore[call-overload]
    lines += [f"refused: {r}" for r in info["refused"]]  # type: ignore[attr-defined]
    lines += [f"not synced: {s}" for s in info["not_synced"]]  # type: ignore[attr-defined]
    return lines
