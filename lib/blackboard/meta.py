"""``_meta.json``: one session's metadata, lenient on read, strict on write, upgraded in one place."""

from __future__ import annotations

from . import jsonfast
from .errors import BlackboardError
from .fsutil import atomic_write, file_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Optional

    Meta = Dict[str, Any]
else:
    Meta = dict  # what mypy sees as Dict[str, Any]

SCHEMA_VERSION = 1
STATUSES = ("active", "ended", "abandoned")
_DEFAULTS: Dict[str, Any] = {
    "status": "active",
    "started": None,
    "ended": None,
    "end_reason": None,
    "last_activity": None,
    "cwd": None,
    "git_branch": None,
    "parent_session_id": None,
    "resumed_at": [],
    "source": None,
}
_STRING_FIELDS = ("session_id", "org", "project", *(key for key in _DEFAULTS if key != "resumed_at"))


def new_meta(session_id: str, org: str, project: str, now: str, **fields: Any) -> Meta:
    """A fresh ``active`` session's metadata."""
    meta: Meta = {"schema_version": SCHEMA_VERSION, "session_id": session_id, "project": project, "org": org}
    meta.update(_DEFAULTS, resumed_at=[], started=now, last_activity=now)
    meta.update(fields)
    return meta


def read_meta(path: str) -> Optional[Meta]:
    """The metadata at ``path`` upgraded to the current schema; None when the file is missing."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = jsonfast.loads(handle.read())
    except FileNotFoundError:
        return None
    except OSError as exc:  # not the file's fault: the root is broken (a file, a loop, no permission)
        raise BlackboardError(f"cannot read {path}: {exc.strerror}; `blackboard doctor` checks the root") from None
    except ValueError as exc:
        raise BlackboardError(f"corrupt {path}: {exc}; run `blackboard doctor` to repair it") from None
    if not isinstance(data, dict):
        raise BlackboardError(f"corrupt {path}: not a JSON object; run `blackboard doctor` to repair it")
    return upgrade(data, path)


def read_meta_or_none(path: str) -> Optional[Meta]:
    """Like ``read_meta`` but a damaged file reads as None: for listings that must go on."""
    try:
        return read_meta(path)
    except BlackboardError:
        return None


def upgrade(data: Meta, path: str = "_meta.json") -> Meta:
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
    for key, default in _DEFAULTS.items():
        data.setdefault(key, list(default) if isinstance(default, list) else default)
    wrong = [key for key in _STRING_FIELDS if data.get(key) is not None and not isinstance(data[key], str)]
    wrong += [] if isinstance(data["resumed_at"], list) else ["resumed_at"]
    if wrong:  # lenient about what is missing, not about what is mangled: every reader trusts these types
        raise BlackboardError(
            f"corrupt {path}: wrong type for {', '.join(wrong)}; run `blackboard doctor` to repair it"
        )
    data["schema_version"] = SCHEMA_VERSION
    return data


def validate(meta: Meta) -> None:
    """Raise BlackboardError unless ``meta`` is fit to be written."""
    problems = [k for k in ("session_id", "project", "org", "started") if not isinstance(meta.get(k), str)]
    if meta.get("status") not in STATUSES:
        problems.append("status")
    if not isinstance(meta.get("resumed_at"), list):
        problems.append("resumed_at")
    if problems:
        raise BlackboardError(f"refusing to write session metadata with bad fields: {', '.join(problems)}")


def write_meta(path: str, meta: Meta) -> None:
    """Validate and atomically replace ``path``; unknown fields are kept as they are."""
    validate(meta)
    text = jsonfast.dumps(meta, indent=2, ensure_ascii=False) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from hostile input (a cwd): as a JSON escape it reads back
        data = (jsonfast.dumps(meta, indent=2) + "\n").encode("ascii")
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
