"""Who is here: the project's other live sessions, as a person or an agent reads them (docs/adr/0029-live-sessions.md).

For each: its short id, the checkout it works in (this one, or another worktree), the branch
that checkout is on now, its latest request, the files it edited within the edit window (by
their path from its checkout, a submodule's folder included), and the tasks it claims.
SessionStart shows the same lines, and ``blackboard who`` (``/blackboard:who``). Every value
is another session's words: redacted whole, then cut, then quoted (``render.quoted``).
"""

from __future__ import annotations

import os
import re
import time

from . import claims, live
from .changes import uncommitted_among
from .clock import describe_age, format_utc
from .entries import Entry, parse
from .fsutil import read_tail
from .gitinfo import checkout_around, head_of
from .ledger import board_key
from .live import Liveness, Presence
from .meta import Meta
from .paths import PathResolver
from .redact import redact
from .render import quoted
from .settings import Settings

GIT_SECONDS = 0.3  # for git to say which of the files shown are still uncommitted
TASKS_BYTES = 256 * 1024  # of a live session's task file: its claims are among its latest tasks
MAX_FILES = 6


class Neighbour:
    """One other live session of the project and what it is doing."""

    __slots__ = ("session_id", "checkout", "branch", "request", "edits", "claims", "holds", "open_files")

    def __init__(self, meta: Meta, presence: Presence, branches: dict[str, str]) -> None:
        self.session_id = meta["session_id"]
        self.checkout = presence.head[0] if presence.head else _started_in(meta.get("cwd"))  # where it works now
        if self.checkout is not None and self.checkout not in branches:
            branches[self.checkout] = head_of(self.checkout)[0]  # read once for every session of a checkout
        self.branch = branches[self.checkout] if self.checkout is not None else ""
        self.request = presence.request
        self.edits = sorted(((at, path, top) for (top, path), at in presence.edits.items()), reverse=True)
        self.holds = sorted((glob, why, until) for (_, glob), (why, until, _) in presence.held(time.time()).items())
        self.open_files: set[tuple[str, str]] | None = None  # (checkout, path) git says are uncommitted; None: unknown
        self.claims: list[tuple[str, str, str]] = []  # (key, text, since)

    def to_json(self) -> dict[str, object]:
        """What ``blackboard who --json`` prints of it: every text redacted, as in the lines."""
        return {
            "session_id": self.session_id,
            "checkout": _redacted(self.checkout),
            "branch": redact(self.branch),
            "request": _redacted(self.request),
            "edited": [
                {"path": redact(path), "checkout": redact(top), "at": round(at, 3)} for at, path, top in self.edits
            ],
            "claims": [{"key": key, "text": redact(text), "since": redact(since)} for key, text, since in self.claims],
            "holds": [{"path": redact(glob), "reason": redact(why), "until": until} for glob, why, until in self.holds],
            "uncommitted": None
            if self.open_files is None
            else [redact(path) for _, path, top in self.edits if (top, path) in self.open_files],
        }


def neighbours(
    resolver: PathResolver, settings: Settings, exclude: str, limit: int = 50, liveness: Liveness | None = None
) -> tuple[list[Neighbour], int]:
    """The project's other live sessions (at most ``limit``, newest start first), and how many there are in all."""
    metas = (liveness or Liveness(resolver, settings)).others(exclude=exclude)[::-1]
    since = time.time() - max(settings.edit_window, 0)
    branches: dict[str, str] = {}
    found = [
        Neighbour(meta, live.read_presence(resolver.live_path(meta["session_id"]), since), branches)
        for meta in metas[:limit]
    ]
    _claims_of(resolver, found, exclude)
    return found, len(metas)


def ask_uncommitted(found: list[Neighbour], settings: Settings) -> None:
    """Which files each edited are still uncommitted (held): git asked once per checkout, within ``GIT_SECONDS``.

    ``blackboard who`` asks; SessionStart does not (two git processes on every start), and says
    only when each file was edited: the guard asks git before it asks the person."""
    deadline = time.monotonic() + GIT_SECONDS
    by_checkout: dict[str, set[str]] = {}
    for neighbour in found:
        for _, path, top in neighbour.edits[:MAX_FILES]:
            by_checkout.setdefault(top, set()).add(path)
    open_files: set[tuple[str, str]] = set()
    for top, paths in by_checkout.items():
        answer = uncommitted_among(top, sorted(paths), settings.environ, deadline) if os.path.isdir(top) else None
        if answer is None:
            return  # git could not say: the files are shown as edited, no more
        open_files.update((top, path) for path in answer)
    for neighbour in found:
        neighbour.open_files = open_files


def _claims_of(resolver: PathResolver, found: list[Neighbour], viewer: str) -> None:
    """What each holds: claimed tasks of the live boards, the viewer's own included (by the session that
    claimed them), and carried work it claims."""
    by_id = {n.session_id: n for n in found}
    for board_session in [viewer, *by_id] if viewer else by_id:  # a person at a terminal has no board
        for task in _latest_tasks(resolver, board_session):
            holder = task.fields.get("claimed_in") or board_session
            if task.fields.get("status") == "claimed" and holder in by_id:
                key = board_key(board_session, task.fields, task.id)
                by_id[holder].claims.append((key, task.body, task.fields.get("claimed_at", "?")))
    listed = {key for n in found for key, _, _ in n.claims}
    for claim in claims.held(resolver):
        if claim.session_id in by_id and claim.key not in listed:
            by_id[claim.session_id].claims.append((claim.key, "carried work", claim.at))


def _latest_tasks(resolver: PathResolver, session_id: str) -> list[Entry]:
    """The claimed tasks among a board's latest: only their blocks are parsed (a heading is never in a body,
    ``entries.render`` escapes it), so 50 open tasks of 30 live sessions cost SessionStart no parse."""
    try:
        tail, _ = read_tail(resolver.board_file(session_id, "tasks"), TASKS_BYTES)
    except OSError:
        return []
    claimed = [block for block in ("\n" + tail).split("\n## ")[1:] if "- status: claimed" in block]
    return parse("".join("\n## " + block for block in claimed))[0]


def lines(
    found: list[Neighbour], total: int, here: str | None, files: int = MAX_FILES, room: int | None = None
) -> list[str]:
    """The neighbours as text: a line each, and what each asks, edited (the newest ``files``) and claims under it.

    With ``room``, only the neighbours whose lines fit in that many characters are written, the
    rest counted: SessionStart quotes no more than its context shows.
    """
    now = time.time()
    shown: list[str] = []
    used = 0
    for count, neighbour in enumerate(found):
        block = _block(neighbour, here, files, now)
        used += sum(len(line) + 1 for line in block)
        if room is not None and used > room - len(_more(total - count)):
            return shown + [_more(total - count)]
        shown += block
    if total > len(found):
        shown.append(_more(total - len(found)))
    return shown


def _more(count: int) -> str:
    return f"- … and {count} more (`blackboard who` lists them all)"


def _block(neighbour: Neighbour, here: str | None, files: int, now: float) -> list[str]:
    """One neighbour's lines: where it works, what it asks, the newest ``files`` it edited, its holds and claims."""
    branch = f", branch {quoted(neighbour.branch, 80)}" if neighbour.branch else ""
    shown = [f"- {neighbour.session_id[:8]}: {_where(neighbour.checkout, here)}{branch}"]
    if neighbour.request:
        shown.append(f"  asks: {quoted(neighbour.request, 200)}")
    if neighbour.edits:
        edits = neighbour.edits[:files]  # only those shown are quoted: a session may have edited thousands
        named = [
            f"{quoted(path, 120)} ({_state(neighbour, top, path)}{describe_age(max(now - at, 0))} ago)"
            for at, path, top in edits
        ]
        more = len(neighbour.edits) - len(edits)
        shown.append(f"  edited: {', '.join(named)}" + (f", and {more} more" if more else ""))
    for glob, why, until in neighbour.holds[:MAX_FILES]:
        reason = f", because {quoted(why, 120)}" if why else ""
        end = f", until {format_utc(until)}" if until is not None else ""
        shown.append(f"  holds: {quoted(glob, 120)} (held explicitly{reason}{end})")
    for key, text, since in neighbour.claims[:5]:
        shown.append(f"  claims: {_short(key)} {quoted(text, 100)} (since {_since(since)})")
    return shown


def _state(neighbour: Neighbour, top: str, path: str) -> str:
    if neighbour.open_files is None:
        return ""
    return "uncommitted, " if (top, path) in neighbour.open_files else "committed, "


def _since(stamp: str) -> str:
    """A claim's time as the board wrote it, or quoted as data when a hand edit made it something else."""
    return stamp if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp) else quoted(stamp, 32)


def _started_in(cwd: object) -> str | None:
    """The checkout a session began in, when it never said where it works (no HEAD recorded)."""
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or "\0" in cwd:
        return None
    return checkout_around(os.path.realpath(cwd))[0]


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact(text)


def _where(checkout: str | None, here: str | None) -> str:
    if checkout is None:
        return "checkout unknown"
    if here is not None and os.path.realpath(checkout) == os.path.realpath(here):
        return "this checkout"
    return f"another checkout of the repository, {quoted(checkout, 200)}"


def _short(key: str) -> str:
    origin, _, local = key.rpartition("/")
    return f"{origin[:8]}/{local}"
