"""Session identity: where a session id comes from, and which ids are safe."""

import os
import re
import time
from typing import Mapping, Optional

from .errors import BlackboardError

SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
ENV_VARS = ("BLACKBOARD_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "CLAUDE_SESSION_ID")


def validate_session_id(value: object) -> str:
    """Return ``value`` if it is a safe session id, else raise BlackboardError."""
    if isinstance(value, str) and SESSION_ID_PATTERN.fullmatch(value) and ".." not in value:
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
