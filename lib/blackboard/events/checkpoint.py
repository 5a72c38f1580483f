"""Stop (after every turn) and PreCompact: the draft handoff, so a session that never ends still hands off."""

from __future__ import annotations

import os

from .. import session
from ..guard import see_head
from ..meta import ACTIVE
from ..settings import Settings
from . import board_of, log_failure, usable_path
from .capture import capture


def run(event: str, payload: dict[str, object], settings: Settings) -> None:
    resolver, session_id = board_of(payload, settings, new_session=False)
    if event == "stop":
        try:
            capture(event, resolver, session_id, payload, settings)
        except Exception:  # noqa: BLE001 - a digest that could not take the message must not cost the checkpoint
            log_failure(event, settings)
    meta = session.checkpoint(resolver, session_id, settings)
    if event == "stop" and meta is not None and meta["status"] == ACTIVE:
        see_head(resolver, session_id, usable_path(payload.get("cwd")) or os.getcwd())  # the HEAD its turn left
