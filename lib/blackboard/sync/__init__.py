"""Boards and handoffs travel between machines through the project's own git remote (ADR 19).

The remote holds ``refs/blackboard/{org}/{project}``: commits whose tree is the local layout,

    sessions/{id}/_meta.json, active-tasks.md, session-notes.md, shared-context.md
    handoff/handoff-{id}.md
    removed/{id}          a session a cleanup removed: never imported again
    active/{host}.json    a machine's active sessions, a light record

Each machine pushes its own finished sessions, redacted, and imports everyone else's. A
merge is a union of disjoint folders; a rejected push fetches, merges and tries again.
What comes from the remote is untrusted: checked, bounded, never followed or executed.

The modules, each one job: ``config`` (opting in), ``state`` (what this machine knows of
the remote), ``inbound`` (checking what the remote holds, without disk or git),
``remote`` (fetching and pushing), ``importing`` (moving accepted sessions in),
``outbound`` (what this machine sends) and ``round`` (a round, and the rounds hooks start).
"""

from .config import disable, enable, enabled, readers_warning, remote_ref, remote_url
from .outbound import record_removal
from .round import (
    Round,
    background_round,
    finish_fetch,
    round_waiting,
    start_background_round,
    start_fetch,
    status,
    status_lines,
    sync_round,
)
from .state import State, StatePaused

__all__ = [
    "Round",
    "State",
    "StatePaused",
    "background_round",
    "disable",
    "enable",
    "enabled",
    "finish_fetch",
    "readers_warning",
    "record_removal",
    "remote_ref",
    "remote_url",
    "round_waiting",
    "start_background_round",
    "start_fetch",
    "status",
    "status_lines",
    "sync_round",
]
