"""What the project's other live sessions hold in a checkout (SPEC §15b, docs/adr/0035-what-a-session-holds.md).

A session holds the files it wrote (edit tools, or shell commands that wrote them) within the
edit window that are still uncommitted in the working tree or the index, and the paths and
globs it holds explicitly (``blackboard hold``) until it releases them, ends or dies. Committed
work is no longer held. Files the project names shared (``blackboard share``) are never held.
"""

from __future__ import annotations

import fnmatch
import json
import os
import time
from collections.abc import Callable

from . import live
from .changes import uncommitted_among
from .fsutil import atomic_write, make_dirs, read_json_object
from .live import Liveness, Presence
from .paths import PathResolver
from .registry import active_session_ids
from .settings import Settings

SHARED_FILE = "shared.json"  # in the project's .blackboard: globs every session may touch
MAX_SHARED = 200


class Holder:
    """One other live session and what it holds in a checkout: uncommitted files it wrote, and explicit holds."""

    __slots__ = ("session_id", "presence", "files", "globs")

    def __init__(self, session_id: str, presence: Presence) -> None:
        self.session_id = session_id
        self.presence = presence
        self.files: dict[str, float] = {}  # path in the checkout -> when it last wrote it
        self.globs: list[tuple[str, str, float | None]] = []  # (path or glob, why, until)

    def holds(self, relative: str) -> bool:
        return relative in self.files or any(matches(glob, relative) for glob, _, _ in self.globs)

    def at_stake(self, touched: Callable[[str], bool]) -> list[str]:
        """The held files and globs that ``touched`` (a path in the checkout -> bool) reaches."""
        return [path for path in self.files if touched(path)] + [glob for glob, _, _ in self.globs if touched(glob)]


def matches(glob: str, relative: str) -> bool:
    """Whether a held path or glob (``src/auth``, ``src/*.py``) covers ``relative``: itself, a folder above, a match."""
    glob = glob.rstrip("/") or "."
    if glob in (".", relative) or relative.startswith(glob + "/"):
        return True
    return any(char in glob for char in "*?[") and fnmatch.fnmatchcase(relative, glob)


class Other:
    """Another session with an active marker, live or not; what it recorded is read when first asked for."""

    __slots__ = ("session_id", "_path", "_since", "_about", "_presence")

    def __init__(self, session_id: str, path: str, since: float, about: str | None) -> None:
        self.session_id, self._path, self._since, self._about = session_id, path, since, about
        self._presence: Presence | None = None

    @property
    def presence(self) -> Presence:
        if self._presence is None:
            self._presence = live.read_presence(self._path, self._since, self._about)
        return self._presence


def presences(resolver: PathResolver, session_id: str, since: float, about: str | None = None) -> list[Other]:
    """Every other session with an active marker and what it recorded (its writes after ``since``), each read
    when first asked for: a stash is at stake once any session holds a file.

    With ``about`` (one path), only the sessions that may have recorded it or a hold are read whole.
    """
    return [
        Other(other, resolver.live_path(other), since, about)
        for other in active_session_ids(resolver)
        if other != session_id  # its own files, its subagents' included
    ]


def holders(
    resolver: PathResolver,
    settings: Settings,
    others: list[Other],
    top: str,
    deadline: float,
    relevant: Callable[[str], bool] | None = None,
    enough: int | None = None,
) -> list[Holder]:
    """Those of ``others`` (``presences``) that are live and hold something in checkout ``top`` (a real path).

    Only written files ``relevant`` accepts are asked about: git is asked, before ``deadline``,
    which of them are still uncommitted; when it cannot say, all of them are held. With
    ``enough``, sessions are read ``enough`` at a time until that many holders are found: what a
    stash or a reset puts at stake is at stake for one session already, and a person is told of
    a few (30 live sessions' records are not all read for it).
    """
    now = time.time()
    shared = shared_globs(resolver)
    liveness = Liveness(resolver, settings)
    step = enough or len(others) or 1
    found: list[Holder] = []
    for start in range(0, len(others), step):
        batch: list[Holder] = []
        for other in others[start : start + step]:
            holder = _holder(other.session_id, other.presence, top, now, shared, relevant)
            if (holder.files or holder.globs) and liveness.session_is_live(other.session_id):
                batch.append(holder)
        written = sorted({path for holder in batch for path in holder.files})
        open_files = uncommitted_among(top, written, settings.environ, deadline) if written else set()
        if open_files is not None:
            for holder in batch:
                holder.files = {path: at for path, at in holder.files.items() if path in open_files}
        found += [holder for holder in batch if holder.files or holder.globs]
        if enough is not None and len(found) >= enough:
            break
    return found


def _holder(
    session_id: str,
    presence: Presence,
    top: str,
    now: float,
    shared: list[str],
    relevant: Callable[[str], bool] | None,
) -> Holder:
    holder = Holder(session_id, presence)
    for (where, path), at in presence.edits.items():
        if where == top and (relevant is None or relevant(path)):
            holder.files[path] = at
    if shared:
        holder.files = {path: at for path, at in holder.files.items() if not any(matches(g, path) for g in shared)}
    for (where, glob), (why, until, _) in presence.held(now).items():
        if where == top:
            holder.globs.append((glob, why, until))
    return holder


def shared_globs(resolver: PathResolver) -> list[str]:
    """The paths and globs the project names shared: every session may touch them (a changelog, a lock file)."""
    globs = read_json_object(os.path.join(resolver.project_dir, SHARED_FILE), 1 << 16).get("shared")
    return [glob for glob in globs[:MAX_SHARED] if isinstance(glob, str)] if isinstance(globs, list) else []


def set_shared(resolver: PathResolver, add: list[str], remove: list[str]) -> list[str]:
    """Name paths or globs shared (``add``) or no longer (``remove``); returns the project's list."""
    globs = [glob for glob in shared_globs(resolver) if glob not in remove]
    globs += [glob for glob in add if glob not in globs]
    make_dirs(resolver.project_dir)
    atomic_write(os.path.join(resolver.project_dir, SHARED_FILE), json.dumps({"shared": globs[:MAX_SHARED]}) + "\n")
    return globs[:MAX_SHARED]
