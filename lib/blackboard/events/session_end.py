"""SessionEnd: the session's end and its handoff; a project that syncs starts a round, never waiting on it."""

from __future__ import annotations

import os

from .. import session
from ..hook import STARTED
from ..ids import optional_str
from ..settings import Settings
from . import board_of


def run(event: str, payload: dict[str, object], settings: Settings) -> None:
    resolver, session_id = board_of(payload, settings, new_session=False)
    reason = (optional_str(payload.get("reason")) or "other")[:64]
    # git is asked until end_git_timeout after the hook started (0.2 s): in a checkout of 200 000
    # files, where git takes longer, the handoff says git could not tell in time
    session.end(resolver, session_id, reason, settings, git_by=STARTED + settings.end_git_timeout)
    if os.path.isfile(resolver.sync_file("config.json")):
        from .. import sync  # 43 ms to import: only a project that syncs pays for it (ADR 27)

        sync.start_background_round(resolver, settings)  # Claude Code cancels SessionEnd after about 1.5 s
