"""The hostile-input matrix (issue 6): whatever arrives, the hook exits 0 and the session goes on,
the CLI says one clear line, nothing is written outside the root and no byte is lost.

The hooks run as Claude Code runs them (tests/conftest.py ``run_hook``), the CLI through its
launcher ``bin/blackboard``. test_hooks.py holds the first hostile-stdin cases and the hostile
session ids; this file adds what they did not cover.
"""

import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest

from blackboard.handoff import split_front_matter
from helpers import REPO, end_payload, start_payload

LAUNCHER = str(REPO / "bin" / "blackboard")
BOARD = ("acme", "widget", ".blackboard")


def _board(root: Path) -> Path:
    return root.joinpath(*BOARD)


def _tree(base: Path, skip: Optional[Path] = None) -> dict[str, tuple[int, Optional[bytes]]]:
    """Every path under ``base`` (symlinks not followed) with its type and, for files, its bytes."""
    found: dict[str, tuple[int, Optional[bytes]]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        if skip is not None:
            dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) != str(skip)]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if skip is not None and path == str(skip):
                continue
            mode = os.lstat(path).st_mode
            content = Path(path).read_bytes() if stat.S_ISREG(mode) else None
            found[os.path.relpath(path, base)] = (stat.S_IFMT(mode), content)
    return found


def _sessions(root: Path) -> set[tuple[str, str]]:
    """``(org/project, session id)`` of every session under the root."""
    return {(f"{m.parts[-6]}/{m.parts[-5]}", m.parts[-2]) for m in root.glob("*/*/.blackboard/sessions/*/_meta.json")}


def _meta(root: Path, session_id: str) -> dict:
    (path,) = root.glob(f"*/*/.blackboard/sessions/{session_id}/_meta.json")
    return json.loads(path.read_text())


def _one_error_line(result: "subprocess.CompletedProcess[bytes]") -> str:
    """The CLI's single ``blackboard: error: …`` line, after checking it is the only output."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == b"", (result.stdout, result.stderr)
    lines = result.stderr.decode("utf-8", "replace").splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("blackboard: error: "), result.stderr
    return lines[0]


def _works_or_one_line(result: "subprocess.CompletedProcess[bytes]", as_json: bool = False) -> None:
    if result.returncode == 0:
        assert result.stdout.strip()
        assert b"Traceback" not in result.stderr
        if as_json:
            json.loads(result.stdout)
    else:
        _one_error_line(result)


def _ok(result: "subprocess.CompletedProcess[bytes]") -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout.decode("utf-8", "replace")


@pytest.fixture
def blackboard(hook_venv: Path, project: Path):
    """Run ``bin/blackboard ARGS`` in the project with the hooks' environment."""

    def run(
        *args: str, env: Optional[dict[str, str]] = None, stdin: bytes = b""
    ) -> "subprocess.CompletedProcess[bytes]":
        full_env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv))
        full_env.update(env or {})
        return subprocess.run(
            [LAUNCHER, *args], input=stdin, env=full_env, cwd=project, capture_output=True, timeout=60
        )

    return run


@pytest.fixture
def in_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Hooks run in the session's directory, as Claude Code starts them."""
    monkeypatch.chdir(project)
    return project


# --- stdin ---------------------------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000
NO_JSON_OBJECT = [
    pytest.param(b"null", id="null"),
    pytest.param(b"42", id="integer"),
    pytest.param(b"-1.5e400", id="float-overflow"),
    pytest.param(b"true", id="boolean"),
    pytest.param(b"NaN", id="nan"),
    pytest.param(DEEP, id="deeply-nested-array"),
    pytest.param(b'{"session_id": "s1", "x": ' + DEEP + b"}", id="object-around-deep-nesting"),
    pytest.param(b'{"session_id": "s1"} {"session_id": "s2"}', id="two-objects"),
    pytest.param(b'{"session_id": "s1", "cwd": "/tr', id="truncated-in-a-string"),
    pytest.param(b'{"session_id": "s1\\u12"}', id="bad-unicode-escape"),
    pytest.param(b'{"session_id": "s1\x01"}', id="control-character-in-a-string"),
]


@pytest.mark.parametrize("raw", NO_JSON_OBJECT)
def test_stdin_that_is_no_json_object_falls_back_to_the_environment(
    run_hook, in_project: Path, root: Path, tmp_path: Path, raw: bytes
) -> None:
    before = _tree(tmp_path, skip=root)
    result = run_hook("SessionStart", None, raw=raw, env={"CLAUDE_CODE_SESSION_ID": "from-env"})
    assert result.returncode == 0
    assert result.stderr.count(b"\n") == 1  # said, never silent
    assert b"stdin is not the JSON object" in result.stderr
    assert "Your board:" in result.context
    assert _sessions(root) == {("acme/widget", "from-env")}  # nothing of the payload was believed
    assert _tree(tmp_path, skip=root) == before


PROJECT = object()  # stands for the project's path in the payloads below
MISSING_FIELDS = [
    pytest.param({"cwd": PROJECT, "source": "startup"}, "from-env", id="no-session-id"),
    pytest.param({"session_id": "", "cwd": PROJECT}, "from-env", id="empty-session-id"),
    pytest.param({"session_id": None, "cwd": PROJECT}, "from-env", id="null-session-id"),
    pytest.param({"session_id": "s1", "source": "startup"}, "s1", id="no-cwd"),
    pytest.param({"session_id": "s1", "cwd": None}, "s1", id="null-cwd"),
    pytest.param({"session_id": "s1", "cwd": PROJECT}, "s1", id="no-source"),
    pytest.param({"session_id": "s1", "cwd": PROJECT, "source": "bogus"}, "s1", id="unknown-source"),
    pytest.param({}, "from-env", id="empty-object"),
]


@pytest.mark.parametrize(("payload", "expected"), MISSING_FIELDS)
def test_a_missing_field_falls_back_to_its_next_source(
    run_hook, in_project: Path, root: Path, payload: dict, expected: str
) -> None:
    payload = {key: str(in_project) if value is PROJECT else value for key, value in payload.items()}
    result = run_hook("SessionStart", payload, env={"CLAUDE_CODE_SESSION_ID": "from-env"})
    assert result.returncode == 0
    assert result.stderr == b""
    assert "No earlier session of acme/widget" in result.context
    assert _sessions(root) == {("acme/widget", expected)}  # no cwd: the hook's own directory, as Claude Code runs it
    assert _meta(root, expected)["source"] == "startup"


def test_without_any_session_id_a_timestamp_and_pid_id_is_made(run_hook, in_project: Path, root: Path) -> None:
    result = run_hook("SessionStart", {"cwd": str(in_project)})
    assert result.returncode == 0
    assert result.stderr == b""
    ((where, session_id),) = _sessions(root)
    assert where == "acme/widget"
    assert session_id[:8].isdigit()
    assert "Z-" in session_id


def test_session_end_without_an_id_ends_the_environments_session(run_hook, in_project: Path, root: Path) -> None:
    env = {"CLAUDE_CODE_SESSION_ID": "from-env"}
    run_hook("SessionStart", {"cwd": str(in_project)}, env=env)
    ended = run_hook("SessionEnd", {"reason": 42}, env=env)  # no id, no cwd, a reason of the wrong type
    assert ended.returncode == 0
    assert ended.stderr == b""
    assert ended.stdout == b""
    meta = _meta(root, "from-env")
    assert meta["status"] == "ended"
    assert meta["end_reason"] == "other"


CWDS = [
    pytest.param("cjk-and-emoji", "local", id="cjk-and-emoji-directory"),
    pytest.param("lone-high-surrogate", "acme/widget", id="lone-high-surrogate"),
    pytest.param("lone-low-surrogate", "acme/widget", id="lone-low-surrogate"),
    pytest.param("nul", "acme/widget", id="nul"),
    pytest.param("relative", "acme/widget", id="relative"),
    pytest.param("a-file", "acme/widget", id="a-file-not-a-directory"),
    pytest.param("nonexistent", "local", id="nonexistent"),
]


def _hostile_cwd(kind: str, project: Path, tmp_path: Path) -> str:
    if kind == "cjk-and-emoji":
        path = tmp_path / "日本語 🎉 ñ"
        path.mkdir()
        return str(path)
    if kind == "a-file":
        (project / "README.md").write_text("a file, not a directory\n")
        return str(project / "README.md")
    return {
        "lone-high-surrogate": f"{project}/\ud800x",  # no file name can hold it
        "lone-low-surrogate": f"{project}/\udcff",  # what Python makes of the byte 0xff in a file name
        "nul": f"{project}/a\x00b",
        "relative": "src/deeper",
        "nonexistent": str(tmp_path / "gone" / "away"),
    }[kind]


@pytest.mark.parametrize(("kind", "where"), CWDS)
def test_a_hostile_cwd_still_gives_the_session_a_board(
    run_hook, in_project: Path, root: Path, tmp_path: Path, kind: str, where: str
) -> None:
    cwd = _hostile_cwd(kind, in_project, tmp_path)
    before = _tree(tmp_path, skip=root)
    result = run_hook("SessionStart", start_payload("s1", cwd))
    assert result.returncode == 0
    assert result.stderr == b""
    assert "Your board:" in result.context
    ((project, session_id),) = _sessions(root)
    assert session_id == "s1"
    assert project == where if "/" in where else project.startswith(f"{where}/")
    assert _meta(root, "s1")["cwd"] == cwd  # kept as given, even a lone surrogate
    ended = run_hook("SessionEnd", end_payload("s1", cwd))
    assert ended.returncode == 0
    assert ended.stderr == b""
    assert _meta(root, "s1")["status"] == "ended"
    assert _tree(tmp_path, skip=root) == before


@pytest.mark.parametrize("event", ["SessionStart", "SessionEnd"])
def test_fifty_megabytes_of_stdin_are_not_read(
    run_hook, in_project: Path, root: Path, tmp_path: Path, event: str
) -> None:
    payload = b'{"session_id": "big", "cwd": "%s", "pad": "%s"}' % (str(in_project).encode(), b"x" * (50 << 20))
    before = _tree(tmp_path, skip=root)
    began = time.monotonic()
    result = run_hook(event, None, raw=payload, env={"CLAUDE_CODE_SESSION_ID": "from-env"})
    elapsed = time.monotonic() - began
    assert result.returncode == 0
    assert result.stderr.count(b"\n") == 1  # said, never silent
    assert elapsed < 10
    # Past the 1 MiB cap the payload is ignored whole: the environment names the session.
    assert _sessions(root) == ({("acme/widget", "from-env")} if event == "SessionStart" else set())
    assert sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) < 1 << 20
    assert _tree(tmp_path, skip=root) == before


# --- the root ------------------------------------------------------------------------------------

ROOT_BREAKAGES = [
    pytest.param("regular-file", id="regular-file"),
    pytest.param(
        "unwritable-directory",
        id="unwritable-directory",
        marks=pytest.mark.skipif(
            os.geteuid() == 0, reason="root writes through chmod 0o500 (test_hooks covers /proc as an unwritable root)"
        ),
    ),
    pytest.param("symlink-loop", id="symlink-loop"),
    pytest.param("relative-path", id="relative-path"),
    pytest.param("under-a-file", id="under-a-file"),
]


def _broken_root(kind: str, tmp_path: Path) -> str:
    """Make the kind of broken root asked for; returns the value for BLACKBOARD_ROOT."""
    if kind == "regular-file":
        (tmp_path / "root-file").write_text("not a directory\n")
        return str(tmp_path / "root-file")
    if kind == "unwritable-directory":
        (tmp_path / "locked").mkdir(mode=0o500)
        return str(tmp_path / "locked")
    if kind == "symlink-loop":
        (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
        (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
        return str(tmp_path / "loop-a")
    if kind == "under-a-file":
        (tmp_path / "plain-file").write_text("a file\n")
        return str(tmp_path / "plain-file" / "root")
    return "relative/root"


@pytest.mark.parametrize("variable", ["BLACKBOARD_ROOT", "MNEMONIC_ROOT"])
@pytest.mark.parametrize("kind", ROOT_BREAKAGES)
def test_a_broken_root_costs_each_hook_one_line_and_writes_nothing(
    run_hook, in_project: Path, tmp_path: Path, kind: str, variable: str
) -> None:
    env = {"BLACKBOARD_ROOT": "", variable: _broken_root(kind, tmp_path)}  # an empty BLACKBOARD_ROOT is unset
    before = _tree(tmp_path)
    started = run_hook("SessionStart", start_payload("s1", in_project), env=env)
    assert started.returncode == 0
    assert started.stdout == b""
    lines = started.stderr.decode().splitlines()
    assert len(lines) == 1, started.stderr
    assert lines[0].startswith("blackboard: session-start hook failed: "), started.stderr
    assert "corrupt" not in lines[0]  # the root is broken, not the session's metadata
    checkpoint = {"session_id": "s1", "cwd": str(in_project)}
    for event, payload in (
        ("Stop", checkpoint),
        ("PreCompact", checkpoint),
        ("SessionEnd", end_payload("s1", in_project)),
    ):
        result = run_hook(event, payload, env=env)
        assert result.returncode == 0, event
        assert result.stdout == b"", event
        assert len(result.stderr.splitlines()) <= 1, (event, result.stderr)
        assert b"Traceback" not in result.stderr, (event, result.stderr)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["sessions"], id="sessions"),
        pytest.param(["note", "x"], id="note"),
        pytest.param(["--session", "s1", "note", "x"], id="note-to-a-session"),
        pytest.param(["show"], id="show"),
        pytest.param(["handoff"], id="handoff"),
    ],
)
@pytest.mark.parametrize("kind", ROOT_BREAKAGES)
def test_a_broken_root_is_one_clear_cli_error(blackboard, tmp_path: Path, kind: str, command: list[str]) -> None:
    broken = _broken_root(kind, tmp_path)
    before = _tree(tmp_path)
    result = blackboard(*command, env={"BLACKBOARD_ROOT": broken})
    if kind == "unwritable-directory" and command == ["sessions"]:
        assert result.returncode == 0
        assert result.stdout.strip() == b"(no sessions)"  # reading an empty root is fine
    else:
        line = _one_error_line(result)
        assert "unexpected" not in line
        assert kind == "unwritable-directory" or broken in line, line  # names the root it cannot use
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    ("kind", "finding"),
    [
        pytest.param("regular-file", "is not a directory", id="regular-file"),
        pytest.param("symlink-loop", "is not a directory", id="symlink-loop"),
        pytest.param("under-a-file", "cannot be created", id="under-a-file"),
        pytest.param(
            "unwritable-directory", "is not writable", id="unwritable-directory", marks=ROOT_BREAKAGES[1].marks
        ),
    ],
)
def test_doctor_names_a_broken_root(blackboard, tmp_path: Path, kind: str, finding: str) -> None:
    broken = _broken_root(kind, tmp_path)
    result = blackboard("doctor", env={"BLACKBOARD_ROOT": broken})
    assert result.returncode == 1, result.stdout
    assert f"the root {broken} {finding}".encode() in result.stdout, result.stdout


# --- corrupt _meta.json --------------------------------------------------------------------------

META_CORRUPTIONS = [
    pytest.param(b"", id="empty"),
    pytest.param(b'{"schema_version": 1, "session_id": "s1", "sta', id="truncated"),
    pytest.param(b"\x00\xff\xfe\x01 binary", id="binary"),
    pytest.param(b'{"schema_version": 1, "session_id": "s1\xff"}', id="invalid-utf8"),
    pytest.param(b"[1, 2]", id="json-list"),
    pytest.param(b"null", id="json-null"),
    pytest.param(
        json.dumps({"schema_version": 1, "session_id": 5, "status": ["x"], "started": 7, "resumed_at": "no"}).encode(),
        id="wrong-types",
    ),
    pytest.param(b'{"schema_version": "1", "session_id": "s1"}', id="schema-version-a-string"),
    pytest.param(DEEP, id="deeply-nested"),
    pytest.param(None, id="a-directory"),
]


def _damage(path: Path, data: Optional[bytes]) -> None:
    path.unlink()
    if data is None:
        path.mkdir()
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("data", META_CORRUPTIONS)
def test_a_corrupt_meta_of_an_ended_session_never_stops_the_next(
    run_hook, blackboard, in_project: Path, root: Path, data: Optional[bytes]
) -> None:
    run_hook("SessionStart", start_payload("s1", in_project))
    _ok(blackboard("--session", "s1", "note", "the parser needs a state machine"))
    run_hook("SessionEnd", end_payload("s1", in_project))
    s1 = _board(root) / "sessions" / "s1"
    _damage(s1 / "_meta.json", data)
    kept = _tree(s1)

    started = run_hook("SessionStart", start_payload("s2", in_project))
    assert started.returncode == 0
    assert started.stderr == b""
    assert "From session s1" in started.context
    assert "the parser needs a state machine" in started.context
    listed = blackboard("sessions")
    assert listed.returncode == 0
    assert b"s1" in listed.stdout
    assert b"s2" in listed.stdout
    warnings = listed.stderr.decode().splitlines()
    assert len(warnings) == 1
    assert warnings[0].startswith("blackboard: warning: ")
    assert "blackboard doctor" in warnings[0]
    assert "blackboard doctor" in _one_error_line(blackboard("show", "s1"))
    assert "# Session s2 (active)" in _ok(blackboard("show"))
    assert "the parser needs a state machine" in _ok(blackboard("handoff", "s1"))
    _ok(blackboard("--session", "s2", "note", "the lexer too"))  # s2 did something: its handoff is the latest

    ended = run_hook("SessionEnd", end_payload("s2", in_project))
    assert ended.returncode == 0
    assert ended.stderr == b""
    fields, _ = split_front_matter((_board(root) / "handoff" / "latest-handoff.md").read_text())
    assert fields["session_id"] == "s2"
    assert fields["previous_sessions"] == ["s1"]
    assert _tree(s1) == kept  # the damaged file and the notes beside it, byte for byte


@pytest.mark.parametrize("data", META_CORRUPTIONS)
def test_a_corrupt_meta_of_the_running_session_costs_one_line_per_hook_and_no_bytes(
    run_hook, blackboard, in_project: Path, root: Path, data: Optional[bytes]
) -> None:
    run_hook("SessionStart", start_payload("s1", in_project))
    _ok(blackboard("--session", "s1", "task", "add", "keep this task"))
    s1 = _board(root) / "sessions" / "s1"
    _damage(s1 / "_meta.json", data)
    kept = _tree(s1)

    checkpoint = {"session_id": "s1", "cwd": str(in_project)}
    for event, payload in (
        ("Stop", checkpoint),
        ("PreCompact", checkpoint),
        ("SessionStart", start_payload("s1", in_project, "compact")),
        ("SessionStart", start_payload("s1", in_project, "resume")),
        ("SessionEnd", end_payload("s1", in_project)),
    ):
        result = run_hook(event, payload)
        assert result.returncode == 0, event
        assert result.stdout == b"", event
        lines = result.stderr.decode().splitlines()
        assert len(lines) == 1, (event, result.stderr)
        assert "blackboard doctor" in lines[0], (event, result.stderr)
    assert _tree(s1) == kept
    assert "blackboard doctor" in _one_error_line(blackboard("show", "s1"))

    # The fix the line names: the damaged file is set aside whole and the session goes on.
    repaired = blackboard("doctor", "--fix")
    assert repaired.returncode == 0, repaired.stdout
    assert b"fixed: " in repaired.stdout, repaired.stdout
    (aside,) = [p for p in s1.iterdir() if p.name.startswith("_meta.json.corrupt-")]
    assert aside.is_dir() if data is None else aside.read_bytes() == data
    resumed = run_hook("SessionStart", start_payload("s1", in_project, "resume"))
    assert resumed.returncode == 0
    assert resumed.stderr == b""
    assert "keep this task" in resumed.context
    assert _meta(root, "s1")["status"] == "active"


# --- corrupt handoffs ----------------------------------------------------------------------------

HANDOFF_CORRUPTIONS = [
    pytest.param(b'---\nsession_id: "s1"\nended: "2026-01-01T00:00:00Z"\n\n# never closed\n', id="unterminated"),
    pytest.param(b"---\n- a\n- b\n---\n# body\n", id="yaml-list"),
    pytest.param(b"---\njust a string\n---\n# body\n", id="yaml-scalar"),
    pytest.param(b"---\nkey: [unclosed\n---\n# body\n", id="yaml-syntax-error"),
    pytest.param(b'---\nx: !!python/object/apply:os.system ["touch {pwned}"]\n---\nbody\n', id="yaml-python-tag"),
    pytest.param(b"\x00\xff\xfe---\x00\x01\x02", id="binary"),
    pytest.param(b'---\nsession_id: "s1\xff"\nended: "\xc3("\n---\n# body \xff\xfe\n', id="invalid-utf8"),
    pytest.param(
        b"---\nsession_id: 5\nended: 12345\nprevious_sessions: 7\ngit_branch: [1]\nend_reason: {}\n---\nbody\n",
        id="wrong-types",
    ),
    pytest.param(
        b'---\nsession_id: "s1"\nended: "2026-01-01T00:00:00Z"\nprevious_sessions: "abc"\n---\nbody\n',
        id="previous-sessions-a-string",
    ),
    pytest.param(b"---\nprevious_sessions: " + b"[" * 5000 + b"]" * 5000 + b"\n---\nbody\n", id="deeply-nested"),
    pytest.param(b"", id="empty"),
    pytest.param(b"---\n---\n", id="only-delimiters"),
]


@pytest.mark.parametrize("data", HANDOFF_CORRUPTIONS)
def test_a_corrupt_handoff_never_stops_the_next_session(
    run_hook, blackboard, in_project: Path, root: Path, tmp_path: Path, data: bytes
) -> None:
    pwned = tmp_path / "pwned"
    data = data.replace(b"{pwned}", str(pwned).encode())
    run_hook("SessionStart", start_payload("s1", in_project))
    run_hook("SessionEnd", end_payload("s1", in_project))
    handoffs = _board(root) / "handoff"
    (handoffs / "handoff-s1.md").write_bytes(data)
    (handoffs / "latest-handoff.md").write_bytes(data)

    started = run_hook("SessionStart", start_payload("s2", in_project))
    assert started.returncode == 0
    assert started.stderr == b""
    assert started.context.startswith("[blackboard] ")
    assert "Your board:" in started.context
    for args in (["handoff"], ["handoff", "s1"]):
        _works_or_one_line(blackboard(*args))
        _works_or_one_line(blackboard(*args, "--json"), as_json=True)
    assert "s1" in _ok(blackboard("sessions"))
    assert "# Session s1 (ended)" in _ok(blackboard("show", "s1"))
    _ok(blackboard("--session", "s2", "note", "the lexer too"))  # s2 did something: its handoff is the latest

    ended = run_hook("SessionEnd", end_payload("s2", in_project))
    assert ended.returncode == 0
    assert ended.stderr == b""
    fields, _ = split_front_matter((handoffs / "latest-handoff.md").read_text())
    assert fields["session_id"] == "s2"
    assert all(isinstance(i, str) for i in fields["previous_sessions"])
    assert (handoffs / "handoff-s1.md").read_bytes() == data  # nobody rewrote the damaged archive
    assert "From session s2" in run_hook("SessionStart", start_payload("s3", in_project)).context
    assert not pwned.exists()  # YAML tags are never executed


# --- legacy flat files ---------------------------------------------------------------------------

OLD_NOTES = b"---\n**Session:** old-1\n**Time:** 2026-01-01T00:00:00Z\n\nfirst entry\n"
TOKEN = b"ghp_16C7e42F292c6912E7710c838347Ae178B4a"
LEGACY_SETS = [
    pytest.param(
        {
            b"session-notes.md": b"---\n**Session:** old\xff\n**Time:** 2026-02-01T00:00:00Z\n\n"
            b"note \xff\xfe \xc3\x28 end\n",
            b"active-tasks.md": b"- [ ] caf\xe9 in latin-1\n",
        },
        True,
        id="invalid-utf8",
    ),
    pytest.param({b"session-notes.md": bytes(range(256)) * 8, b"shared-context.md": b"\x00" * 64}, True, id="binary"),
    pytest.param({b"\xff\xfe odd name.md": b"odd name", b"session-notes.md": OLD_NOTES}, True, id="invalid-utf8-name"),
    pytest.param({b"session-notes.md": b"", b"blockers.md": b"\n\n"}, False, id="empty-files"),
    pytest.param(
        {b"session-notes.md": OLD_NOTES + b"---\n**Session:** old-2\n**Time:** 2026-03-01T00:00:00Z\n\ntoken " + TOKEN},
        True,
        id="secret-in-the-newest-note",
    ),
]


def _write_legacy(directory: Path, files: dict[bytes, bytes]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / os.fsdecode(name)).write_bytes(data)


@pytest.mark.parametrize(("files", "seeds_a_handoff"), LEGACY_SETS)
def test_legacy_files_of_any_bytes_migrate_whole_and_the_session_starts(
    run_hook, blackboard, in_project: Path, root: Path, files: dict[bytes, bytes], seeds_a_handoff: bool
) -> None:
    sources = [_board(root), root / ".blackboard"]  # the project's old flat board and the old global one
    for source in sources:
        _write_legacy(source, files)
    started = run_hook("SessionStart", start_payload("s1", in_project))
    assert started.returncode == 0
    assert started.stderr == b""
    if seeds_a_handoff:
        assert "From session " in started.context
        assert "Handoff migrated from the old flat blackboard" in started.context
    else:
        assert "No earlier session of acme/widget" in started.context
    assert TOKEN.decode() not in started.context
    if any(TOKEN in data for data in files.values()):
        assert "token [REDACTED]" in started.context

    for source in sources:
        legacy = source / "_legacy"
        manifest = json.loads((legacy / "_migration.json").read_text())
        (run,) = manifest["migrations"]
        recorded = {record["file"]: record for record in run["files"]}
        for name, data in files.items():
            text_name = os.fsdecode(name)
            assert (legacy / text_name).read_bytes() == data
            assert not (source / text_name).exists()
            assert recorded[text_name]["size"] == len(data)
            assert recorded[text_name]["sha256"] == hashlib.sha256(data).hexdigest()
    migrated = [_tree(source / "_legacy") for source in sources]

    assert "s1" in _ok(blackboard("sessions"))
    assert "# Session s1 (active)" in _ok(blackboard("show"))
    _works_or_one_line(blackboard("handoff"))
    assert TOKEN not in blackboard("handoff").stdout
    assert _ok(blackboard("migrate", "--dry-run")).strip() == "nothing to migrate"
    again = run_hook("SessionStart", start_payload("s2", in_project))
    assert again.returncode == 0
    assert again.stderr == b""
    assert [_tree(source / "_legacy") for source in sources] == migrated  # exactly once, never touched again


# --- secrets through the CLI ---------------------------------------------------------------------

SECRET_NOTE = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3
SECRET_TASK = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
SECRET_DONE = "sk_live_51HqLyjWDarjtT1zdp7dc"
SECRET_VALUE = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SECRET_KEY = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"  # a valid key name, and a token
SECRET_AUTHOR = "AKIAIOSFODNN7EXAMPLE"
SECRET_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
SECRET_KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
)
SECRETS = [SECRET_NOTE, SECRET_TASK, SECRET_DONE, SECRET_VALUE, SECRET_KEY, SECRET_AUTHOR, SECRET_JWT, SECRET_KEY_BLOCK]


def _assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        middle = secret[len(secret) // 3 : len(secret) // 3 + 12]
        assert secret not in text, (where, secret)
        assert middle not in text, (where, secret)


def test_secrets_written_through_the_cli_never_reach_a_handoff_or_the_context(
    run_hook, blackboard, in_project: Path, root: Path
) -> None:
    run_hook("SessionStart", start_payload("s1", in_project))
    env = {"BLACKBOARD_SESSION_ID": "s1"}
    _ok(blackboard("note", f"deploy key is {SECRET_NOTE}", env=env))
    _ok(blackboard("task", "add", f"rotate {SECRET_TASK} today", env=env))
    done = _ok(blackboard("task", "add", f"revoke {SECRET_DONE}", env=env)).strip()
    _ok(blackboard("task", "done", done, env=env))
    _ok(blackboard("post", "slack_token", f"use {SECRET_VALUE}", env=env))
    _ok(blackboard("post", SECRET_KEY, "the key name itself is the token", env=env))
    _ok(blackboard("--author", SECRET_AUTHOR, "note", "written by a badly named agent", env=env))
    _ok(
        blackboard(
            "note", "-", env=env, stdin=f"curl -H 'Authorization: Bearer {SECRET_JWT}'\n{SECRET_KEY_BLOCK}\n".encode()
        )
    )

    checkpoint = {"session_id": "s1", "cwd": str(in_project)}
    assert run_hook("PreCompact", checkpoint).returncode == 0
    compacted = run_hook("SessionStart", start_payload("s1", in_project, "compact"))
    assert "rotate [REDACTED] today" in compacted.context
    assert "use [REDACTED]" in compacted.context
    _assert_no_secret(compacted.context, "context after compaction")
    handoffs = _board(root) / "handoff"
    _assert_no_secret((handoffs / "handoff-s1.md").read_text(), "draft handoff")

    ended = run_hook("SessionEnd", end_payload("s1", in_project))
    assert ended.returncode == 0
    assert ended.stderr == b""
    for name in ("handoff-s1.md", "latest-handoff.md"):
        text = (handoffs / name).read_text()
        _assert_no_secret(text, name)
        assert "deploy key is [REDACTED]" in text
        assert "revoke [REDACTED]" in text
        assert "· [REDACTED]: written by a badly named agent" in text  # the author's name was a token too
    _assert_no_secret(_ok(blackboard("handoff")), "blackboard handoff")

    started = run_hook("SessionStart", start_payload("s2", in_project))
    assert started.returncode == 0
    assert "From session s1" in started.context
    assert "deploy key is [REDACTED]" in started.context
    assert "written by a badly named agent" in started.context
    _assert_no_secret(started.context, "context of the next session")
    board = "".join(p.read_text() for p in (_board(root) / "sessions" / "s1").glob("*.md"))
    assert all(secret in board for secret in SECRETS)  # redacted on the way out, never lost on the board
