"""``_meta.json``: one session's metadata, lenient on read, strict on write, upgraded in one place."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from .errors import BlackboardError
from .fsutil import atomic_write, read_bounded
from .locks import file_lock

SCHEMA_VERSION = 1
MAX_META_BYTES = 1024 * 1024
ACTIVE, ENDED, ABANDONED = "active", "ended", "abandoned"
STATUSES = (ACTIVE, ENDED, ABANDONED)
FINISHED = (ENDED, ABANDONED)  # what cleanup may remove

# The shape of ``_meta.json`` is declared for the type checker; at run time it is a plain dict.
# Importing ``typing`` for it would cost every hook half a bare interpreter start
# (docs/adr/0012-plain-standard-library.md), so this is the one module that declares a type
# only for mypy, under the ``TYPE_CHECKING`` name it recognises.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypedDict

    class Meta(TypedDict, total=False):
        """The shape of ``_meta.json`` (docs/adr/0001-session-scoped-layout.md).

        Fields this version does not know are kept on rewrite.
        """

        schema_version: int
        session_id: str
        project: str
        org: str
        status: str
        started: str
        ended: str | None
        end_reason: str | None
        last_activity: str | None
        cwd: str | None
        git_branch: str | None
        parent_session_id: str | None
        resumed_at: list[str]
        source: str | None
        transcript_path: str
        start_head: str
        claude_pid: int
        claude_started: str
        claude_dir: str
        host: str
        generation: int
        via: str
else:
    Meta = dict


_OPTIONAL_STRINGS = (
    "ended",
    "end_reason",
    "last_activity",
    "cwd",
    "git_branch",
    "parent_session_id",
    "source",
)
_REQUIRED_STRINGS = ("session_id", "project", "org", "started")


def written_here(meta: Mapping[str, object], host: str) -> bool:
    """Whether a session is this machine's (``host``) own: by the host its metadata names (none before
    sync was), unless sync brought it (a remote may name this machine)."""
    return meta.get("host") in (None, host) and not arrived_by_sync(meta)


def arrived_by_sync(fields: Mapping[str, object]) -> bool:
    """Whether a session's metadata, or a handoff's front matter, came from another machine by sync.

    Sync writes ``"via": "sync"`` into both of every session it takes in, whatever host they
    name (``sync.inbound``): a remote cannot pass its sessions off as this machine's own.
    Resuming the session here makes it this machine's, and removes the mark (``session``).
    """
    return fields.get("via") == "sync"


def new_meta(session_id: str, org: str, project: str, now: str, **fields: Any) -> Meta:
    """A fresh ``active`` session's metadata; ``fields`` add to it or override it."""
    meta = Meta(
        schema_version=SCHEMA_VERSION,
        session_id=session_id,
        project=project,
        org=org,
        status=ACTIVE,
        started=now,
        ended=None,
        end_reason=None,
        last_activity=now,
        cwd=None,
        git_branch=None,
        parent_session_id=None,
        resumed_at=[],
        source=None,
    )
    meta.update(fields)  # type: ignore[typeddict-item]
    return meta


def read_meta(path: str) -> Meta | None:
    """The metadata at ``path`` upgraded to the current schema; None when the file is missing."""
    try:
        raw = read_bounded(path, MAX_META_BYTES + 1)
        if raw is None:
            return None
        if len(raw) > MAX_META_BYTES:
            raise ValueError(f"over {MAX_META_BYTES} bytes")
        data = json.loads(raw.decode("utf-8"))
    except OSError as exc:  # not the file's fault: the root is broken (a file, a loop, no permission)
        raise BlackboardError(f"cannot read {path}: {exc.strerror}; `blackboard doctor` checks the root") from None
    except (ValueError, RecursionError) as exc:
        raise BlackboardError(f"corrupt {path}: {exc}; run `blackboard doctor` to repair it") from None
    if not isinstance(data, dict):
        raise BlackboardError(f"corrupt {path}: not a JSON object; run `blackboard doctor` to repair it")
    return upgrade(data, path)


def read_meta_or_none(path: str) -> Meta | None:
    """Like ``read_meta`` but a damaged file reads as None: for listings that must go on."""
    try:
        return read_meta(path)
    except BlackboardError:
        return None


def upgrade(data: dict, path: str = "_meta.json") -> Meta:
    """Bring older metadata to the current schema; refuse metadata from a newer plugin."""
    version = data.get("schema_version", 0)
    if not isinstance(version, int):
        raise BlackboardError(
            f"corrupt {path}: schema_version {version!r:.20} is not a number; run `blackboard doctor`"
        )
    if version > SCHEMA_VERSION:
        raise BlackboardError(
            f"{path} has schema_version {version!r}, newer than this plugin understands "
            f"({SCHEMA_VERSION}); update the blackboard plugin"
        )
    data.setdefault("status", ACTIVE)
    data.setdefault("started", None)
    data.setdefault("resumed_at", [])
    for key in _OPTIONAL_STRINGS:
        data.setdefault(key, None)
    strings = ("status", *_REQUIRED_STRINGS, *_OPTIONAL_STRINGS)
    wrong = [key for key in strings if data.get(key) is not None and not isinstance(data[key], str)]
    wrong += [] if isinstance(data["resumed_at"], list) else ["resumed_at"]
    if wrong:  # lenient about what is missing, not about what is mangled: every reader trusts these types
        raise BlackboardError(
            f"corrupt {path}: wrong type for {', '.join(wrong)}; run `blackboard doctor` to repair it"
        )
    data["schema_version"] = SCHEMA_VERSION
    return data  # type: ignore[return-value]  # checked field by field above


def validate(meta: Meta) -> None:
    """Raise BlackboardError unless ``meta`` is fit to be written."""
    problems = [key for key in _REQUIRED_STRINGS if not isinstance(meta.get(key), str)]
    if meta.get("status") not in STATUSES:
        problems.append("status")
    if not isinstance(meta.get("resumed_at"), list):
        problems.append("resumed_at")
    if problems:
        raise BlackboardError(f"refusing to write session metadata with bad fields: {', '.join(problems)}")


def write_meta(path: str, meta: Meta) -> None:
    """Validate and atomically replace ``path``; unknown fields are kept as they are."""
    validate(meta)
    text = json.dumps(meta, ensure_ascii=False) + "\n"  # one line: with an indent, json encodes in pure Python
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from hostile input (a cwd): as a JSON escape it reads back
        data = (json.dumps(meta) + "\n").encode("ascii")
    atomic_write(path, data)


def update_meta(path: str, change: Callable[[Meta], None]) -> Meta:
    """Read-modify-write under the file's lock; returns the metadata written."""
    with file_lock(path):
        meta = read_meta(path)
        if meta is None:
            raise BlackboardError(f"no session metadata at {path}; start a session first")
        change(meta)
        write_meta(path, meta)
    return meta
