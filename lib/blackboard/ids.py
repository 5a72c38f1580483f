"""Session identity: where a session id comes from, and which ids are safe."""

from __future__ import annotations

import os
import re

from .clock import compact_now
from .errors import BlackboardError

# ASCII only (no \w): a path component every file system and shell takes as it is.
SESSION_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
LITTER = (".ds_store", "thumbs.db", "desktop.ini")  # what Finder and Explorer leave in any folder they open
# No litter name, in any case: thousands of ids are checked in a round, so the regex says it
_SESSION_ID = re.compile(rf"(?!(?i:{'|'.join(map(re.escape, LITTER))})\Z){SESSION_ID}")


def is_litter(name: str) -> bool:
    """A file an operating system leaves in any folder (``.DS_Store``, ``._*``…): no session, and no damage.

    Any case: a file system that ignores it makes ``THUMBS.DB`` the same file.
    """
    return name.lower() in LITTER or name.startswith("._")


def is_session_id(value: object) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` without ``..``, and no name of an operating system's litter."""
    return isinstance(value, str) and _SESSION_ID.fullmatch(value) is not None and ".." not in value


def validate_session_id(value: object) -> str:
    """Return ``value`` if it is a safe session id, else raise BlackboardError."""
    if isinstance(value, str) and is_session_id(value):
        return value
    raise BlackboardError(
        f"refusing session id {repr(value)[:60]}: an id is 1-128 characters of letters, digits, '.', '_' "
        "or '-', starting with a letter or digit"
    )


def fallback_session_id() -> str:
    """A ``{utc-timestamp}-{pid}`` id for when nothing names the session."""
    return f"{compact_now()}-{os.getpid()}"


def resolve_session_id(payload_id: object, named: tuple[str, str] | None) -> str:
    """The session id from stdin ``session_id``, else the one the environment ``named``, else the fallback.

    ``named`` is ``Settings.named_session``: the first of ``SESSION_ID_VARS`` that is set.
    """
    if payload_id not in (None, ""):
        return validate_session_id(payload_id)
    if named is not None:
        return validate_session_id(named[1])
    return fallback_session_id()


def optional_str(value: object) -> str | None:
    """``value`` when it is a non-empty string (untrusted JSON often is not), else None."""
    return value if isinstance(value, str) and value else None
