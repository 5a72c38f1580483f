"""Every command through click's CliRunner, and every error path as one line with exit 1."""

import json
import os
from pathlib import Path

import pytest

from blackboard import board, session
from blackboard.paths import PathResolver
from helpers import HOSTILE_SESSION_IDS, REPO, run_cli, settings_now


@pytest.fixture
def bb(resolver: PathResolver, project: Path, monkeypatch: pytest.MonkeyPatch):
    """Run ``blackboard ARGS`` in the project with session s1 started; returns (exit code, stdout, stderr)."""
    session.start(resolver, "s1", "startup", {"cwd": str(project)}, settings_now())
    monkeypatch.chdir(project)
    return run


run = run_cli


def ok(result) -> str:
    code, out, err = result
    assert code == 0, err
    return out


def fails(result, *words: str, status: int = 1) -> str:
    code, out, err = result
    assert code == status
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("blackboard: error: "), err
    for word in words:
        assert word in err
    return err


def test_note_appends_with_author_and_id(bb, resolver: PathResolver) -> None:
    assert ok(bb("note", "chose", "SQLite")).strip() == "n1"
    assert json.loads(ok(bb("--author", "worker-1", "note", "second", "--json"))) == {"id": "n2", "session_id": "s1"}
    text = (Path(resolver.get_session_blackboard_dir("s1")) / "session-notes.md").read_text()
    assert "## n1\n- author: main\n" in text
    assert "chose SQLite" in text
    assert "- author: worker-1" in text


def test_author_from_environment(bb, resolver: PathResolver) -> None:
    ok(bb("note", "hi", env={"BLACKBOARD_AGENT": "reviewer"}))
    assert "- author: reviewer" in (Path(resolver.get_session_blackboard_dir("s1")) / "session-notes.md").read_text()


def test_note_reads_stdin(bb) -> None:
    ok(bb("note", "-", stdin="from\nstdin"))
    data = json.loads(ok(bb("show", "--json")))
    assert data["notes"][-1]["text"] == "from\nstdin"


def test_task_lifecycle(bb) -> None:
    assert json.loads(ok(bb("task", "add", "write", "docs", "--json")))["id"] == "t1"
    ok(bb("task", "add", "fix bug"))
    assert "claimed t1: write docs" in ok(bb("--author", "w1", "task", "claim", "t1"))
    fails(bb("--author", "w2", "task", "claim", "t1"), "already claimed by w1")
    listed = json.loads(ok(bb("task", "list", "--json")))["tasks"]
    assert [(t["id"], t["status"], t.get("claimed_by")) for t in listed] == [
        ("t1", "claimed", "w1"),
        ("t2", "open", None),
    ]
    assert json.loads(ok(bb("task", "done", "t1", "--json")))["status"] == "done"
    fails(bb("task", "done", "t1"), "already done")
    fails(bb("task", "claim", "t1"), "already done")
    assert "t1" not in ok(bb("task", "list"))
    assert "t1" in ok(bb("task", "list", "--all"))
    fails(bb("task", "claim", "t9"), "no task 't9'", "task list")


def test_keyed_entries(bb) -> None:
    ok(bb("--author", "explorer", "post", "api_schema", '{"v": 2}'))
    fails(bb("post", "api_schema", "again"), "already exists", "--replace")
    ok(bb("post", "api_schema", "v3", "--replace"))
    assert ok(bb("read", "api_schema")).strip() == "v3"
    entry = json.loads(ok(bb("read", "api_schema", "--json")))
    assert entry["id"] == "api_schema"
    assert entry["text"] == "v3"
    assert entry["author"] == "main"
    assert entry["at"]
    listed = json.loads(ok(bb("list", "--json")))["entries"]
    assert [e["id"] for e in listed] == ["api_schema"]
    assert ok(bb("claim", "api_schema")).strip() == "v3"
    fails(bb("claim", "api_schema"), "no entry 'api_schema'")
    fails(bb("read", "api_schema"), "no key 'api_schema'")


@pytest.mark.parametrize("key", ["has space", "dash-key", "x" * 65, "../etc", "ünï"])
def test_bad_keys_are_refused(bb, key: str) -> None:
    fails(bb("post", key, "v"), "invalid key")


def test_value_cap_refused_before_writing(bb, resolver: PathResolver) -> None:
    ok(bb("note", "a first note"))
    notes = Path(resolver.get_session_blackboard_dir("s1")) / "session-notes.md"
    before = notes.read_bytes()
    fails(bb("note", "x" * 10_001), "over the cap of 10000")
    fails(bb("post", "k", "x" * 10_001), "over the cap")
    fails(bb("note", "x" * 11, env={"BLACKBOARD_MAX_VALUE_CHARS": "10"}), "over the cap of 10")
    fails(bb("note", "   "), "empty")
    assert notes.read_bytes() == before
    ok(bb("note", "x" * 10_000))


def test_sessions_lists_newest_first(bb, resolver: PathResolver) -> None:
    session.start(resolver, "s2", "startup", {}, settings_now())
    session.end(resolver, "s1", "other", settings_now())
    rows = json.loads(ok(bb("sessions", "--json")))
    assert {r["session_id"] for r in rows} == {"s1", "s2"}
    assert [r["session_id"] for r in json.loads(ok(bb("sessions", "--status", "ended", "--json")))] == ["s1"]
    assert "SESSION" in ok(bb("sessions"))


def test_sessions_across_projects(bb, root: Path) -> None:
    from blackboard.project import Project

    other = PathResolver(str(root), Project("acme", "gadget", None, "test"))
    session.start(other, "g1", "startup", {}, settings_now())
    assert {r["project"] for r in json.loads(ok(bb("sessions", "--all-projects", "--json")))} == {"widget", "gadget"}
    assert {r["project"] for r in json.loads(ok(bb("sessions", "--json")))} == {"widget"}


def test_sessions_report_corrupt_metadata(bb, resolver: PathResolver) -> None:
    broken = Path(resolver.get_session_blackboard_dir("broken"))
    broken.mkdir()
    (broken / "_meta.json").write_text("{")
    code, out, err = bb("sessions")
    assert code == 0
    assert "broken" in out
    assert "corrupt" in err


def test_show_and_its_problems(bb, resolver: PathResolver) -> None:
    ok(bb("task", "add", "visible"))
    tasks = Path(resolver.get_session_blackboard_dir("s1")) / "active-tasks.md"
    tasks.write_text(tasks.read_text() + "\n## mangled heading here\n")
    code, out, err = bb("show")
    assert code == 0
    assert "# Session s1 (active)" in out
    assert "visible" in out
    assert "line" in err
    assert "mangled" in err
    data = json.loads(ok(bb("show", "s1", "--json")))
    assert data["meta"]["session_id"] == "s1"
    assert data["problems"]


def test_handoff_command(bb, resolver: PathResolver) -> None:
    fails(bb("handoff"), "no handoff")
    session.end(resolver, "s1", "other", settings_now())
    assert "# Handoff from session s1" in ok(bb("handoff"))
    data = json.loads(ok(bb("handoff", "s1", "--json")))
    assert data["fields"]["session_id"] == "s1"
    assert "Open work" in data["body"]


def test_migrate_dry_run_then_real(bb, resolver: PathResolver) -> None:
    (Path(resolver.project_dir) / "session-notes.md").write_text("old\n")
    planned = json.loads(ok(bb("migrate", "--dry-run", "--json")))
    assert planned["dry_run"]
    assert planned["moves"][0]["source"].endswith("session-notes.md")
    assert (Path(resolver.project_dir) / "session-notes.md").exists()
    assert "moved" in ok(bb("migrate"))
    assert "nothing to migrate" in ok(bb("migrate"))


def test_where_explains_itself(bb, root: Path) -> None:
    data = json.loads(ok(bb("where", "--json", env={"BLACKBOARD_SESSION_ID": "s1"})))
    assert data["root"] == str(root)
    assert data["root_from"] == "BLACKBOARD_ROOT"
    assert (data["org"], data["project"], data["session_id"], data["session_from"]) == (
        "acme",
        "widget",
        "s1",
        "BLACKBOARD_SESSION_ID",
    )


def test_session_resolution_order(bb, resolver: PathResolver) -> None:
    session.start(resolver, "s2", "startup", {}, settings_now())
    session.start(resolver, "s3", "startup", {}, settings_now())
    env = {"BLACKBOARD_SESSION_ID": "s2", "CLAUDE_CODE_SESSION_ID": "s3"}
    assert json.loads(ok(bb("--session", "s1", "note", "a", "--json", env=env)))["session_id"] == "s1"
    assert json.loads(ok(bb("note", "a", "--json", env=env)))["session_id"] == "s2"
    assert json.loads(ok(bb("note", "a", "--json", env={"CLAUDE_CODE_SESSION_ID": "s3"})))["session_id"] == "s3"
    assert json.loads(ok(bb("note", "a", "--json", env={"CLAUDE_SESSION_ID": "s1"})))["session_id"] == "s1"


def test_without_an_id_the_most_recently_active_session_is_used(bb, resolver: PathResolver) -> None:
    import os
    import time

    session.start(resolver, "s2", "startup", {}, settings_now())
    an_hour_ago = time.time() - 3600
    os.utime(resolver.meta_path("s2"), (an_hour_ago, an_hour_ago))  # s1, started first, was active since
    assert json.loads(ok(bb("note", "a", "--json")))["session_id"] == "s1"


def test_a_session_of_another_project_is_found_by_id(bb, root: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # not the project the session belongs to
    assert json.loads(ok(bb("note", "a", "--json", env={"BLACKBOARD_SESSION_ID": "s1"})))["session_id"] == "s1"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["--session", "../x", "note", "a"], ["refusing session id"], id="hostile-session"),
        pytest.param(
            ["--session", "nope", "note", "a"], ["has no board", "sessions --all-projects"], id="unknown-session"
        ),
    ]
    + [
        pytest.param(args, ["refusing session id"], id=f"{form}-{name}")
        for name, value in HOSTILE_SESSION_IDS.items()
        for form, args in (
            ("option", ["--session", value, "note", "a"]),
            ("show", ["show", "--", value]),
            ("handoff", ["handoff", "--", value]),
        )
    ],
)
def test_errors_are_one_line_with_exit_one(bb, args: list[str], words: list[str]) -> None:
    fails(bb(*args), *words)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["bogus"], ["No such command", "--help"], id="unknown-command"),
        pytest.param(["task", "claim"], ["Missing argument", "--help"], id="missing-argument"),
        pytest.param(["sessions", "--status", "weird"], ["Invalid value"], id="bad-choice"),
    ],
)
def test_usage_errors_are_one_line_with_exit_two(bb, args: list[str], words: list[str]) -> None:
    fails(bb(*args), *words, status=2)


@pytest.mark.parametrize(
    "value", [pytest.param(v, id=name) for name, v in HOSTILE_SESSION_IDS.items() if "\x00" not in v]
)  # an environment variable cannot hold a NUL
def test_a_hostile_session_id_in_the_environment_is_refused(bb, resolver: PathResolver, value: str) -> None:
    ok(bb("note", "a first note"))
    notes = Path(resolver.get_session_blackboard_dir("s1")) / "session-notes.md"
    before = notes.read_bytes()
    fails(bb("note", "a", env={"BLACKBOARD_SESSION_ID": value}), "refusing session id")
    assert notes.read_bytes() == before  # not quietly written to the latest session instead


def test_an_empty_session_option_means_not_given(bb) -> None:
    assert json.loads(ok(bb("--session", "", "note", "a", "--json")))["session_id"] == "s1"


def test_no_session_yet(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    fails(run("note", "x"), "no session of local/empty-", "--session")


def test_debug_shows_the_traceback(bb) -> None:
    code, _, err = bb("--debug", "--session", "nope", "note", "a")
    assert code == 1
    assert "Traceback" in err
    assert err.strip().endswith("sessions --all-projects` lists the sessions")


def test_a_bug_exits_three_with_its_traceback_in_the_log(bb, root: Path, monkeypatch) -> None:
    def broken(*args: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(board.Board, "note", broken)
    code, out, err = bb("note", "a")
    assert code == 3
    assert err.count("\n") == 1
    assert "RuntimeError: boom" in err
    log = (root / "logs" / "cli.log").read_text()
    assert "Traceback" in log
    assert "boom" in log


def test_debug_prints_the_traceback_of_a_bug(bb, monkeypatch) -> None:
    def broken(*args: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(board.Board, "note", broken)
    code, _, err = bb("--debug", "note", "a")
    assert code == 3
    assert "Traceback" in err


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--author", "w1", "--json", "note", "hello"], id="before"),
        pytest.param(["note", "hello", "--author", "w1", "--json"], id="after"),
        pytest.param(["note", "--json", "hello", "--author", "w1"], id="among-the-words"),
        pytest.param(["--json", "note", "--author=w1", "hello"], id="equals-form"),
    ],
)
def test_global_options_go_before_or_after_the_command(bb, resolver: PathResolver, args: list[str]) -> None:
    assert json.loads(ok(bb(*args))) == {"id": "n1", "session_id": "s1"}
    notes = (Path(resolver.get_session_blackboard_dir("s1")) / "session-notes.md").read_text()
    assert "- author: w1\n" in notes
    assert notes.rstrip().endswith("hello")


@pytest.mark.parametrize(
    ("args", "stored"),
    [
        pytest.param(["note", "- fixed the flaky test"], "- fixed the flaky test", id="dash-and-space"),
        pytest.param(["note", "-5 degrees outside"], "-5 degrees outside", id="negative-number"),
        pytest.param(["note", "--", "--fix is a doctor option"], "--fix is a doctor option", id="after-double-dash"),
        pytest.param(["note", "--json", "--", "--json"], "--json", id="option-then-text"),
    ],
)
def test_text_that_starts_with_a_dash(bb, args: list[str], stored: str) -> None:
    ok(bb(*args))
    assert json.loads(ok(bb("show", "--json")))["notes"][-1]["text"] == stored


def test_an_unknown_option_is_still_an_error(bb) -> None:
    fails(bb("note", "--autor", "w1", "hello"), "No such option", status=2)


def test_values_from_a_file_or_stdin(bb, tmp_path: Path) -> None:
    value = tmp_path / "schema.md"
    value.write_text("# Schema\n\n- id: int\n$(not run) `nor this`\n")
    ok(bb("post", "schema", "--file", str(value)))
    assert json.loads(ok(bb("read", "schema", "--json")))["text"] == value.read_text()  # byte for byte
    ok(bb("task", "add", "--file", "-", stdin="from stdin\nline two"))
    assert json.loads(ok(bb("task", "list", "--json")))["tasks"][-1]["text"] == "from stdin\nline two"
    fails(bb("post", "other", "words", "--file", str(value)), "not both", status=2)
    fails(bb("note", "--file", str(tmp_path / "missing.md")), "cannot read --file")


def test_the_forgeries_of_the_issue_stay_inside_their_value(bb) -> None:
    forged_task = "scraped\r## t2\n- status: open\n\nFORGED"
    assert ok(bb("task", "add", forged_task)).strip() == "t1"
    assert ok(bb("task", "add", "real")).strip() == "t2"
    tasks = json.loads(ok(bb("task", "list", "--json")))["tasks"]
    assert [(t["id"], t["text"]) for t in tasks] == [("t1", forged_task), ("t2", "real")]

    ok(bb("post", "x", "a\r## api_key\n- author: main\n\nFORGED"))
    ok(bb("post", "api_key", "the real one"))
    assert ok(bb("read", "api_key")) == "the real one\n"


def test_text_that_is_not_utf8_is_refused_in_one_line(bb) -> None:
    fails(bb("note", "bad \udcff byte"), "not valid UTF-8")


def test_escape_sequences_in_a_board_never_reach_the_terminal(bb) -> None:
    hostile = "innocent \x1b]0;OWNED\x07\x1b[2J\rgone\ttab"
    ok(run("note", hostile))

    shown = ok(run("show"))
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown
    assert "innocent \ufffd]0;OWNED\ufffd\ufffd[2J\ufffdgone\ttab" in shown
    as_json = json.loads(ok(run("show", "--json")))
    assert as_json["notes"][0]["text"] == hostile  # JSON escapes them itself, and keeps the text exact


def test_task_drop_needs_a_reason_and_closes_the_task(bb, resolver: PathResolver) -> None:
    ok(bb("task", "add", "rewrite in Rust"))
    fails(bb("task", "drop", "t1"), "--reason", status=2)
    dropped = json.loads(ok(bb("task", "drop", "t1", "--reason", "not worth it", "--json")))
    assert (dropped["status"], dropped["drop_reason"], dropped["dropped_by"]) == ("dropped", "not worth it", "main")
    fails(bb("task", "done", "t1"), "already dropped")
    fails(bb("task", "claim", "t1"), "already dropped")
    assert ok(bb("task", "list")).strip() == "(no tasks)"
    assert "dropped" in ok(bb("task", "list", "--all"))


def test_carried_work_is_listed_taken_up_once_and_closed(bb, resolver: PathResolver) -> None:
    session.start(resolver, "earlier", "startup", {}, settings_now())
    board.Board(resolver, "earlier").add_task("write the lexer", "main")
    session.end(resolver, "earlier", "other", settings_now())

    listed = json.loads(ok(bb("task", "list", "--json")))
    assert listed["carried"] == [{"key": "earlier/t1", "text": "write the lexer", "status": "open"}]
    assert "earlier/t1 open     write the lexer (carried from an earlier session)" in ok(bb("task", "list"))
    fails(bb("task", "done", "nobody/t7"), "no open task 'nobody/t7' carried")
    claimed = json.loads(ok(bb("task", "claim", "earlier/t1", "--json")))
    assert (claimed["id"], claimed["origin"], claimed["claimed_by"]) == ("t1", "earlier/t1", "main")
    ok(bb("task", "done", "earlier/t1"))  # found on this board now, by its origin

    listed = json.loads(ok(bb("task", "list", "--all", "--json")))
    assert listed["carried"] == [] and [t["status"] for t in listed["tasks"]] == ["done"]


def test_task_list_reports_open_work_no_handoff_could_carry(bb, resolver: PathResolver) -> None:
    from blackboard import handoff

    fields = {"session_id": "earlier", "ended": "2026-11-22T10:00:00Z", "status": "ended", "open_work_cut": 7}
    fields["open_work"] = [{"key": "earlier/t9", "text": "kept", "status": "open"}]
    handoff.publish_latest(resolver, handoff.dump_front_matter(fields) + "\n# Handoff from session earlier\n")

    listed = json.loads(ok(bb("task", "list", "--json")))

    assert listed["carried_left_out"] == 7 and [i["key"] for i in listed["carried"]] == ["earlier/t9"]
    assert "… and 7 older open items no handoff could carry" in ok(bb("task", "list"))
    assert "7 older open items left out" in handoff.read_handoff(resolver.latest_handoff_path())[1]


def test_handoff_json_carries_the_digest_and_the_ledger(bb, resolver: PathResolver) -> None:
    ok(bb("task", "add", "ship it"))
    session.end(resolver, "s1", "other", settings_now())

    fields = json.loads(ok(bb("handoff", "s1", "--json")))["fields"]

    assert fields["open_work"] == [{"key": "s1/t1", "text": "ship it", "status": "open"}]
    assert fields["closed_work"] == []
    assert set(fields["asked"]) == {"first", "latest", "count", "source"}
    assert "files" in fields["changed"] and "stopped" in fields


def test_a_file_that_is_not_utf8_is_refused_and_nothing_is_written(bb, project: Path) -> None:
    (project / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    fails(bb("note", "--file", "latin1.txt"), "not valid UTF-8")
    assert json.loads(ok(bb("show", "--json")))["notes"] == []


@pytest.mark.parametrize(
    ("size", "amount"), [(14 << 20, "more than 10000"), (10_001, "10001")], ids=["fourteen-megabytes", "one-over"]
)
def test_a_file_over_the_cap_is_named_with_advice_that_does_not_send_it_back_to_a_file(
    bb, project: Path, size: int, amount: str
) -> None:
    """Issue 32, point 15: a 14 MB file was "10001 characters", to be written to a file."""
    (project / "big.txt").write_text("x" * size)
    err = fails(bb("note", "--file", "big.txt"), f"--file big.txt holds {amount} characters", "path")
    assert "write it to a file" not in err and "--file" not in err.split("characters")[1]
    assert json.loads(ok(bb("show", "--json")))["notes"] == []


def test_text_that_is_not_utf8_is_never_sent_to_a_file_that_would_be_refused_the_same(bb) -> None:
    err = fails(bb("note", "bad \udcff byte"), "not valid UTF-8", "iconv")
    assert "--file" not in err


@pytest.mark.parametrize("text", ["a\r\nb", "a\rb", "line\u2028two", "trailing\r\n\r\n"])
def test_a_value_on_standard_input_round_trips_byte_for_byte(bb, text: str) -> None:
    ok(bb("note", "-", stdin=text))
    assert json.loads(ok(bb("show", "--json")))["notes"][-1]["text"] == text


def test_version_is_the_manifests() -> None:
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    code, out, err = run_cli("--version")
    assert (code, out.strip(), err) == (0, f"blackboard {manifest['version']}", "")


def test_a_file_given_as_a_link_is_refused_never_followed(resolver: PathResolver, tmp_path: Path, monkeypatch) -> None:
    """A link swapped in after the approval hook looked must not read what it points to."""
    session.start(resolver, "s1", "startup", {}, settings_now())
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY MATERIAL")
    (tmp_path / "todo.txt").symlink_to(secret)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("note", "--file", "todo.txt", "--session", "s1", env={"BLACKBOARD_ROOT": resolver.root})
    assert code == 1
    assert "is a symbolic link" in err
    assert "PRIVATE KEY MATERIAL" not in Path(resolver.board_file("s1", "notes")).read_text()


def test_a_file_behind_a_linked_folder_or_with_other_names_is_refused(
    resolver: PathResolver, tmp_path: Path, monkeypatch
) -> None:
    """A folder swapped for a link, or a hard link made after the approval, must not read a secret."""
    session.start(resolver, "s1", "startup", {}, settings_now())
    secrets = tmp_path / "elsewhere"
    secrets.mkdir()
    (secrets / "config").write_text("KUBE SECRET")
    (secrets / "other").write_text("KUBE SECRET")
    work = tmp_path / "work"
    work.mkdir()
    (work / "sub").symlink_to(secrets)
    os.link(secrets / "other", work / "todo.txt")
    monkeypatch.chdir(work)
    env = {"BLACKBOARD_ROOT": resolver.root}
    for path, why in (("sub/config", "goes through a symbolic link"), ("todo.txt", "has other names")):
        code, _, err = run_cli("note", "--file", path, "--session", "s1", env=env)
        assert code == 1 and why in err
    assert "KUBE SECRET" not in Path(resolver.board_file("s1", "notes")).read_text()
