"""Two live Claude Code processes in one checkout: the shell guard keeps one from destroying the other's work.

Session A edits ``src/auth.py`` and stays alive, its model still thinking (a held reply), the edit
uncommitted. Session B's model then runs, through the Bash tool, the commands that lose such work:
``git stash``, ``git reset --hard``, ``cd src && git checkout .`` and ``sed -i`` on the file. The
person allowed ``git`` and ``sed`` in their settings, as people do, so Claude Code itself would run
them; the plugin's PreToolUse hook refuses each (``deny``: no one can be asked under ``-p``), in the
default permission mode and under ``bypassPermissions``, and B's model is told why, naming A. Once
A's work is committed, A still live, B's ``git stash`` runs.

What Claude Code 2.1.332 does, checked with this test:
- Without the guard, every one of these commands runs in both modes and A's edit is lost (the
  default mode included: the person's ``Bash(git:*)`` and ``Bash(sed:*)``), except that the
  default mode itself refuses ``cd src && git checkout .`` ("changes directory before running a
  version-control command"); the hook runs first, so B's model reads the guard's reason there too.
- The hooks of a ``-p`` run get ``CLAUDE_CODE_SESSION_ATTENDED=0``, so the guard says ``deny``.
  An ``ask`` from a hook under ``-p`` is refused as well, also in ``bypassPermissions``, but its
  reason would not say how to go on.
- ``bypassPermissions`` (``--dangerously-skip-permissions``) will not start as root unless the
  machine says it is a deliberate sandbox (``IS_SANDBOX=1``): root runs of this test set it, as a
  container would.
"""

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, bash, held, text, tool_use

pytestmark = pytest.mark.e2e

ORIGINAL = "MAX_TRIES = 3\n"
EDITED = "MAX_TRIES = 5\n"  # A's uncommitted work; every command B tries would undo it
DESTROYERS = ("git stash", "git reset --hard", "cd src && git checkout .", "sed -i s/X/Y/ src/auth.py")
# the same losses in the other forms a model writes them (SPEC §15b), tried where nothing else would stop them
DISGUISED = (
    "FOO=1 git reset --hard",
    "git -C src checkout -- auth.py",
    "bash -c 'git stash'",
    "echo 'MAX_TRIES = 1' > src/auth.py",
    "(cd src; rm auth.py)",
    "git add -A && git commit -qm sweep",
)
# Claude Code keeps the Bash tool's directory from one call to the next: once in `src`, a model that
# writes `cd src; rm auth.py` as if at the top removes src/auth.py, its `cd` failing
STRAYED = ("cd src", "cd src; rm auth.py", "sed -i s/X/Y/ auth.py")
HARMLESS = ("cd src",)
BYPASS = ["--permission-mode", "bypassPermissions"]
SANDBOX = {"IS_SANDBOX": "1"} if os.getuid() == 0 else {}


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, text=True).stdout


def _checkout(project: Path) -> None:
    """``src/auth.py`` committed on main, and settings that let ``git``, ``sed`` and edits run unasked."""
    _git(project, "config", "user.name", "t")
    _git(project, "config", "user.email", "t@example.com")
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text(ORIGINAL)
    (project / "README.md").write_text("widget\n")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "first")
    (project / ".claude").mkdir()
    allow = {"permissions": {"allow": ["Bash(git:*)", "Bash(sed:*)", "Edit"]}}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(allow))
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text(".claude/\n")  # the person's settings are not work


def _editor(root: Path, name: str) -> str:
    """The session whose presence says it edited ``name``, or ``""``."""
    for record in (root / "acme" / "widget" / ".blackboard" / "sessions").glob("*/_live.jsonl"):
        for line in record.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("kind") == "edit" and entry.get("path") == name:
                return record.parent.name
    return ""


def _wait_for_edit(root: Path, name: str, process: "subprocess.Popen[str]", timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while not (editor := _editor(root, name)):
        if process.poll() is not None:
            raise AssertionError(f"session A exited first ({process.returncode}): {process.communicate()[1][-2000:]}")
        assert time.monotonic() < deadline, f"A's edit of {name}: not within {timeout} s"
        time.sleep(0.05)
    return editor


def _assert_refused(model: ModelServer, commands: tuple[str, ...], a_id: str, mode: str) -> None:
    results = model.tool_results()
    assert len(results) == len(commands), model.summary()
    for command, result in zip(commands, results):
        reason = result["text"]
        if command in HARMLESS:
            assert not result.get("is_error") and "blackboard" not in reason, f"{mode}: {command}: {reason}"
            continue
        assert result.get("is_error"), f"{mode}: {command} ran: {reason}"
        assert "another live Claude Code session" in reason, f"{mode}: {command}: {reason}"
        assert f"session {a_id[:8]}" in reason and "src/auth.py" in reason, f"{mode}: {command}: {reason}"
        assert "A: raise the retry limit" in reason  # A's request, as data
        assert "No one can be asked" in reason  # deny, not ask: `-p` has no one to ask


def test_another_live_sessions_uncommitted_file_survives_git_and_sed_and_is_free_once_committed(
    run_claude: ClaudeRunner, project: Path, root: Path
) -> None:
    _checkout(project)
    auth = project / "src" / "auth.py"
    thinking = threading.Event()
    with ModelServer() as model_a:
        edit = {"file_path": str(auth), "old_string": "MAX_TRIES = 3", "new_string": "MAX_TRIES = 5"}
        model_a.add(tool_use("Edit", edit), held(thinking, text("A is done")))
        a = run_claude.start(["-p", "A: raise the retry limit"], project, model_a)
        try:
            a_id = _wait_for_edit(root, "src/auth.py", a)
            assert auth.read_text() == EDITED

            runs = (
                ("default", [], {}, DESTROYERS),
                ("bypassPermissions", BYPASS, SANDBOX, DESTROYERS + DISGUISED + STRAYED),
            )
            for mode, args, env, commands in runs:
                with ModelServer() as model_b:
                    model_b.add(*(bash(command) for command in commands), text("B gives up"))
                    b = run_claude(["-p", "B: clean up the checkout", *args], project, model_b, env)
                    assert b.returncode == 0, f"{mode}: {b.stderr}\n{model_b.summary()}"
                    _assert_refused(model_b, commands, a_id, mode)
                assert auth.read_text() == EDITED, mode  # A's work is where A left it
                assert _git(project, "stash", "list") == "" and _git(project, "log", "--format=%s") == "first\n", mode
                assert _git(project, "status", "--porcelain") == " M src/auth.py\n", mode

            _git(project, "commit", "-q", "-am", "A: raise the retry limit")  # A's work is committed, A still live
            (project / "README.md").write_text("widget, B's draft\n")
            with ModelServer() as model_b:
                model_b.add(bash("git stash"), text("B stashed its draft"))
                b = run_claude(["-p", "B: put my draft aside"], project, model_b)
                assert b.returncode == 0, b.stderr
                (stashed,) = model_b.tool_results()
            assert not stashed.get("is_error") and "blackboard" not in stashed["text"], stashed["text"]
            assert _git(project, "stash", "list").count("\n") == 1  # B's draft is stashed
            assert _git(project, "stash", "show", "--name-only") == "README.md\n"
            assert _git(project, "status", "--porcelain") == "" and auth.read_text() == EDITED
            assert a.poll() is None, "A was alive throughout"
        finally:
            thinking.set()
            a.communicate(timeout=120)
        assert a.returncode == 0
