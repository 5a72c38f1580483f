"""Which sessions are live, and what each is doing (docs/adr/0029-live-sessions.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blackboard import live, session
from blackboard.events import session_start
from blackboard.live import Liveness
from blackboard.meta import update_meta
from blackboard.paths import PathResolver
from helpers import settings_now


@pytest.fixture
def claude() -> Iterator[subprocess.Popen]:
    """A process standing in for a running Claude Code: its pid goes into CLAUDE_PID."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def _start(resolver: PathResolver, session_id: str, pid: int | None, host: str = "") -> None:
    env = {"CLAUDE_PID": str(pid)} if pid is not None else {}
    if host:
        env["BLACKBOARD_HOST"] = host
    session.start(resolver, session_id, "startup", {}, settings_now(**env))


def test_a_running_process_is_the_same_and_a_reused_pid_is_not(claude: subprocess.Popen) -> None:
    started = live.process_start(claude.pid)
    assert started is not None and started.isdigit()
    assert live.same_process(claude.pid, started) is True
    assert live.same_process(claude.pid, str(int(started) + 1)) is False  # the pid given to another process


@pytest.mark.parametrize(
    "pid",
    [
        pytest.param(1, id="init"),
        pytest.param(0, id="zero"),
        pytest.param(-1, id="negative"),
        pytest.param(2**70, id="huge"),
        pytest.param("123", id="a-string"),
        pytest.param(True, id="a-bool"),
        pytest.param(None, id="none"),
    ],
)
def test_no_such_pid_is_a_live_process(pid: object) -> None:
    assert live.same_process(pid, live.process_start(1)) is False


def test_a_process_that_ended_is_not_the_same() -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert live.same_process(int(done.stdout), "1") is False


@pytest.mark.skipif(os.geteuid() != 0, reason="starting a process as another user needs root")
def test_another_users_process_is_never_a_session_of_this_user() -> None:
    proc = subprocess.Popen(["sleep", "30"], user=65534)
    try:
        assert live.same_process(proc.pid, live.process_start(proc.pid)) is False
    finally:
        proc.kill()
        proc.wait()


def test_a_session_is_live_while_its_process_runs_and_not_once_it_ended(
    resolver: PathResolver, claude: subprocess.Popen
) -> None:
    _start(resolver, "a1", claude.pid)
    liveness = Liveness(resolver, settings_now())
    assert liveness.session_is_live("a1")
    claude.kill()
    claude.wait()
    assert not liveness.session_is_live("a1")


def test_an_ended_session_is_not_live_though_its_process_runs(resolver: PathResolver, claude: subprocess.Popen) -> None:
    _start(resolver, "a1", claude.pid)
    session.end(resolver, "a1", "other", settings_now(BLACKBOARD_DIGEST="0"))
    assert not Liveness(resolver, settings_now()).session_is_live("a1")


def test_a_reused_pid_does_not_keep_a_session_live(resolver: PathResolver, claude: subprocess.Popen) -> None:
    _start(resolver, "a1", claude.pid)
    update_meta(resolver.meta_path("a1"), lambda m: m.update({"claude_started": "1"}))  # another process's start
    assert not Liveness(resolver, settings_now()).session_is_live("a1")


def test_another_machines_session_is_not_live_here(resolver: PathResolver, claude: subprocess.Popen) -> None:
    _start(resolver, "a1", claude.pid, host="elsewhere")
    assert not Liveness(resolver, settings_now(BLACKBOARD_HOST="here")).session_is_live("a1")


def test_without_a_pid_a_session_is_live_while_its_last_hook_is_recent(resolver: PathResolver) -> None:
    _start(resolver, "a1", None)
    assert Liveness(resolver, settings_now()).session_is_live("a1")
    old = time.time() - 3 * 3600
    os.utime(resolver.meta_path("a1"), (old, old))
    assert not Liveness(resolver, settings_now(BLACKBOARD_ABANDON_AFTER="2h")).session_is_live("a1")


def test_others_are_the_live_sessions_but_the_asking_one(resolver: PathResolver, claude: subprocess.Popen) -> None:
    for session_id in ("a1", "b2", "c3"):
        _start(resolver, session_id, claude.pid)
    session.end(resolver, "c3", "other", settings_now(BLACKBOARD_DIGEST="0"))
    others = Liveness(resolver, settings_now()).others(exclude="a1")
    assert [m["session_id"] for m in others] == ["b2"]


# --- _live.jsonl ------------------------------------------------------------------------------------


def test_presence_gives_the_latest_request_head_and_the_files_edited_in_the_window(tmp_path: Path) -> None:
    path = str(tmp_path / "_live.jsonl")
    live.record_request(path, "first request")
    live.record_edit(path, "/w", "old.py")
    time.sleep(0.02)
    since = time.time()
    time.sleep(0.01)  # times are kept to the millisecond
    live.record_head(path, "/w", ("main", "a" * 40))
    live.record_edit(path, "/w", "src/util.py")
    live.record_request(path, "refactor the auth module")
    live.record_edit(path, "/other", "src/util.py")
    found = live.read_presence(path, since)
    assert found.request == "refactor the auth module"
    assert found.head == ("/w", "main", "a" * 40)
    assert list(found.edits) == [("/other", "src/util.py"), ("/w", "src/util.py")]  # newest first


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("not json", id="not-json"),
        pytest.param('{"kind": "edit", "top": "/w", "path": "x.py"', id="torn"),
        pytest.param('{"kind": "edit", "top": "/w", "path": "x.py", "at": "soon"}', id="time-a-string"),
        pytest.param('{"kind": "edit", "top": 7, "path": ["x.py"], "at": 1e30}', id="wrong-types"),
        pytest.param('{"kind": "ask", "text": {"a": 1}, "at": 1e30}', id="request-an-object"),
        pytest.param("[" * 5_000 + "]" * 5_000, id="deep-nesting"),
        pytest.param("\x00\xff" * 100, id="binary"),
    ],
)
def test_a_hand_edited_or_torn_line_is_skipped(tmp_path: Path, line: str) -> None:
    path = tmp_path / "_live.jsonl"
    live.record_edit(str(path), "/w", "kept.py")
    with path.open("a") as handle:
        handle.write(line + "\n")
    found = live.read_presence(str(path), 0)
    assert list(found.edits) == [("/w", "kept.py")]
    assert found.request is None
    assert live.read_presence(str(path), 0).last_edit("/w", "kept.py") is not None


def test_edited_since_finds_a_file_among_thousands_and_prefers_this_checkout(tmp_path: Path) -> None:
    path = str(tmp_path / "_live.jsonl")
    live.record_edit(path, "/w", "src/util.py")
    live.record_edit(path, "/worktree", "src/util.py")
    for n in range(150):
        live.record_edit(path, "/w", f"src/other_{n}.py")
    found = live.read_presence(path, 0).last_edit("/w", "src/util.py")
    assert found is not None and found[0] == "/w"
    assert (
        live.read_presence(path, 0).last_edit("/elsewhere", "src/util.py") is not None
    )  # the same path in another checkout
    assert live.read_presence(path, time.time() + 1).last_edit("/w", "src/util.py") is None  # outside the window
    assert live.read_presence(path, 0).last_edit("/w", "src/util") is None  # a prefix is not the file


def test_a_hundred_thousand_edits_cost_a_bounded_read(tmp_path: Path) -> None:
    path = tmp_path / "_live.jsonl"
    line = json.dumps({"kind": "edit", "top": "/w", "path": "x" * 200, "at": time.time()}) + "\n"
    path.write_text(line * 100_000)
    began = time.monotonic()
    assert live.read_presence(str(path), 0).last_edit("/w", "util.py") is None
    live.read_presence(str(path), 0)
    assert time.monotonic() - began < 1.0


def test_locate_resolves_links_and_dots_and_gives_nothing_outside_a_checkout(project: Path, tmp_path: Path) -> None:
    (project / "src").mkdir()
    (project / "src" / "util.py").write_text("")
    (project / "alias.py").symlink_to(project / "src" / "util.py")
    top = str(project)
    assert live.locate(str(project / "src" / "util.py")) == (top, "src/util.py")
    assert live.locate(str(project / "src" / ".." / "src" / "util.py")) == (top, "src/util.py")
    assert live.locate(str(project / "alias.py")) == (top, "src/util.py")
    assert live.locate(str(project / "new.py")) == (top, "new.py")  # Write creates it
    outside = tmp_path / "outside.py"
    outside.write_text("")
    assert live.locate(str(outside)) is None
    assert live.locate(str(project / ".." / "outside.py")) is None
    assert live.locate(str(project / ".git" / "config")) is None
    assert live.locate("relative/util.py") is None
    assert live.locate(str(project / "a\0b.py")) is None


def _edits(path: str, count: int, prefix: str = "src/f") -> None:
    for n in range(count):
        live.record_edit(path, "/w", f"{prefix}{n:05d}_{'x' * 100}.py")


def test_the_log_is_folded_and_the_fold_says_what_the_log_says(tmp_path: Path) -> None:
    path = str(tmp_path / "_live.jsonl")
    live.record_request(path, "the first request")
    _edits(path, 1200)
    live.record_head(path, "/w", ("main", "b" * 40), own=True)
    folded = live.read_presence(path)
    assert os.path.isfile(live.state_path(path)) and os.path.getsize(path) > 3 * live.FOLD_EVERY
    os.unlink(live.state_path(path))
    whole = live.read_presence(path)  # the log read from its start
    assert folded.edits == whole.edits and len(folded.edits) == 1200
    assert folded.request == whole.request == "the first request"
    assert folded.moves == whole.moves and folded.moves["/w"][:2] == ("main", "b" * 40)


@pytest.mark.parametrize(
    "state",
    [
        pytest.param(b"not json", id="garbage"),
        pytest.param(b'{"offset": 99999999, "edits": {}}', id="offset-past-the-log"),
        pytest.param(b'{"offset": 10, "edits": {"/w": {"src/x.py": "soon"}}}', id="wrong-types"),
        pytest.param(b'{"offset": 0, "edits": [1, 2], "moves": {"/w": 5}}', id="wrong-shapes"),
        pytest.param(b'{"offset": -1}', id="negative-offset"),
    ],
)
def test_a_hand_edited_fold_costs_no_edit(tmp_path: Path, state: bytes) -> None:
    path = str(tmp_path / "_live.jsonl")
    live.record_edit(path, "/w", "src/kept.py")
    Path(live.state_path(path)).write_bytes(state)
    assert ("/w", "src/kept.py") in live.read_presence(path).edits


@pytest.mark.parametrize("shapes", ['"edits": [1, 2]', '"moves": {"/w": 5}', '"edits": {"/w": 3}'])
def test_a_hand_edited_fold_past_the_whole_log_costs_no_edit_of_the_file_asked_about(
    tmp_path: Path, shapes: str
) -> None:
    """A fold that cannot be loaded sends the reader to the whole log: the file asked about is looked for there
    too, not only in the unloadable fold and the log past its offset."""
    path = str(tmp_path / "_live.jsonl")
    live.record_edit(path, "/w", "src/kept.py")
    state = f'{{"offset": {os.path.getsize(path)}, {shapes}}}'
    Path(live.state_path(path)).write_text(state)
    assert ("/w", "src/kept.py") in live.read_presence(path).edits
    assert ("/w", "src/kept.py") in live.read_presence(path, about="src/kept.py").edits


def test_folds_of_many_processes_at_once_lose_no_file(tmp_path: Path) -> None:
    path = str(tmp_path / "_live.jsonl")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from blackboard import live\n"
        "for n in range(300): live.record_edit(sys.argv[2], '/w', f'p{sys.argv[3]}/{n:04d}_' + 'y' * 120)\n"
    )
    lib = str(Path(live.__file__).resolve().parent.parent)
    procs = [subprocess.Popen([sys.executable, "-c", code, lib, path, str(k)]) for k in range(6)]
    assert [proc.wait() for proc in procs] == [0] * 6
    assert len(live.read_presence(path).edits) == 1800


def test_a_session_that_never_named_the_file_is_not_read_for_it(tmp_path: Path) -> None:
    """The edit guard asks about one file: a session whose fold and log name neither it nor a hold is read as empty."""
    path = str(tmp_path / "_live.jsonl")
    live.record_request(path, "port the parser")
    _edits(path, 400)  # folded more than once, then a few past the fold
    assert os.path.isfile(live.state_path(path))
    named = f"src/f00003_{'x' * 100}.py"
    assert live.read_presence(path, about="src/other.py").edits == {}
    assert live.read_presence(path, about="src/other.py").request is None
    found = live.read_presence(path, about=named)
    assert found.request == "port the parser" and len(found.edits) == 400
    live.record_edit(path, "/w", "src/late.py")  # past the fold
    assert ("/w", "src/late.py") in live.read_presence(path, about="src/late.py").edits
    live.record_hold(path, "/w", ["docs/*"], "a rewrite", None)  # a hold may cover any path: read whole
    assert live.read_presence(path, about="src/other.py").held(time.time())


NAMES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=6), other=NAMES, pick=st.integers(min_value=0, max_value=9))
def test_reading_for_one_file_finds_every_edit_of_it(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], other: str, pick: int
) -> None:
    """Whatever the names (quotes, backslashes, line breaks, any script), reading for one file loses none of its
    edits, folded or not."""
    path = str(tmp_path_factory.mktemp("live") / "_live.jsonl")
    for name in names:
        live.record_edit(path, "/w", name)
    for asked in (names[pick % len(names)], other):
        whole = {key: at for key, at in live.read_presence(path).edits.items() if key[1] == asked}
        for_it = {key: at for key, at in live.read_presence(path, about=asked).edits.items() if key[1] == asked}
        assert for_it == whole
    assert live.read_presence(path, about=names[pick % len(names)]).edits


def test_session_start_reads_each_live_sessions_metadata_once(
    resolver: PathResolver, project: Path, claude: subprocess.Popen, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recovery, the closing of the session's own past and the list of the others share one read of each."""
    others = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]) for _ in range(4)]
    try:
        for n, proc in enumerate(others):
            _start(resolver, f"o{n}", proc.pid)
        opened: list[str] = []
        real_open = os.open

        def counting_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
            opened.append(os.fsdecode(path))
            return real_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", counting_open)
        payload = {"session_id": "me", "cwd": str(project), "source": "startup"}
        context = session_start.run("session-start", payload, settings_now(CLAUDE_PID=str(claude.pid)))
        assert "4 other live sessions" in context
        metas = sorted(path for path in opened if path.endswith("_meta.json") and "/sessions/o" in path)
        assert metas == sorted(resolver.meta_path(f"o{n}") for n in range(4))
    finally:
        for proc in others:
            proc.kill()
            proc.wait()


LINES = st.one_of(
    st.builds(lambda p, at: json.dumps({"kind": "edit", "top": "/w", "path": p, "at": at}), NAMES, st.floats(0, 2e9)),
    st.sampled_from(['{"kind": "edit"', "{}", '{"at": 1e400}', "[1, 2]", '{"a": 1}, {"at": 2}', "", "{"]),
    st.text(max_size=20),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(LINES, max_size=12))
def test_the_log_parsed_at_once_says_what_it_says_line_by_line(lines: list[str]) -> None:
    data = "\n".join(line.replace("\n", " ") for line in lines).encode("utf-8", "surrogatepass")
    by_line = [live._record(line) for line in data.decode("utf-8", errors="replace").split("\n")]
    assert live._records(data) == [record for record in by_line if record is not None]
