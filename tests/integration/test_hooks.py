"""The hooks as Claude Code runs them: the hooks.json command and args, JSON on stdin."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from blackboard import entries
from helpers import HOSTILE_SESSION_IDS, REPO, dead_pid, end_payload, hook_argv, make_git_project, start_payload

ROOT_BOARD = ("acme", "widget", ".blackboard")


def _board(root: Path) -> Path:
    return root.joinpath(*ROOT_BOARD)


def _meta(root: Path, session_id: str) -> dict:
    return json.loads((_board(root) / "sessions" / session_id / "_meta.json").read_text())


def test_two_sessions_hand_off(run_hook, hook_venv: Path, project: Path, root: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "session-env.sh"
    first = run_hook("SessionStart", start_payload("s1", project), env={"CLAUDE_ENV_FILE": str(env_file)})
    assert first.returncode == 0
    assert first.stderr == b""
    assert "No earlier session of acme/widget" in first.context
    board = _board(root) / "sessions" / "s1"
    assert env_file.read_text() == (
        f"export BLACKBOARD_SESSION_ID='s1'\nexport BLACKBOARD_DIR='{board}'\nexport BLACKBOARD_VENV='{hook_venv}'\n"
    )

    entries.append(str(board / "active-tasks.md"), "t", {"status": "open", "author": "main"}, "finish the parser")
    entries.append(str(board / "session-notes.md"), "n", {"author": "main"}, "parser uses a state machine")
    assert run_hook("Stop", {"session_id": "s1", "cwd": str(project), "hook_event_name": "Stop"}).stdout == b""
    ended = run_hook("SessionEnd", end_payload("s1", project))
    assert ended.returncode == 0
    assert ended.stdout == b""
    assert ended.stderr == b""
    assert _meta(root, "s1")["status"] == "ended"

    second = run_hook("SessionStart", start_payload("s2", project))
    assert "From session s1" in second.context
    assert "finish the parser" in second.context
    assert "parser uses a state machine" in second.context


def test_stdout_is_exactly_one_json_object(run_hook, project: Path) -> None:
    result = run_hook("SessionStart", start_payload("s1", project))
    data = json.loads(result.stdout)
    assert list(data) == ["hookSpecificOutput"]
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert len(data["hookSpecificOutput"]["additionalContext"]) < 10_000


def test_resume_reopens_and_injects_its_own_board(run_hook, project: Path, root: Path) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    board = _board(root) / "sessions" / "s1"
    entries.append(str(board / "active-tasks.md"), "t", {"status": "open"}, "resume me")
    run_hook("SessionEnd", end_payload("s1", project))
    resumed = run_hook("SessionStart", start_payload("s1", project, "resume"))
    assert "resume me" in resumed.context
    assert "after resume" in resumed.context
    meta = _meta(root, "s1")
    assert meta["status"] == "active"
    assert len(meta["resumed_at"]) == 1


def test_clear_links_parent(run_hook, project: Path, root: Path) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    run_hook("SessionEnd", end_payload("s1", project, reason="clear"))
    run_hook("SessionStart", start_payload("s2", project, "clear"))
    assert _meta(root, "s2")["parent_session_id"] == "s1"


def test_compact_reinjects_open_tasks(run_hook, project: Path, root: Path) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    board = _board(root) / "sessions" / "s1"
    entries.append(str(board / "active-tasks.md"), "t", {"status": "open"}, "survive compaction")
    entries.put(str(board / "shared-context.md"), "schema", {"author": "w"}, "the schema is v3")
    assert run_hook("PreCompact", {"session_id": "s1", "cwd": str(project), "trigger": "auto"}).stdout == b""
    compacted = run_hook("SessionStart", start_payload("s1", project, "compact"))
    assert "survive compaction" in compacted.context
    assert "the schema is v3" in compacted.context
    assert _meta(root, "s1")["status"] == "active"


def _outside_root_snapshot(tmp_path: Path, root: Path) -> set:
    inside = (str(root), str(root) + os.sep)
    return {str(p) for p in tmp_path.rglob("*") if not (str(p) == inside[0] or str(p).startswith(inside[1]))}


HOSTILE_STDIN = [
    pytest.param(b"", id="empty"),
    pytest.param(b"{not json", id="invalid-json"),
    pytest.param(b"[1, 2, 3]", id="json-array"),
    pytest.param(b'"just a string"', id="json-string"),
    pytest.param(b'{"session_id": 42, "cwd": ["x"], "source": {}}', id="wrong-types"),
    pytest.param(b'{"session_id": "../../../etc/evil"}', id="traversal-id"),
    pytest.param(b'{"session_id": "/abs/path"}', id="absolute-id"),
    pytest.param(b'{"session_id": "a\\u0000b"}', id="nul-id"),
    pytest.param(json.dumps({"session_id": "x" * 10_000}).encode(), id="huge-id"),
    pytest.param(b"\xff\xfe\x00garbage", id="binary"),
    pytest.param(b'{"session_id": "ok", "x": "' + b"y" * (3 << 20) + b'"}', id="three-megabytes"),
]


@pytest.mark.parametrize(
    "event", ["SessionStart", "SessionEnd", "Stop", "PreCompact", "UserPromptSubmit", "PostToolUse"]
)
@pytest.mark.parametrize("stdin", HOSTILE_STDIN)
def test_hostile_stdin_never_breaks_the_session(run_hook, tmp_path: Path, root: Path, event: str, stdin: bytes) -> None:
    before = _outside_root_snapshot(tmp_path, root)
    result = run_hook(event, None, raw=stdin, env={"CLAUDE_CODE_SESSION_ID": "from-env"})
    assert result.returncode == 0
    assert len(result.stderr.splitlines()) <= 1
    if result.stdout:
        json.loads(result.stdout)
    assert _outside_root_snapshot(tmp_path, root) == before


@pytest.mark.parametrize("session_id", [pytest.param(v, id=name) for name, v in HOSTILE_SESSION_IDS.items()])
def test_a_refused_id_is_logged_and_writes_no_session(
    run_hook, project: Path, root: Path, tmp_path: Path, session_id: str
) -> None:
    before = _outside_root_snapshot(tmp_path, root)
    result = run_hook("SessionStart", start_payload(session_id, project), env={"CLAUDE_CODE_SESSION_ID": "fine"})
    assert result.returncode == 0
    assert result.stdout == b""
    assert b"refusing session id" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert "refusing session id" in (root / "logs" / "hooks.log").read_text()
    assert not (root / "acme").exists()  # neither the hostile id nor the environment's id got a board
    assert _outside_root_snapshot(tmp_path, root) == before


@pytest.mark.parametrize("breakage", ["root-is-a-file", "root-unwritable", "sessions-is-a-file"])
def test_a_broken_root_never_breaks_the_session(run_hook, project: Path, root: Path, breakage: str) -> None:
    env: dict = {}
    if breakage == "root-is-a-file":
        root.write_text("not a directory")
    elif breakage == "root-unwritable":
        # As root, permissions do not stop writes; /proc refuses new directories to everyone.
        if os.geteuid() == 0:
            env["BLACKBOARD_ROOT"] = "/proc/blackboard-unwritable"
        else:
            root.mkdir()
            root.chmod(0o500)
    else:
        (_board(root)).mkdir(parents=True)
        (_board(root) / "sessions").write_text("a file where a directory should be")
    result = run_hook("SessionStart", start_payload("s1", project), env=env)
    assert result.returncode == 0
    assert result.stdout == b""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(b"blackboard: ")


def test_unknown_event_argument_exits_zero(hook_venv: Path, project: Path) -> None:
    import subprocess

    from helpers import REPO

    proc = subprocess.run(
        [str(REPO / "hooks" / "run"), "no-such-event"],
        input=b"{}",
        capture_output=True,
        env=dict(os.environ, BLACKBOARD_VENV=str(hook_venv)),
        timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stdout == b""
    assert b"unknown hook event" in proc.stderr


def test_failures_are_logged_with_a_traceback_and_the_log_is_bounded(run_hook, project: Path, root: Path) -> None:
    logs = root / "logs"
    logs.mkdir(parents=True)
    (logs / "hooks.log").write_text("x" * (2 << 20))
    run_hook("SessionStart", start_payload("bad/id", project))
    assert (logs / "hooks.log.1").stat().st_size == 2 << 20
    assert "Traceback" in (logs / "hooks.log").read_text()


def test_the_logs_are_private_whatever_the_umask_and_an_old_open_one_is_made_private(
    hook_venv: Path, project: Path, root: Path
) -> None:
    """Issue 32, point 14: logs were created with the umask's bits (0666 under umask 000)."""
    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(REPO), BLACKBOARD_VENV=str(hook_venv))
    run = [*hook_argv("SessionStart")]
    payload = json.dumps(start_payload("bad/id", project)).encode()
    subprocess.run(["sh", "-c", 'umask 000; exec "$@"', "sh", *run], input=payload, env=env, capture_output=True)
    log = root / "logs" / "hooks.log"
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    assert oct((root / "logs").stat().st_mode & 0o777) == "0o700"
    log.chmod(0o644)  # as an earlier version left it
    subprocess.run(run, input=payload, env=env, capture_output=True)
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    assert log.read_text().count("refusing session id") == 2


def test_a_session_killed_without_session_end_is_abandoned_by_the_next_start(
    run_hook, project: Path, root: Path
) -> None:
    run_hook("SessionStart", start_payload("killed", project), env={"CLAUDE_PID": str(dead_pid())})
    board = _board(root) / "sessions" / "killed"
    entries.append(str(board / "active-tasks.md"), "t", {"status": "open"}, "left mid-way")
    # no SessionEnd: Ctrl+C
    second = run_hook("SessionStart", start_payload("next", project), env={"CLAUDE_PID": str(os.getpid())})
    meta = _meta(root, "killed")
    assert meta["status"] == "abandoned"
    assert meta["end_reason"].startswith("abandoned: its Claude Code process")
    assert "From session killed" in second.context
    assert "left mid-way" in second.context


def test_events_find_the_session_after_the_agent_changed_directory(
    run_hook, project: Path, root: Path, tmp_path: Path
) -> None:
    run_hook("SessionStart", start_payload("s1", project))
    elsewhere = tmp_path / "unrelated" / "src"
    elsewhere.mkdir(parents=True)
    payload = end_payload("s1", project)
    payload["cwd"] = str(elsewhere)  # Claude Code reports the session's current directory
    assert run_hook("SessionEnd", payload).stderr == b""
    assert _meta(root, "s1")["status"] == "ended"
    assert not (root / "local").exists()


def test_on_the_machines_python_without_dependencies_the_lifecycle_still_works(project: Path, root: Path) -> None:
    """What the launcher falls back to when the environment cannot be built: no PyYAML, no click."""
    import subprocess
    import sys

    from helpers import REPO

    python = str(Path(sys.base_prefix) / "bin" / "python3")
    no_packages = [python, "-I", "-S"]  # whatever this machine's python3 has installed, none of it is seen
    assert subprocess.run([*no_packages, "-c", "import yaml"], capture_output=True).returncode != 0
    board = _board(root)
    board.mkdir(parents=True)
    (board / "session-notes.md").write_text("---\n**Session:** old\n**Time:** 2026-01-01T00:00:00Z\n\nold note\n")

    def hook(event: str, payload: dict) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*no_packages, str(REPO / "hooks" / "launch.py"), event],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=60,
        )

    started = hook("session-start", start_payload("s1", project))
    assert started.returncode == 0, started.stderr
    assert started.stderr == b"", started.stderr
    assert "old note" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (board / "_legacy" / "session-notes.md").exists()
    assert hook("stop", {"session_id": "s1", "cwd": str(project)}).stderr == b""
    (project / "util.py").write_text("x = 2\n")  # it did something: its handoff replaces the legacy one
    edit = {"tool_name": "Write", "tool_input": {"file_path": str(project / "util.py"), "content": "x = 2\n"}}
    assert hook("post-tool-use", {"session_id": "s1", "cwd": str(project), **edit}).stderr == b""
    assert hook("session-end", end_payload("s1", project)).stderr == b""
    assert _meta(root, "s1")["status"] == "ended"
    assert (board / "handoff" / "latest-handoff.md").read_text().count('session_id: "s1"') == 1


def _pre_tool_use(command: str, cwd: Path, session_id: str = "s1") -> dict:
    return {
        "session_id": session_id,
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "a board command"},
    }


def test_pre_tool_use_approves_a_plain_board_command(run_hook, project: Path) -> None:
    result = run_hook("PreToolUse", _pre_tool_use("blackboard note 'found the bug'", project))
    assert result.returncode == 0
    assert result.stderr == b""
    decision = json.loads(result.stdout)["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse"
    assert decision["permissionDecision"] == "allow"


@pytest.mark.parametrize(
    ("payload", "env"),
    [
        pytest.param(_pre_tool_use("blackboard note a; touch x", Path("/")), {}, id="compound"),
        pytest.param(_pre_tool_use("blackboard cleanup --yes", Path("/")), {}, id="deletes"),
        pytest.param(_pre_tool_use("blackboard note a", Path("/")), {"BLACKBOARD_AUTO_ALLOW": "0"}, id="turned-off"),
        pytest.param(dict(_pre_tool_use("blackboard note a", Path("/")), tool_name="Write"), {}, id="not-bash"),
        pytest.param({"tool_name": "Bash", "tool_input": "blackboard note a"}, {}, id="input-not-an-object"),
        pytest.param({}, {}, id="empty-payload"),
    ],
)
def test_pre_tool_use_says_nothing_about_anything_else(run_hook, payload: dict, env: dict) -> None:
    result = run_hook("PreToolUse", payload, env=env)
    assert result.returncode == 0
    assert result.stdout == b""
    assert result.stderr == b""


def _system_message(result) -> object:
    return json.loads(result.stdout).get("systemMessage")


def test_the_person_is_told_which_session_continues_in_one_line(
    run_hook, hook_venv: Path, project: Path, root: Path
) -> None:
    first = run_hook("SessionStart", start_payload("5f1c2a9e-first", project))
    assert _system_message(first) is None  # nothing to say on a new project's first session
    board = root / "acme" / "widget" / ".blackboard" / "sessions" / "5f1c2a9e-first"
    tasks = board / "active-tasks.md"
    entries.append(str(tasks), "t", {"status": "open", "author": "main"}, "token ghp_" + "A1b2C3d4E5" * 4)
    entries.append(str(tasks), "t", {"status": "claimed", "author": "main", "claimed_by": "w1"}, "second")
    run_hook("SessionEnd", end_payload("5f1c2a9e-first", project))

    second = run_hook("SessionStart", start_payload("next", project))

    message = _system_message(second)
    assert isinstance(message, str)
    expected = r"blackboard: continuing from session 5f1c2a9e… \(ended \d+ seconds? ago\): 2 open tasks, 1 claimed"
    assert re.fullmatch(expected, message), message  # counts and ids only: no board text, no token


def test_the_person_is_told_of_abandoned_sessions(run_hook, project: Path) -> None:
    run_hook("SessionStart", start_payload("killed", project), env={"CLAUDE_PID": str(dead_pid())})
    second = run_hook("SessionStart", start_payload("next", project), env={"CLAUDE_PID": str(os.getpid())})
    message = _system_message(second)
    assert isinstance(message, str)
    assert "1 earlier session that never ended marked abandoned" in message
    assert message.count("\n") == 0


def test_an_unusable_env_file_costs_only_the_exports(run_hook, project: Path, tmp_path: Path) -> None:
    result = run_hook("SessionStart", start_payload("s1", project), env={"CLAUDE_ENV_FILE": str(tmp_path)})
    assert result.returncode == 0
    assert "Your board:" in result.context
    assert _system_message(result) == "blackboard: something failed; run `blackboard doctor`"
    assert result.stderr.count(b"\n") == 1


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: b"\xef\xbb\xbf" + text.encode(), id="utf-8-bom"),
        pytest.param(lambda text: text.encode("utf-16"), id="utf-16"),
    ],
)
def test_stdin_with_a_bom_is_read(run_hook, project: Path, root: Path, encode) -> None:
    raw = encode(json.dumps(start_payload("from-stdin", project)))
    result = run_hook("SessionStart", None, raw=raw, env={"CLAUDE_CODE_SESSION_ID": "from-env"})
    assert result.returncode == 0
    assert result.stderr == b""
    assert [p.name for p in (root / "acme" / "widget" / ".blackboard" / "sessions").iterdir()] == ["from-stdin"]


def test_pre_tool_use_approves_only_files_git_keeps_and_sessions_of_this_project(
    run_hook, project: Path, tmp_path: Path
) -> None:
    """An agent, or a prompt injection in a README, must not send a secret file or another project's board unasked."""
    (project / ".gitignore").write_text("*.log\n")
    (project / "build.log").write_text("token=abc")
    (project / "notes.md").write_text("plain notes")
    (project / ".env").write_text("API_KEY=sk-live-123")
    other = make_git_project(tmp_path / "gadget", remote="git@github.com:acme/gadget.git")
    assert run_hook("SessionStart", start_payload("s1", project)).returncode == 0
    assert run_hook("SessionStart", start_payload("gadget-1", other)).returncode == 0

    def approved(command: str) -> bool:
        result = run_hook("PreToolUse", _pre_tool_use(command, project))
        assert result.returncode == 0 and result.stderr == b""
        return bool(result.stdout)

    assert approved("blackboard note --file notes.md")
    assert approved("blackboard show s1")
    assert not approved("blackboard note --file build.log")  # git ignores it
    assert not approved("blackboard note --file .env")
    assert not approved("blackboard show gadget-1")  # another project's board
    assert not approved("blackboard handoff gadget-1")
    assert not approved("blackboard sessions --all-projects")


def _secrets_checkout(project: Path) -> None:
    (project / ".gitignore").write_text("secret.key\n/config/master.key\n")
    (project / "config" / "initializers").mkdir(parents=True)
    (project / "config" / "master.key").write_text("MASTER")
    (project / "secret.key").write_text("KEY")
    (project / "notes").mkdir()
    (project / "notes" / "n.txt").write_text("plain")


@pytest.mark.parametrize(
    ("setup", "command"),
    [
        pytest.param(
            lambda p: (p / "notes" / "mk").symlink_to("../config/master.key"),
            "note --file notes/mk",
            id="link-to-ignored",
        ),
        pytest.param(
            lambda p: (p / "lnk").symlink_to("config/initializers"),
            "note --file lnk/../master.key",
            id="link-then-dotdot",
        ),
        pytest.param(
            lambda p: os.link(p / "secret.key", p / "notes" / "hard"), "note --file notes/hard", id="hard-link"
        ),
        pytest.param(
            lambda p: (p / ".git" / "HEAD").unlink() or None,
            "note --file secret.key",
            id="ignored-in-a-broken-checkout",
        ),
        pytest.param(lambda p: None, "note " + "--file notes/n.txt " * 40, id="many-files"),
        pytest.param(
            lambda p: subprocess.run(["git", "init", "-q", str(p / "config")], check=True).returncode
            or (p / ".gitignore").write_text("/config/prod.txt\n")
            or (p / "config" / "prod.txt").write_text("DATABASE PASSWORD"),
            "note --file config/prod.txt",
            id="ignored-behind-a-nested-git-file",
        ),
        pytest.param(
            lambda p: shutil.rmtree(p / ".git") or (p / ".git").write_text("nonsense"),
            "note --file secret.key",
            id="ignored-behind-an-unreadable-git",
        ),
    ],
)
def test_pre_tool_use_holds_against_file_tricks(run_hook, project: Path, setup, command: str) -> None:
    _secrets_checkout(project)
    setup(project)
    result = run_hook("PreToolUse", _pre_tool_use(f"blackboard {command}", project))
    assert result.returncode == 0 and result.stdout == b""
    if (project / ".git" / "HEAD").is_file():  # a checkout git can read approves a plain file
        plain = run_hook("PreToolUse", _pre_tool_use("blackboard note --file notes/n.txt", project))
        assert json.loads(plain.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_pre_tool_use_sees_the_checkouts_inside_a_folder_that_is_none(run_hook, project: Path, tmp_path: Path) -> None:
    _secrets_checkout(project)
    workspace = project.parent  # not a checkout itself; the project is one inside it
    result = run_hook("PreToolUse", _pre_tool_use("blackboard note --file widget/secret.key", workspace))
    assert result.returncode == 0 and result.stdout == b""
    result = run_hook("PreToolUse", _pre_tool_use("blackboard note --file widget/notes/n.txt", workspace))
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_pre_tool_use_takes_a_session_folder_without_metadata_for_no_session_of_this_project(
    run_hook, project: Path, root: Path, tmp_path: Path
) -> None:
    other = make_git_project(tmp_path / "gadget", remote="git@github.com:acme/gadget.git")
    run_hook("SessionStart", start_payload("s1", project))
    run_hook("SessionStart", start_payload("sx", other))
    (root / "acme" / "widget" / ".blackboard" / "sessions" / "sx").mkdir()  # left by an interrupted start
    assert run_hook("PreToolUse", _pre_tool_use("blackboard show sx", project)).stdout == b""


def test_a_repositorys_gitignore_cannot_unignore_what_the_persons_own_excludes_name(
    run_hook, project: Path, tmp_path: Path
) -> None:
    """`!terraform.tfstate.backup` in a shipped .gitignore outranks the person's global excludes in git's eyes."""
    home = tmp_path / "person-home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("prod-settings.yaml\nkeys/\n")
    (project / ".gitignore").write_text("!prod-settings.yaml\n!keys/\n")
    (project / "prod-settings.yaml").write_text("DATABASE_URL=postgres://admin:hunter2@db/prod")
    (project / "keys").mkdir()
    (project / "keys" / "deploy.txt").write_text("a deploy secret")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("local-notes.txt\n")
    (project / "local-notes.txt").write_text("mine only")
    (project / "plain.txt").write_text("fine to share")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}

    def approved(command: str) -> bool:
        result = run_hook("PreToolUse", _pre_tool_use(command, project), env=env)
        assert result.returncode == 0 and result.stderr == b""
        return bool(result.stdout)

    assert approved("blackboard note --file plain.txt")
    assert not approved("blackboard note --file prod-settings.yaml")
    assert not approved("blackboard note --file keys/deploy.txt")
    assert not approved("blackboard note --file local-notes.txt")
