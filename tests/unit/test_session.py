import json
import os
from pathlib import Path

from blackboard import board, handoff, registry, session, summary
from blackboard.paths import PathResolver
from helpers import settings_now


def _meta(resolver: PathResolver, session_id: str) -> dict:
    return json.loads(Path(resolver.meta_path(session_id)).read_text())


def test_startup_creates_the_board(resolver: PathResolver) -> None:
    started = session.start(
        resolver, "s1", "startup", {"cwd": "/w", "transcript_path": "/t.jsonl"}, settings_now(CLAUDE_PID="4242")
    )
    names = ["_meta.json", "active-tasks.md", "session-notes.md", "shared-context.md"]
    assert sorted(os.listdir(started.board_dir)) == names  # mnemonic's ADR-011 layout, from the start
    assert os.path.isdir(resolver.get_handoff_dir())
    assert (Path(started.board_dir) / "session-notes.md").read_text().startswith("# Session notes — session s1\n")
    meta = _meta(resolver, "s1")
    assert meta["status"] == "active"
    assert meta["source"] == "startup"
    assert meta["cwd"] == "/w"
    assert meta["git_branch"] == "main"
    assert meta["claude_pid"] == 4242
    assert not started.reopened
    assert registry.active_session_ids(resolver) == ["s1"]


def test_resume_of_the_same_id_reopens(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "prompt_input_exit", settings_now())
    started = session.start(resolver, "s1", "resume", {}, settings_now())
    meta = _meta(resolver, "s1")
    assert started.reopened
    assert meta["status"] == "active"
    assert meta["ended"] is None
    assert len(meta["resumed_at"]) == 1
    assert registry.active_session_ids(resolver) == ["s1"]


def test_resume_with_a_new_id_links_the_parent(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "prompt_input_exit", settings_now())
    session.start(resolver, "s2", "resume", {}, settings_now())
    assert _meta(resolver, "s2")["parent_session_id"] == "s1"


def test_clear_links_the_session_that_just_ended_with_clear(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "clear", settings_now())
    session.start(resolver, "s2", "clear", {}, settings_now())
    assert _meta(resolver, "s2")["parent_session_id"] == "s1"


def test_clear_before_the_old_session_finished_ending_links_it_by_process(resolver: PathResolver) -> None:
    session.start(resolver, "other", "startup", {}, settings_now(CLAUDE_PID="555"))  # a parallel Claude Code
    session.start(resolver, "s1", "startup", {}, settings_now(CLAUDE_PID="777"))
    session.start(resolver, "s2", "clear", {}, settings_now(CLAUDE_PID="777"))
    assert _meta(resolver, "s2")["parent_session_id"] == "s1"


def test_an_old_clear_handoff_is_not_taken_for_the_parent(resolver: PathResolver) -> None:
    fields = {"session_id": "long-ago", "ended": "2026-01-01T00:00:00Z", "end_reason": "clear"}
    handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + "body\n")
    session.start(resolver, "s2", "clear", {}, settings_now(CLAUDE_PID="777"))
    assert _meta(resolver, "s2")["parent_session_id"] is None


def test_resume_links_the_last_ended_session_not_a_parallel_active_one(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "prompt_input_exit", settings_now())
    session.start(resolver, "parallel", "startup", {}, settings_now())
    session.start(resolver, "s2", "resume", {}, settings_now())
    assert _meta(resolver, "s2")["parent_session_id"] == "s1"


def test_startup_has_no_parent(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.start(resolver, "s2", "startup", {}, settings_now())
    assert _meta(resolver, "s2")["parent_session_id"] is None


def test_compact_keeps_the_same_session(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    started = session.start(resolver, "s1", "compact", {}, settings_now())
    meta = _meta(resolver, "s1")
    assert started.reopened
    assert meta["resumed_at"] == []
    assert meta["status"] == "active"


def test_checkpoint_refreshes_a_draft_and_never_ends(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.checkpoint(resolver, "s1", settings_now())
    assert _meta(resolver, "s1")["status"] == "active"
    fields, _ = handoff.read_handoff(resolver.handoff_path("s1")) or ({}, "")
    assert fields["status"] == "active"
    assert not os.path.exists(resolver.latest_handoff_path())


def test_end_marks_ended_and_publishes(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "logout", settings_now())
    meta = _meta(resolver, "s1")
    assert meta["status"] == "ended"
    assert meta["end_reason"] == "logout"
    assert meta["ended"]
    assert registry.active_session_ids(resolver) == []
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "s1"
    assert fields["status"] == "ended"


def test_events_for_an_unknown_session_write_nothing(resolver: PathResolver) -> None:
    assert session.checkpoint(resolver, "ghost", settings_now()) is None
    assert session.end(resolver, "ghost", "other", settings_now()) is None
    assert not os.path.exists(resolver.project_dir)


def test_a_fork_links_the_session_it_came_from(resolver: PathResolver) -> None:
    session.start(resolver, "s1", "startup", {}, settings_now())
    session.end(resolver, "s1", "other", settings_now())
    session.start(resolver, "s2", "fork", {}, settings_now())
    meta = _meta(resolver, "s2")
    assert meta["source"] == "fork"
    assert meta["parent_session_id"] == "s1"


def test_a_board_file_starts_with_its_header_and_first_entry(resolver: PathResolver) -> None:
    started = session.start(resolver, "s1", "startup", {}, settings_now())
    board.Board(resolver, "s1").add_task("write the parser", "main")
    text = (Path(started.board_dir) / "active-tasks.md").read_text()
    assert text.startswith("# Active tasks — session s1\n")
    assert "\n## t1\n" in text
    assert text.count("# Active tasks") == 1


def test_a_stop_straddling_the_end_leaves_the_final_handoff(resolver: PathResolver, monkeypatch) -> None:
    """Stop read the session active, then SessionEnd ran whole before Stop wrote its draft."""
    session.start(resolver, "s1", "startup", {}, settings_now())
    draft = summary.handoff_text

    def draft_then_end(resolver: PathResolver, meta: dict, *args: object, **kwargs: object) -> str:
        text = draft(resolver, meta, *args, **kwargs)
        if meta["status"] == "active":
            monkeypatch.setattr(summary, "handoff_text", draft)
            session.end(resolver, "s1", "other", settings_now())
        return text

    monkeypatch.setattr(summary, "handoff_text", draft_then_end)
    session.checkpoint(resolver, "s1", settings_now())
    fields, _ = handoff.read_handoff(resolver.handoff_path("s1")) or ({}, "")
    assert fields["status"] == "ended"


def test_boards_and_handoffs_are_private_whatever_the_umask(resolver: PathResolver, root: Path) -> None:
    """Files 0600 and folders 0700, even with a umask that takes nothing away."""
    old = os.umask(0)
    try:
        session.start(resolver, "s1", "startup", {}, settings_now())
        board.Board(resolver, "s1").note("a finding", "main")
        board.Board(resolver, "s1").add_task("a task", "main")
        session.end(resolver, "s1", "other", settings_now())
    finally:
        os.umask(old)
    made = [p for p in root.rglob("*")]
    assert made
    loose = [(str(p), oct(p.stat().st_mode & 0o777)) for p in made if p.stat().st_mode & 0o077]
    assert loose == []
