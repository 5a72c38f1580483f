"""Who holds each piece of carried work, across the project's live sessions (docs/adr/0029-live-sessions.md).

Work carried from an ended session (``5f1c8a2e/t3``) is taken onto the board of the session
that acts on it. Two live sessions claiming it at once would each take it onto their own
board; the claim is first recorded here, one file per key (``_claims/{session}+{id}.json``), under
its lock: the first live claimant holds it, and a claim whose session ended or died is free.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from .clock import now_iso
from .errors import BlackboardError
from .fsutil import atomic_write, make_dirs, names_in, read_json_object, refuse_links
from .locks import file_lock
from .paths import PathResolver

MAX_CLAIM_BYTES = 4096


class Claim:
    """A recorded claim: the ``key``, the ``session_id`` holding it, who there (``by``) and since when (``at``)."""

    __slots__ = ("key", "session_id", "by", "at")

    def __init__(self, key: str, session_id: str, by: str, at: str) -> None:
        self.key, self.session_id, self.by, self.at = key, session_id, by, at


def hold(resolver: PathResolver, key: str, session_id: str, by: str, is_live: Callable[[str], bool]) -> None:
    """Record that ``session_id`` (``by`` there) claims ``key``; an error naming the holder when another live
    session holds it. A session that holds it already holds it still (its agents' claims are its board's to settle).
    """
    path = resolver.claim_path(key)
    refuse_links(resolver.root, resolver.claims_dir)
    make_dirs(resolver.claims_dir)
    with file_lock(path):
        held = _read(path)
        if held is not None and held.key == key and held.session_id != session_id and is_live(held.session_id):
            raise BlackboardError(
                f"task {key} is already claimed by {held.by} in session {held.session_id[:8]} (live) since "
                f"{held.at}; pick another task (`blackboard who` shows what that session is doing)"
            )
        record = {"key": key, "session_id": session_id, "by": by, "at": now_iso()}
        atomic_write(path, json.dumps(record) + "\n")


def holder(resolver: PathResolver, key: str) -> Claim | None:
    """The claim recorded on ``key``, whoever holds it, live or not; None when there is none (or it is damaged)."""
    try:
        refuse_links(resolver.root, resolver.claims_dir)
        held = _read(resolver.claim_path(key))
    except (ValueError, BlackboardError):
        return None
    return held if held is not None and held.key == key else None


def release(resolver: PathResolver, key: str) -> None:
    """Forget the claim on ``key`` (done or dropped: it is no one's work any more)."""
    path = resolver.claim_path(key)
    try:
        refuse_links(resolver.root, resolver.claims_dir)
        with file_lock(path):
            os.unlink(path)
    except (FileNotFoundError, BlackboardError):
        pass


def held(resolver: PathResolver) -> list[Claim]:
    """Every recorded claim of the project; a damaged file is no claim."""
    try:
        refuse_links(resolver.root, resolver.claims_dir)
    except BlackboardError:
        return []
    found = []
    for name in sorted(names_in(resolver.claims_dir)):
        if name.endswith(".json"):
            claim = _read(os.path.join(resolver.claims_dir, name))
            if claim is not None and _named(resolver, claim.key) == os.path.join(resolver.claims_dir, name):
                found.append(claim)
    return found


def _named(resolver: PathResolver, key: str) -> str | None:
    """Where the claim on ``key`` is kept; None for a key no carried work has (a hand edit)."""
    try:
        return resolver.claim_path(key)
    except (ValueError, BlackboardError):
        return None


def _read(path: str) -> Claim | None:
    data = read_json_object(path, MAX_CLAIM_BYTES)
    fields = [data.get(name) for name in ("key", "session_id", "by", "at")]
    if not all(isinstance(value, str) for value in fields):
        return None
    return Claim(*fields)  # type: ignore[arg-type]
