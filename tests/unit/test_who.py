"""Who is here, as text: the lines SessionStart and `blackboard who` show (docs/adr/0029-live-sessions.md)."""

from __future__ import annotations

import time
from pathlib import Path

from blackboard import who
from blackboard.live import Presence


def _neighbour(project: Path, n: int, files: int) -> who.Neighbour:
    presence = Presence()
    presence.request = f"session {n}: refactor the module"
    presence.head = (str(project), "main", "a" * 40)
    presence.edits = {(str(project), f"src/module_{n}_{k}.py"): time.time() - k for k in range(files)}
    return who.Neighbour({"session_id": f"live-{n:02d}"}, presence, {})


def test_with_room_only_whole_neighbours_that_fit_are_written_and_the_rest_counted(project: Path) -> None:
    found = [_neighbour(project, n, 20) for n in range(8)]
    whole = who.lines(found, 30, str(project))
    assert sum(line.startswith("- live-") for line in whole) == 8 and whole[-1].startswith("- … and 22 more")
    shown = who.lines(found, 30, str(project), files=3, room=700)
    assert len("\n".join(shown)) <= 700
    written = [line for line in shown if line.startswith("- live-")]
    assert 1 <= len(written) < 8
    assert shown[-1] == f"- … and {30 - len(written)} more (`blackboard who` lists them all)"
    edited = [line for line in shown if line.startswith("  edited: ")]
    assert all(line.count('"src/') == 3 and line.endswith(", and 17 more") for line in edited)


def test_room_for_none_still_counts_them(project: Path) -> None:
    assert who.lines([_neighbour(project, 0, 2)], 1, str(project), room=10) == [
        "- … and 1 more (`blackboard who` lists them all)"
    ]
