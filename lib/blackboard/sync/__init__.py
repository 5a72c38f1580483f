"""Boards and handoffs travel between machines through the project's own git remote (ADR 19, ADR 30).

Each machine writes one ref per project, ``refs/blackboard-machines/{org}/{project}/{machine-id}``,
and is its only writer: a push is a compare-and-swap on what it pushed last. Its tree holds the
sessions this machine wrote, its newest to a bound,

    sessions/{id}/_meta.json, active-tasks.md, session-notes.md, shared-context.md
    handoff/handoff-{id}.md
    active.json           this machine's active sessions, a light record

redacted, with no path of this machine. Every other machine's ref is read, read-only, and what
it holds is kept here under that machine's id (``machines``): nothing read can replace, merge
into or remove what this machine wrote. What comes from the remote is untrusted: checked,
bounded, never followed or executed.

The modules, each one job: ``config`` (opting in), ``state`` (what this machine knows of the
remote), ``inbound`` (checking what a ref holds, without disk or git), ``remote`` (listing,
fetching), ``importing`` (keeping accepted sessions under their machine's id), ``outbound``
(what this machine's ref holds) and ``round`` (a round, and the rounds hooks start).
"""

from .config import disable, enable, enabled, legacy_ref, readers_warning, remote_ref, remote_url
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
    "legacy_ref",
    "readers_warning",
    "remote_ref",
    "remote_url",
    "round_waiting",
    "start_background_round",
    "start_fetch",
    "status",
    "status_lines",
    "sync_round",
]
