"""Session identity: where a session id comes from, and which ids are safe."""

from __future__ import annotations

import os
import time

from .errors import BlackboardError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional

# ASCII only: str.isalnum() would take any script's letters and digits. paths.py uses these too.
ASCII_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
ASCII_ALNUM = ASCII_LETTERS + "0123456789"
_ID_CHARS = frozenset(ASCII_ALNUM + "._-")
ENV_VARS = ("BLACKBOARD_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID")


def is_session_id(value: object) -> bool:
    """``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` without ``..``; checked without ``re``, which a hook need not import."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 128
        and value[0] in ASCII_ALNUM
        and ".." not in value
        and all(char in _ID_CHARS for char in value)
    )


def validate_session_id(value: object) -> str:
    """Return ``value`` if it is a safe session id, else raise BlackboardError."""
    if isinstance(value, str) and is_session_id(value):
        return value
    shown = repr(value)[:60]
    raise BlackboardError(
        f"refusing session id {shown}: an id is 1-128 characters of letters, digits, '.', '_' "
        "or '-', starting with a letter or digit"
    )


def fallback_session_id() -> str:
    """A ``{utc-timestamp}-{pid}`` id for when nothing names the session."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}"


def resolve_session_id(payload_id: object, environ: Mapping[str, str]) -> str:
    """The session id from stdin ``session_id``, else the env vars in order, else the fallback."""
    if payload_id not in (None, ""):
        return validate_session_id(payload_id)
    for name in ENV_VARS:
        value: Optional[str] = environ.get(name)
        if value:
            return validate_session_id(value)
    return fallback_session_id()


def optional_str(value: object) -> Optional[str]:
    """``value`` when it is a non-empty string (untrusted JSON often is not), else None."""
    return value if isinstance(value, str) and value else None
