import os
import re
import time
from pathlib import Path

import frontmatter
import pytest

from blackboard import entries, handoff, render, session, summary
from blackboard.meta import read_meta
from blackboard.paths import BOARD_FILES, PathResolver
from helpers import settings_now

KEYS = {
    "session_id",
    "org",
    "project",
    "status",
    "started",
    "ended",
    "end_reason",
    "parent_session_id",
    "git_branch",
    "open_tasks",
    "done_tasks",
    "notes",
}


def _board(resolver: PathResolver, session_id: str = "s1") -> str:
    return session.start(resolver, session_id, "startup", {"cwd": "/w"}, settings_now()).board_dir


def _file(board: str, kind: str) -> str:
    return os.path.join(board, BOARD_FILES[kind])


def test_handoff_front_matter_and_sections_in_order(resolver: PathResolver) -> None:
    board = _board(resolver)
    entries.append(_file(board, "tasks"), "t", {"status": "open", "author": "main", "claimed_by": "w1"}, "Open one")
    entries.append(_file(board, "tasks"), "t", {"status": "done", "author": "main"}, "Done one")
    entries.put(_file(board, "context"), "schema", {"author": "w1"}, "schema v2")
    entries.append(_file(board, "notes"), "n", {"author": "main", "at": "2026-11-22T10:00:00Z"}, "Chose SQLite")
    session.start(resolver, "s2", "startup", {"cwd": "/w"}, settings_now())
    meta = session.end(resolver, "s1", "clear", settings_now())
    assert meta is not None

    post = frontmatter.load(resolver.handoff_path("s1"))
    assert set(post.metadata) >= KEYS
    assert post["session_id"] == "s1"
    assert post["status"] == "ended"
    assert post["end_reason"] == "clear"
    assert (post["open_tasks"], post["done_tasks"], post["notes"]) == (1, 1, 1)
    body = post.content
    order = [
        "## What was asked",
        "## Where it stopped",
        "## Open work",
        "**t1** Open one — claimed by w1 (from the board)",
        "## What changed",
        "## Tasks closed this session",
        "Done one — done",
        "## Shared context",
        "schema v2",
        "## Notes, newest first",
        "Chose SQLite",
        "## Sessions still active in this project",
        "s2",
    ]
    positions = [body.index(part) for part in order]
    assert positions == sorted(positions)


def test_our_front_matter_reads_the_same_with_python_frontmatter(resolver: PathResolver) -> None:
    _board(resolver)
    session.end(resolver, "s1", "other", settings_now())
    text = Path(resolver.handoff_path("s1")).read_text()
    fast, body = handoff.split_front_matter(text)
    post = frontmatter.loads(text)
    assert fast == post.metadata
    assert body.strip() == post.content.strip()


def test_hand_written_yaml_front_matter_is_read(tmp_path: Path) -> None:
    text = "---\nsession_id: abc\nended: '2026-11-22T10:00:00Z'\ntags:\n  - a\n---\nbody\n"
    fields, body = handoff.split_front_matter(text)
    assert fields == {"session_id": "abc", "ended": "2026-11-22T10:00:00Z", "tags": ["a"]}
    assert body.strip() == "body"


def test_unreadable_front_matter_is_treated_as_none() -> None:
    fields, body = handoff.split_front_matter("---\n: : [\n---\nbody\n")
    assert fields == {}
    assert "body" in body


def test_handoff_is_bounded_and_reads_only_the_tail(resolver: PathResolver, monkeypatch) -> None:
    from blackboard import fsutil

    board = _board(resolver)
    notes = _file(board, "notes")
    with open(notes, "a") as handle:  # ~30 MB of old notes, then a recent one
        chunk = "".join(entries.render(f"n{i}", {"author": "main"}, "x" * 3000) for i in range(1, 1001))
        for _ in range(10):
            handle.write(chunk)
    entries.append(notes, "n", {"author": "main"}, "the most recent note")
    read = []

    def counting_open(*args, **kwargs):
        handle = open(*args, **kwargs)  # noqa: SIM115 - returned to the code under test, which closes it
        original = handle.read
        handle.read = lambda *a: read.append(len(data := original(*a))) or data  # type: ignore[method-assign]
        return handle

    monkeypatch.setattr(fsutil, "open", counting_open, raising=False)
    text = summary.handoff_text(resolver, read_meta(resolver.meta_path("s1")), settings_now())
    assert len(text.encode()) <= handoff.MAX_HANDOFF_BYTES + 100
    assert "the most recent note" in text
    assert "notes: 1001" in text.replace('"', "")
    assert sum(read) < 2 * 1024 * 1024  # the 30 MB file was not read whole


def test_a_secret_across_the_item_cut_is_not_half_shown(resolver: PathResolver) -> None:
    board = _board(resolver)
    token = "ghp_" + "A1b2C3d4E5" * 4
    text = "x" * (render.MAX_ITEM_CHARS - 10) + " " + token
    entries.append(_file(board, "notes"), "n", {"author": "main"}, text)
    built = summary.handoff_text(resolver, read_meta(resolver.meta_path("s1")), settings_now())
    assert token[:12] not in built


def test_hand_written_yaml_dates_do_not_break_publishing(resolver: PathResolver) -> None:
    Path(resolver.get_handoff_dir()).mkdir(parents=True)
    Path(resolver.latest_handoff_path()).write_text("---\nsession_id: hand\nended: 2099-01-01 10:00:00\n---\nbody\n")
    assert not _publish(resolver, "s9", "2026-11-22T10:00:00Z")  # 2099 is newer; s9 joins its chain
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "hand"
    assert fields["previous_sessions"] == ["s9"]


def test_an_unparsable_ended_never_pins_the_latest(resolver: PathResolver) -> None:
    _publish(resolver, "legacy", "Mon Nov 2 09:05 2026")
    assert _publish(resolver, "real", "2026-01-01T00:00:00Z")


def _publish_at(root: str, session_id: str, ended: str) -> None:
    from blackboard.paths import PathResolver as Resolver
    from blackboard.project import Project

    resolver = Resolver(root, Project("acme", "widget", None, "test"))
    handoff.publish_latest(resolver, handoff.dump_front_matter({"session_id": session_id, "ended": ended}) + "b\n")


def test_concurrent_publishers_leave_the_newest_and_chain_the_rest(resolver: PathResolver) -> None:
    import multiprocessing
    import random

    times = [f"2026-11-22T10:00:{second:02d}Z" for second in range(8)]
    order = list(range(8))
    random.shuffle(order)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_publish_at, args=(resolver.root, f"s{i}", times[i])) for i in order]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "s7"
    assert sorted(fields["previous_sessions"]) == [f"s{i}" for i in range(7)]


def test_secrets_never_reach_the_handoff(resolver: PathResolver) -> None:
    board = _board(resolver)
    secret = "sk-ant-api03-" + "Z" * 40
    entries.append(_file(board, "notes"), "n", {"author": "main"}, f"key is {secret}")
    entries.put(_file(board, "context"), "auth", {"author": "main"}, f"Bearer {'q' * 30}")
    session.end(resolver, "s1", "other", settings_now())
    text = Path(resolver.handoff_path("s1")).read_text()
    assert secret not in text
    assert "q" * 30 not in text
    assert "[REDACTED]" in text


def _publish(resolver: PathResolver, session_id: str, ended: str) -> bool:
    fields = {"session_id": session_id, "ended": ended}
    return handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + f"\nbody of {session_id}\n")


def test_latest_is_never_replaced_by_an_older_handoff(resolver: PathResolver) -> None:
    assert _publish(resolver, "new", "2026-11-22T10:00:05Z")
    assert not _publish(resolver, "old", "2026-11-22T10:00:01Z")
    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "new"
    assert "body of new" in body
    assert fields["previous_sessions"] == ["old"]  # the late one stays reachable


def test_a_newer_handoff_replaces_and_links_the_older(resolver: PathResolver) -> None:
    _publish(resolver, "a", "2026-11-22T10:00:01Z")
    _publish(resolver, "b", "2026-11-22T10:00:02Z")
    _publish(resolver, "c", "2026-11-22T10:00:03Z")
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "c"
    assert fields["previous_sessions"] == ["b", "a"]


@pytest.mark.parametrize("order", [("x", "y"), ("y", "x")], ids=["x-first", "y-first"])
def test_same_second_ties_resolve_the_same_whatever_the_order(resolver: PathResolver, order: tuple) -> None:
    for session_id in order:
        _publish(resolver, session_id, "2026-11-22T10:00:00Z")
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "y"
    assert fields["previous_sessions"] == ["x"]


def _at(days: float) -> str:
    import time

    from blackboard.clock import format_utc

    return format_utc(time.time() + days * 86400)


def test_a_clock_running_ahead_cannot_pin_the_latest_handoff(resolver: PathResolver) -> None:
    _publish(resolver, "skewed", _at(30))  # its machine thought it was next month
    latest = Path(resolver.latest_handoff_path())
    published = re.search(r'published: "([^"]+)"', latest.read_text())
    assert published is not None
    latest.write_text(latest.read_text().replace(published.group(1), _at(-1 / 24)))  # it arrived an hour ago
    assert _publish(resolver, "honest", _at(0)) is True
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "honest"
    assert fields["previous_sessions"] == ["skewed"]


def test_a_legacy_file_stamped_2999_is_newer_only_until_a_real_session_ends(resolver: PathResolver) -> None:
    from test_migrate import _where

    from blackboard import migrate

    board = Path(resolver.project_dir)
    board.mkdir(parents=True)
    (board / "session-notes.md").write_text("---\n**Session:** ../../etc\n**Time:** 2999-12-31T00:00:00Z\n\nold\n")
    migrate.migrate_if_needed(resolver, *_where(resolver), os.environ)
    seeded, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert seeded["session_id"] == "legacy"  # a hostile id from a legacy file is not taken as one

    board = session.start(resolver, "real", "startup", {}, settings_now()).board_dir
    entries.append(_file(board, "notes"), "n", {"author": "main"}, "the legacy notes are read")  # it did something
    session.end(resolver, "real", "other", settings_now())

    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["session_id"] == "real"


def test_front_matter_fields_are_redacted(resolver: PathResolver) -> None:
    from blackboard.meta import update_meta

    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    session.start(resolver, "s1", "startup", {}, settings_now())
    update_meta(resolver.meta_path("s1"), lambda m: m.update({"git_branch": f"hotfix/{token}"}))
    session.end(resolver, "s1", f"other {token}", settings_now())

    text = Path(resolver.handoff_path("s1")).read_text()
    assert token not in text
    fields, _ = handoff.split_front_matter(text)
    assert fields["git_branch"] == "hotfix/[REDACTED]"


def _ledger_handoff(session_id: str, ended: str, open_work: list, closed: list) -> str:
    fields = {"session_id": session_id, "ended": ended, "open_work": open_work, "closed_work": closed}
    return (
        handoff.dump_front_matter(fields)
        + f"\n# Handoff from session {session_id}\n\n## Open work\n\n_none_\n\n## Notes\n"
    )


def test_a_handoff_arriving_late_adds_its_open_work_and_its_closings_to_the_latest(resolver: PathResolver) -> None:
    """Another machine's older handoff, imported by sync after a newer local one was published."""
    newer = _ledger_handoff(
        "b", "2026-11-22T12:00:00Z", [{"key": "b/t1", "text": "from b"}, {"key": "a/t2", "text": "x"}], []
    )
    older = _ledger_handoff("c", "2026-11-22T11:00:00Z", [{"key": "c/t1", "text": "from c"}], ["a/t2"])
    assert handoff.publish_latest(resolver, newer)
    assert not handoff.publish_latest(resolver, older)

    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")

    assert fields["session_id"] == "b"
    assert [item["key"] for item in fields["open_work"]] == ["b/t1", "c/t1"]
    assert fields["closed_work"] == ["a/t2"] and fields["open_tasks"] == 2
    assert "from c (carried from session c, the board)" in body and "## Notes" in body  # the section is rendered again


def test_front_matter_the_plugin_did_not_write_cannot_smuggle_structures(resolver: PathResolver) -> None:
    text = handoff.dump_front_matter({"session_id": "x", "ended": {"not": "a scalar"}}) + "\nbody"
    with pytest.raises(ValueError):
        handoff.split_front_matter(text, yaml_allowed=False)
    fields, _ = handoff.split_front_matter(
        handoff.dump_front_matter({"open_work": [{"key": "x/t1"}]}), yaml_allowed=False
    )
    assert fields["open_work"] == [{"key": "x/t1"}]


def test_front_matter_nested_past_reason_is_no_front_matter_and_never_reaches_yaml(resolver: PathResolver) -> None:
    """PyYAML overflows the C stack (a segfault, no exception) on 100 000 nested lists."""
    bomb = '---\nsession_id: "x"\nopen_work: ' + "[" * 100_000 + "]" * 100_000 + "\n---\nbody\n"
    assert handoff.split_front_matter(bomb) == ({}, bomb)
    with pytest.raises(ValueError):
        handoff.split_front_matter(bomb, yaml_allowed=False)
    yaml_bomb = "---\nsession_id: x\nopen_work: " + "[" * 5000 + "\n---\nbody\n"  # not JSON: would go to PyYAML
    assert handoff.split_front_matter(yaml_bomb) == ({}, yaml_bomb)


@pytest.mark.parametrize("epoch", [float("nan"), float("inf"), -1e300, 1e300, -5])
def test_an_end_that_is_no_time_is_read_from_ended_instead(epoch: float) -> None:
    assert handoff.ended_at({"ended_epoch": epoch, "ended": "2026-11-22T10:00:00Z"}) == 1795341600.0


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("first\r## Open work\r- FORGED", id="cr"),
        pytest.param("first\r\n## Open work\r\n- FORGED", id="crlf"),
        pytest.param("first\n## Open work\n- **t9** FORGED", id="lf"),
        pytest.param("first\u2028## Open work\u2028- FORGED", id="line-separator"),
        pytest.param("first\n> quoted\n1. numbered\n```\n", id="other-blocks"),
    ],
)
def test_an_item_cannot_open_a_heading_list_or_block_of_its_own(text: str) -> None:
    rendered = render.bullet(text)
    assert rendered.startswith("- first")
    for line in re.split("\r\n|[\n\r\u2028]", rendered)[1:]:  # however a reader splits lines
        assert line.startswith("  \\"), line


def test_a_resumed_sessions_own_word_reaches_the_latest_handoff(resolver: PathResolver, tmp_path: Path) -> None:
    """Claude Code deleted a task of the session's own list; publishing must not bring it back."""
    environ = settings_now(CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    task = tmp_path / "claude" / "tasks" / "a1" / "2.json"
    task.parent.mkdir(parents=True)
    task.write_text('{"subject": "quote the escapes", "status": "pending"}')
    session.start(resolver, "a1", "startup", {}, environ)  # its Claude Code keeps its list there, start to end
    session.end(resolver, "a1", "other", environ)
    assert [i["key"] for i in handoff.read_handoff(resolver.latest_handoff_path())[0]["open_work"]] == ["a1/cc2"]

    session.start(resolver, "a1", "resume", {}, environ)
    task.unlink()
    session.end(resolver, "a1", "other", environ)

    fields, body = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert fields["open_work"] == [] and "a1/cc2" in fields["closed_work"]
    assert "quote the escapes" not in body


def test_a_handoff_at_its_largest_keeps_its_front_matter_whole(resolver: PathResolver) -> None:
    """Wide characters in a hundred open items, five hundred closings, fifty long paths: the cut falls in the body,
    and every open item is kept whole (issue 32, point 9): the open work has room of its own."""
    from blackboard.summary import bounded

    open_work = [{"key": f"s{i}/t{i}", "text": "修复转义字符的处理" * 22, "status": "open"} for i in range(100)]
    closed = [f"{'c' * 36}{i}/t{i}" for i in range(500)]
    files = [{"path": "目录/" * 100 + f"{i}.py", "edits": 1} for i in range(50)]
    fields = {"session_id": "s1", "open_work": open_work, "closed_work": closed, "changed": {"files": files}}

    text = bounded(fields, "# Handoff from session s1\n\n" + "body line\n" * 20_000, "", "")

    open_work_line = next(line for line in text.split("\n") if line.startswith("open_work: "))
    assert len(text.encode()) - len(open_work_line.encode()) <= handoff.MAX_HANDOFF_BYTES + 64
    parsed, body = handoff.split_front_matter(text, yaml_allowed=False)
    assert parsed["open_work"] == open_work
    assert parsed["session_id"] == "s1" and body.startswith("\n# Handoff from session s1")


def test_open_work_past_its_room_keeps_the_newest_and_counts_the_oldest_it_leaves_out() -> None:
    """Past ``ledger.MAX_BYTES`` (thousands of items), texts are shortened first, then the oldest give way, counted."""
    from blackboard import ledger

    items = [{"key": f"{'s' * 36}/t{i}", "text": f"item {i} " + "x" * 190, "status": "open"} for i in range(12_000)]
    fields: dict = {"open_work": items, "open_work_cut": 5}

    assert handoff.fit_open_work(fields)

    kept = fields["open_work"]
    assert 5000 < len(kept) < 12_000 and [i["key"] for i in kept] == [i["key"] for i in items[: len(kept)]]
    assert all(len(i["text"]) <= handoff.SHORT_TEXT for i in kept) and kept[0]["text"].startswith("item 0 ")
    assert fields["open_work_cut"] == 5 + 12_000 - len(kept)
    line = handoff.dump_front_matter(fields).split("\n")[1]
    assert len(line.encode()) <= ledger.MAX_BYTES + len("open_work: ")
    assert not handoff.fit_open_work({"open_work": items[:1000]})  # a thousand items fit as they are


@pytest.mark.parametrize(
    ("char", "read"),
    [("\x85", "\x85"), ("\u2028", "\u2028"), ("\x9b", "\x9b"), ("\ufffe", "\ufffe"), ("\ud83d", "\ufffd")],
)
def test_front_matter_reads_the_same_with_yaml_whatever_the_characters(char: str, read: str) -> None:
    text = handoff.dump_front_matter({"session_id": "s1", "stopped": f"a{char}b"}) + "body"
    ours, _ = handoff.split_front_matter(text)
    assert ours["stopped"] == f"a{read}b"
    assert frontmatter.loads(text.encode("utf-8").decode()).metadata["stopped"] == f"a{read}b"


def test_a_forged_generation_and_an_end_ahead_do_not_pin_the_latest(resolver: PathResolver) -> None:
    """A remote's handoff at the highest generation, ending 55 minutes ahead, arrived a while ago."""
    from blackboard.clock import format_utc

    now = time.time()

    def archived(session_id: str, ended: float, written: float) -> None:
        fields = {"session_id": session_id, "org": "acme", "project": "widget", "status": "ended"}
        fields.update(ended=format_utc(ended), generation=handoff.MAX_GENERATION)
        if session_id == "forged":
            fields["published"] = format_utc(ended)  # its own claim of when it arrived, as far ahead
        handoff.write_session_handoff(resolver, session_id, handoff.dump_front_matter(fields) + "\nbody\n")
        os.utime(resolver.handoff_path(session_id), (written, written))

    archived("forged", now + 55 * 60, now - 600)  # arrived ten minutes ago, and was published then:
    fields, body = handoff.split_front_matter(Path(resolver.handoff_path("forged")).read_text())
    fields["published"] = format_utc(now - 600)
    Path(resolver.latest_handoff_path()).write_text(handoff.dump_front_matter(fields) + body)
    archived("later-here", now - 60, now - 60)  # a session of this machine that ended after it arrived
    handoff.publish_latest(resolver, Path(resolver.handoff_path("later-here")).read_text())

    handoff.publish_newest(resolver)  # the next sync round

    latest = handoff.read_handoff(resolver.latest_handoff_path())
    assert latest is not None and latest[0]["session_id"] == "later-here"


def test_counts_from_part_of_a_digest_are_said_to_be_at_least() -> None:
    from blackboard.digest import Digest

    found = Digest("first", ["latest"], 600, "done", {"a.py": 1})
    found.complete = False

    assert "a latest request (at least 600 in all): latest" in summary.asked_section(found)
    assert "request 600 of 600" not in summary.asked_section(found)
    assert "at least these" in summary.changed_section(found, None)
    fields = summary.digest_fields(found, None)
    assert fields["asked"]["complete"] is False and fields["changed"]["complete"] is False
    found.complete = True
    assert "request 600 of 600: latest" in summary.asked_section(found)
    assert "complete" not in summary.digest_fields(found, None)["asked"]


def test_every_open_item_of_a_handoff_is_redacted_whoever_wrote_it(resolver: PathResolver, isolated_home) -> None:
    """A session's own tasks are redacted as they are read; what was carried is redacted again, whatever wrote it."""
    import json

    token = "ghp_" + "Q1w2E3r4T5" * 4
    board = _board(resolver)
    entries.append(_file(board, "tasks"), "t", {"status": "open", "author": "main"}, f"board task {token}")
    tasks = Path(settings_now().claude_dir) / "tasks" / "s1"
    tasks.mkdir(parents=True)
    (tasks / "1.json").write_text(json.dumps({"subject": f"claude code task {token}", "status": "pending"}))
    carried = [{"key": "s0/t1", "text": f"carried by hand {token}", "status": "claimed", "by": f"agent {token}"}]
    Path(resolver.get_handoff_dir()).mkdir(parents=True, exist_ok=True)
    latest = {"session_id": "s0", "status": "ended", "ended": "2026-11-22T10:00:00Z", "open_work": carried}
    Path(resolver.latest_handoff_path()).write_text(handoff.dump_front_matter(latest) + "a hand-written handoff\n")

    built = summary.handoff_text(resolver, read_meta(resolver.meta_path("s1")), settings_now())

    fields, _ = handoff.split_front_matter(built)
    assert [item["key"] for item in fields["open_work"]] == ["s1/cc1", "s1/t1", "s0/t1"]
    assert token[:8] not in built
    assert "[REDACTED]" in fields["open_work"][2]["text"] and "[REDACTED]" in fields["open_work"][2]["by"]


# --- a session that did nothing (issue 38, point 5; docs/adr/0034-handoffs-with-parallel-sessions.md) -----------


def _offer(resolver: PathResolver, session_id: str, ended: str, quiet: bool = False) -> bool:
    fields: dict[str, object] = {"session_id": session_id, "status": "ended", "ended": ended}
    if quiet:
        fields["nothing_done"] = True
    text = handoff.dump_front_matter(fields) + f"\nbody of {session_id}\n"
    handoff.write_session_handoff(resolver, session_id, text)
    return handoff.publish_latest(resolver, text)


def test_a_handoff_of_a_session_that_did_nothing_leaves_the_latest_untouched(resolver: PathResolver) -> None:
    assert _offer(resolver, "worked", "2026-11-22T10:00:01Z")
    before = Path(resolver.latest_handoff_path()).read_bytes()

    assert not _offer(resolver, "quiet", "2026-11-22T10:00:05Z", quiet=True)

    assert Path(resolver.latest_handoff_path()).read_bytes() == before  # not rewritten, not chained
    assert _offer(resolver, "next", "2026-11-22T10:00:09Z")
    fields, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert (fields["session_id"], fields["previous_sessions"]) == ("next", ["worked"])


def test_a_session_that_did_nothing_is_the_latest_where_there_is_none_or_none_that_did_something(
    resolver: PathResolver,
) -> None:
    assert _offer(resolver, "first", "2026-11-22T10:00:01Z", quiet=True)
    assert _offer(resolver, "second", "2026-11-22T10:00:05Z", quiet=True)
    Path(resolver.latest_handoff_path()).write_text("---\nnot: [front matter\n---\nunreadable\n")
    assert _offer(resolver, "third", "2026-11-22T10:00:09Z", quiet=True)


def test_the_next_sync_round_publishes_a_real_handoff_past_a_newer_one_of_a_session_that_did_nothing(
    resolver: PathResolver,
) -> None:
    _offer(resolver, "old", "2026-11-22T10:00:01Z")
    fields = {"session_id": "killed", "status": "ended", "ended": "2026-11-22T10:00:05Z"}
    handoff.write_session_handoff(resolver, "killed", handoff.dump_front_matter(fields) + "\nbody\n")  # never published
    _offer(resolver, "quiet", "2026-11-22T10:00:09Z", quiet=True)
    os.utime(resolver.latest_handoff_path(), (time.time() - 60, time.time() - 60))

    assert handoff.publish_newest(resolver)

    latest, _ = handoff.read_handoff(resolver.latest_handoff_path()) or ({}, "")
    assert latest["session_id"] == "killed"


def test_a_handoff_names_a_few_other_live_sessions_files_and_counts_the_rest() -> None:
    from blackboard.changes import Changes

    found = Changes(uncommitted_paths=[f"src/m{n}.py" for n in range(40)] + ["mine.py"])
    found.split({"mine.py"}, {f"live-{n:02d}": {f"src/m{n * 5 + k}.py": 1.0 for k in range(5)} for n in range(8)})
    line = summary.uncommitted_line(found.uncommitted or 0, found.others)
    assert line.startswith("1 file left uncommitted by this session (git status); 5 more are live session live-00's")
    assert line.endswith("; 15 more are 3 other live sessions' (`blackboard who` names them)")
    fields = summary.digest_fields(summary.Digest(), found)
    assert [o["files"] for o in fields["changed"]["uncommitted_others"]] == [5] * 8  # type: ignore[index]


def test_a_front_matter_over_its_budget_keeps_each_other_sessions_count_not_its_files() -> None:
    others = [
        {"session": f"s{n}", "files": 10, "paths": ["d/" * 100 + f"{k}.py" for k in range(10)]} for n in range(30)
    ]
    text = handoff.dump_front_matter({"session_id": "s1", "changed": {"uncommitted": 1, "uncommitted_others": others}})
    fields, _ = handoff.split_front_matter(text)
    assert len(text.encode()) <= handoff.FRONT_MATTER_BYTES
    assert fields["changed"]["uncommitted_others"][29] == {"session": "s29", "files": 10}  # type: ignore[index]
