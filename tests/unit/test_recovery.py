import os
import time
from pathlib import Path

import pytest

from blackboard import entries, handoff, recovery, registry, session
from blackboard.meta import read_meta, update_meta
from blackboard.paths import PathResolver
from helpers import dead_pid, settings_now


def _dead_pid() -> str:
    return str(dead_pid())


def _status(resolver: PathResolver, session_id: str) -> str:
    return (read_meta(resolver.meta_path(session_id)) or {})["status"]


def test_a_session_whose_process_is_gone_is_abandoned_and_handed_off(resolver: PathResolver) -> None:
    board = session.start(resolver, "old", "startup", {}, settings_now(CLAUDE_PID=_dead_pid())).board_dir
    entries.append(os.path.join(board, "active-tasks.md"), "t", {"status": "open"}, "unfinished business")
    assert recovery.recover(resolver, "new", settings_now()) == ["old"]
    meta = read_meta(resolver.meta_path("old")) or {}
    assert meta["status"] == "abandoned"
    assert "process" in meta["end_reason"]
    assert meta["ended"]
    assert "old" not in registry.active_session_ids(resolver)
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "old"
    assert fields["status"] == "abandoned"
    assert "unfinished business" in body


def test_a_running_session_is_left_alone(resolver: PathResolver) -> None:
    session.start(resolver, "live", "startup", {}, settings_now(CLAUDE_PID=str(os.getpid())))
    assert recovery.recover(resolver, "new", settings_now()) == []
    assert _status(resolver, "live") == "active"


def test_a_pid_from_another_host_is_not_trusted(resolver: PathResolver) -> None:
    session.start(resolver, "remote", "startup", {}, settings_now(CLAUDE_PID=_dead_pid()))
    update_meta(resolver.meta_path("remote"), lambda m: m.update(host="some-other-machine"))
    assert recovery.recover(resolver, "new", settings_now()) == []


@pytest.mark.parametrize(("limit", "abandoned"), [("1h", True), ("3h", False)])
def test_inactivity_beyond_the_limit_abandons(resolver: PathResolver, limit: str, abandoned: bool) -> None:
    session.start(resolver, "idle", "startup", {}, settings_now())
    two_hours_ago = time.time() - 2 * 3600
    os.utime(resolver.meta_path("idle"), (two_hours_ago, two_hours_ago))  # activity is read from file times
    assert recovery.recover(resolver, "new", settings_now(BLACKBOARD_ABANDON_AFTER=limit)) == (
        ["idle"] if abandoned else []
    )
    assert _status(resolver, "idle") == ("abandoned" if abandoned else "active")


def test_the_current_session_is_never_abandoned(resolver: PathResolver) -> None:
    session.start(resolver, "me", "startup", {}, settings_now(CLAUDE_PID=_dead_pid()))
    assert recovery.recover(resolver, "me", settings_now()) == []


def test_abandoning_twice_happens_once(resolver: PathResolver) -> None:
    session.start(resolver, "old", "startup", {}, settings_now(CLAUDE_PID=_dead_pid()))
    assert recovery.abandon(resolver, "old", "test", settings_now())
    assert not recovery.abandon(resolver, "old", "test", settings_now())


def test_stale_markers_are_removed(resolver: PathResolver) -> None:
    session.start(resolver, "gone", "startup", {}, settings_now())
    session.end(resolver, "gone", "other", settings_now())
    Path(resolver.active_dir, "gone").touch()  # a marker a crash left behind
    Path(resolver.active_dir, "never-existed").touch()
    recovery.recover(resolver, "new", settings_now())
    assert registry.active_session_ids(resolver) == []


def test_resume_records_the_new_process(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now(CLAUDE_PID="111"))
    session.start(resolver, "s1", "resume", {}, settings_now(CLAUDE_PID="222"))
    assert (read_meta(resolver.meta_path("s1")) or {})["claude_pid"] == 222
