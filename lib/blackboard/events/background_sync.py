"""A sync round started by a hook (``sync.start_background_round``), detached from the session.

Its stdin was read to the end first, and the hook that started it holds that pipe open
until it exits: the round's work begins once the hook is done.
"""

from __future__ import annotations

from .. import sync
from ..errors import BlackboardError
from ..ids import optional_str
from ..paths import PathResolver
from ..project import Project, safe_segment
from ..settings import Settings


def run(event: str, payload: dict[str, object], settings: Settings) -> None:
    org, name = optional_str(payload.get("org")), optional_str(payload.get("project"))
    if not org or not name or org != safe_segment(org) or name != safe_segment(name):
        raise BlackboardError(f"sync: not a project: {org!r}/{name!r}")
    resolver = PathResolver(settings.root, Project(org, name, None, "a background sync round"))
    if sync.enabled(resolver):
        sync.background_round(resolver, settings)
