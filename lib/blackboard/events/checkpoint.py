"""Stop (after every turn) and PreCompact: the draft handoff, so a session that never ends still hands off."""

from __future__ import annotations

from .. import session
from ..settings import Settings
from . import board_of, log_failure
from .capture import capture


def run(event: str, payload: dict[str, object], settings: Settings) -> None:
    resolver, session_id = board_of(payload, settings, new_session=False)
    if event == "stop":
        try:
            capture(event, resolver, session_id, payload, settings)
        except Exception:  # noqa: BLE001 - a digest that could not take the message must not cost the checkpoint
            log_failure(event, settings)
    # The HEAD its turn left is not taken as seen here: a move by another session during the turn would pass
    # for the session's own. Its own moves are recorded after each of its shell commands (``capture``).
    session.checkpoint(resolver, session_id, settings)
