"""No session destroys another's work: the shell guard, holds and shared files through the hooks as Claude Code
runs them (issue 38, SPEC §15b). A1 has changed ``src/auth.py`` and not committed it; b2 is another live session
of the same checkout."""

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import REPO, start_payload

Start = Callable[[], subprocess.Popen]


def _git(checkout: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


def _bash(session_id: str, cwd: Path, command: str, event: str = "PreToolUse", mode: str = "default") -> dict:
    return {
        "session_id": session_id,
        "cwd": str(cwd),
        "hook_event_name": event,
        "permission_mode": mode,
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }


def _edit(session_id: str, cwd: Path, path: Path, event: str = "PreToolUse", mode: str = "default") -> dict:
    payload = _bash(session_id, cwd, "", event, mode)
    payload.update(tool_name="Edit", tool_input={"file_path": str(path), "old_string": "1", "new_string": "2"})
    return payload


def _decision(result) -> str | None:  # type: ignore[no-untyped-def]
    assert result.returncode == 0 and result.stderr == b"", result.stderr
    if not result.stdout:
        return None
    return json.loads(result.stdout)["hookSpecificOutput"].get("permissionDecision")


@pytest.fixture
def a_holds(run_hook, project: Path, claudes: Start) -> tuple[dict, dict]:
    """a1 and b2 live, each with its own process; a1 changed src/auth.py (uncommitted) and asked for it."""
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text("token = 1\n")
    (project / "notes.txt").write_text("n\n")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "first")
    envs = ({"CLAUDE_PID": str(claudes().pid)}, {"CLAUDE_PID": str(claudes().pid)})
    for session_id, env in zip(("a1", "b2"), envs):
        assert run_hook("SessionStart", start_payload(session_id, project), env=env).returncode == 0
    prompt = {"session_id": "a1", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": "rotate tokens"}
    run_hook("UserPromptSubmit", prompt, env=envs[0])
    (project / "src" / "auth.py").write_text("token = 2  # rotated\n")
    run_hook("PostToolUse", _edit("a1", project, project / "src" / "auth.py", "PostToolUse"), env=envs[0])
    return envs


DESTROYING = [
    pytest.param("git stash", id="stash"),
    pytest.param("git stash push -m wip", id="stash-push"),
    pytest.param("git reset --hard", id="reset-hard"),
    pytest.param("git reset --hard HEAD~0", id="reset-hard-rev"),
    pytest.param("git checkout -b other", id="checkout-new-branch"),
    pytest.param("git switch -c other", id="switch-new-branch"),
    pytest.param("git checkout .", id="checkout-dot"),
    pytest.param("cd src && git checkout .", id="cd-checkout-dot"),
    pytest.param("git checkout -- src/auth.py", id="checkout-path"),
    pytest.param("git restore src/auth.py", id="restore"),
    pytest.param("git clean -fdx", id="clean"),
    pytest.param("git pull", id="pull"),
    pytest.param("git rebase main", id="rebase"),
    pytest.param("git merge other", id="merge"),
    pytest.param("git add -A && git commit -m mine", id="add-all"),
    pytest.param("git add . ; git commit -m mine", id="add-dot"),
    pytest.param("git commit -am mine", id="commit-all"),
    pytest.param("git add src/auth.py", id="add-the-file"),
    pytest.param("FOO=1 git reset --hard", id="env-prefix"),
    pytest.param("git -C {top} stash", id="git-C"),
    pytest.param("bash -c 'git stash'", id="bash-c"),
    pytest.param("(cd src; git stash)", id="subshell"),
    pytest.param("ls && git stash || true", id="compound"),
    pytest.param("sed -i s/token/key/ src/auth.py", id="sed-i"),
    pytest.param("cd src && sed -i 's/2/3/' auth.py", id="cd-sed-i"),
    pytest.param("rm src/auth.py", id="rm"),
    pytest.param("rm -rf src", id="rm-folder"),
    pytest.param("mv notes.txt src/auth.py", id="mv-over"),
    pytest.param("cp notes.txt src/auth.py", id="cp-over"),
    pytest.param("echo x > src/auth.py", id="redirect"),
    pytest.param("echo x >> src/auth.py", id="append"),
    pytest.param("echo x | tee src/auth.py", id="tee"),
    pytest.param("truncate -s 0 src/auth.py", id="truncate"),
    pytest.param("patch -p1 < fix.diff", id="patch"),
    pytest.param("git apply fix.diff", id="git-apply"),
    pytest.param("git stash && echo 'unbalanced", id="unparseable"),
]


@pytest.mark.parametrize("command", DESTROYING)
def test_a_command_that_would_destroy_held_work_is_asked_about(run_hook, project: Path, a_holds, command: str) -> None:
    result = run_hook("PreToolUse", _bash("b2", project, command.format(top=project)))
    assert _decision(result) == "ask", command
    answer = json.loads(result.stdout)
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "session a1" in reason and '"rotate tokens"' in reason and "src/auth.py" in reason
    assert answer["systemMessage"] == reason


@pytest.mark.parametrize(
    ("mode", "env"),
    [("bypassPermissions", {}), ("dontAsk", {}), ("default", {"CLAUDE_CODE_SESSION_ATTENDED": "0"})],
    ids=["bypass", "dont-ask", "headless"],
)
@pytest.mark.parametrize("command", ["git stash", "cd src && git checkout .", "sed -i s/a/b/ src/auth.py"])
def test_where_no_one_can_be_asked_it_is_refused(
    run_hook, project: Path, a_holds, mode: str, env: dict, command: str
) -> None:
    result = run_hook("PreToolUse", _bash("b2", project, command, mode=mode), env=env)
    assert _decision(result) == "deny"
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "commit or release" in reason and "blackboard who" in reason


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git diff src/auth.py",
        "git log --oneline",
        "git stash list",
        "git show HEAD",
        "cat src/auth.py",
        "grep -r token src",
        "sed -n 1p src/auth.py",
        "ls -la",
        "echo hello > notes.txt",
        "rm notes.txt",
        "pytest -q",
        "python3 tool.py <<'EOF'\nos.remove('src/auth.py') is data for the script\nEOF",
        "cat <<'A' > /tmp/x.py; python3 <<'B'\nimport os\nos.remove('src/auth.py')\nA\nprint(1)\nB",
        "python3 <<'EOF'\nprint(open('src/auth.py').read())\nEOF",
        "python3 -c \"import sys; sys.stdout.write(open('src/auth.py').read())\"",
        "python3 -c \"print(open('src/auth.py').read().replace('token', 'key'))\"",
        "python3 <<'EOF'\ntext = open('src/auth.py').read()\nprint(text.replace('a', 'b'))\nEOF",
        "git update-index -q --refresh",
        "git read-tree --help",
        "git stash --help",
    ],
)
def test_commands_that_only_read_or_touch_nothing_held_say_nothing(
    run_hook, project: Path, a_holds, command: str
) -> None:
    result = run_hook("PreToolUse", _bash("b2", project, command))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_a_sessions_own_commands_are_its_own_business(run_hook, project: Path, a_holds) -> None:
    assert _decision(run_hook("PreToolUse", _bash("a1", project, "git stash"), env=a_holds[0])) is None


def test_committed_work_is_no_longer_held(run_hook, project: Path, a_holds) -> None:
    _git(project, "commit", "-qam", "a1 commits")
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "git stash", mode="bypassPermissions"))) is None
    edit = _edit("b2", project, project / "src" / "auth.py", mode="bypassPermissions")
    assert _decision(run_hook("PreToolUse", edit)) is None  # the edit guard frees it too


def test_when_the_holder_has_ended_nothing_is_held(run_hook, project: Path, a_holds) -> None:
    run_hook("SessionEnd", {"session_id": "a1", "cwd": str(project), "reason": "other"}, env=a_holds[0])
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "git stash", mode="bypassPermissions"))) is None


def _cli(project: Path, session_id: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO / "bin" / "blackboard"), "--session", session_id, *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")},
    )


def test_an_explicit_hold_guards_until_it_is_released(run_hook, project: Path, a_holds) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "intro.md").write_text("intro\n")
    _git(project, "add", "docs")
    _git(project, "commit", "-qm", "docs")
    held = _cli(project, "a1", "hold", "docs/*", "--reason", "rewriting the docs", "--for", "2h")
    assert held.returncode == 0, held.stderr

    asked = run_hook("PreToolUse", _bash("b2", project, "rm docs/intro.md"))
    edit = run_hook("PreToolUse", _edit("b2", project, project / "docs" / "intro.md"))
    shown = _cli(project, "b2", "who")

    assert _decision(asked) == "ask" and '"rewriting the docs"' in json.loads(asked.stdout)["systemMessage"]
    assert _decision(edit) == "ask"
    assert 'holds: "docs/*" (held explicitly, because "rewriting the docs", until ' in shown.stdout
    assert _cli(project, "a1", "release").returncode == 0
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "rm docs/intro.md"))) is None


def test_shared_files_are_never_held(run_hook, project: Path, a_holds) -> None:
    assert _cli(project, "b2", "share", "src/auth.py").returncode == 0
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "sed -i s/a/b/ src/auth.py"))) is None
    assert _decision(run_hook("PreToolUse", _edit("b2", project, project / "src" / "auth.py"))) is None
    assert _cli(project, "b2", "share", "--remove", "src/auth.py").returncode == 0
    assert _decision(run_hook("PreToolUse", _edit("b2", project, project / "src" / "auth.py"))) == "ask"


def test_a_file_written_through_the_shell_is_held_like_an_edited_one(run_hook, project: Path, a_holds) -> None:
    """Point 3: a1 rewrote notes.txt with sed -i; b2's edit of it is asked about."""
    (project / "notes.txt").write_text("m\n")
    run_hook("PostToolUse", _bash("a1", project, "sed -i s/n/m/ notes.txt", event="PostToolUse"), env=a_holds[0])
    assert _decision(run_hook("PreToolUse", _edit("b2", project, project / "notes.txt"))) == "ask"


def test_who_shows_uncommitted_files(run_hook, project: Path, a_holds) -> None:
    shown = _cli(project, "b2", "who")
    assert shown.returncode == 0, shown.stderr
    assert 'edited: "src/auth.py" (uncommitted, ' in shown.stdout


def test_with_no_other_live_session_a_stash_says_nothing(run_hook, project: Path, a_holds) -> None:
    run_hook("SessionEnd", {"session_id": "a1", "cwd": str(project), "reason": "other"}, env=a_holds[0])
    result = run_hook("PreToolUse", _bash("b2", project, "git stash && git reset --hard && rm -rf src"))
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


# --- what an attack on the guard found ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("git checkout -f release/v1.2", id="branch-with-a-dot-forced"),
        pytest.param("git checkout release/v1.2", id="branch-with-a-dot"),
        pytest.param("git checkout -- :/", id="pathspec-top"),
        pytest.param("git restore ':(icase)SRC/AUTH.PY'", id="pathspec-icase"),
        pytest.param("git stash push -- ':!notes.txt'", id="pathspec-exclude"),
        pytest.param("echo x > innocent.txt", id="through-a-linked-file"),
        pytest.param("rm lib/auth.py", id="through-a-linked-folder"),
        pytest.param("rm {top}/../current/src/auth.py", id="absolute-through-a-link"),
        pytest.param('echo "git stash" | sh', id="piped-to-a-shell"),
        pytest.param('bash <<< "git reset --hard"', id="here-string"),
        pytest.param("V=stash; git $V", id="verb-in-a-variable"),
        pytest.param("flock /tmp/lock git stash", id="flock"),
        pytest.param("setsid git stash", id="setsid"),
        pytest.param("git update-index --assume-unchanged src/auth.py", id="hidden-from-status"),
        pytest.param("git read-tree -u --reset HEAD", id="read-tree"),
        pytest.param("git checkout-index -f -a", id="checkout-index"),
        pytest.param("git symbolic-ref HEAD refs/heads/other", id="symbolic-ref"),
        pytest.param("python3 -c \"import os; os.remove('src/auth.py')\"", id="python-c"),
        pytest.param("tar xf /tmp/any.tar", id="tar-extract-here"),
        pytest.param("python3 <<'EOF'\nimport os\nos.remove('src/auth.py')\nEOF", id="python-heredoc"),
        pytest.param("python3 - <<EOF\nopen('src/auth.py', 'w').write('')\nEOF", id="python-dash-heredoc"),
        pytest.param("python3 <<< \"import os; os.remove('src/auth.py')\"", id="python-here-string"),
        pytest.param("python3 -c \"import os; os.replace('notes.txt', 'src/auth.py')\"", id="python-os-replace"),
        pytest.param("timeout 5 bash <<< 'git stash'", id="here-string-past-a-wrapper"),
        pytest.param("echo 'git stash' | sudo sh", id="piped-past-a-wrapper"),
        pytest.param("nice sh <<'EOF'\ngit stash\nEOF", id="heredoc-past-a-wrapper"),
        pytest.param("env python3 <<'EOF'\nimport os\nos.remove('src/auth.py')\nEOF", id="code-past-a-wrapper"),
        pytest.param("echo 'git stash' | bash -", id="shell-reading-dash"),
        pytest.param("python3 -c \"open('src/auth.py', 'w').write('')\"", id="python-open-write"),
        pytest.param(
            "python3 -c \"import pathlib; pathlib.Path('src/auth.py').write_text('')\"", id="python-write-text"
        ),
        pytest.param("node <<'EOF'\nrequire('fs').unlinkSync('src/auth.py')\nEOF", id="node-heredoc"),
        pytest.param("python3 -Bc \"import os; os.remove('src/auth.py')\"", id="python-flags-before-c"),
        pytest.param("python3 -c\"import os; os.remove('src/auth.py')\"", id="python-code-attached"),
        pytest.param("node -p \"require('fs').rmSync('src/auth.py')\"", id="node-print"),
    ],
)
def test_forms_an_attack_found_are_asked_about(run_hook, project: Path, a_holds, command: str) -> None:
    (project / "innocent.txt").symlink_to(project / "src" / "auth.py")
    (project / "lib").symlink_to(project / "src")
    (project.parent / "current").symlink_to(project)
    result = run_hook("PreToolUse", _bash("b2", project, command.format(top=project), mode="bypassPermissions"))
    assert _decision(result) == "deny", command


def test_a_cwd_given_through_a_link_is_the_checkout_it_leads_to(run_hook, project: Path, a_holds) -> None:
    (project.parent / "current").symlink_to(project)
    result = run_hook("PreToolUse", _bash("b2", project.parent / "current", "sed -i s/a/b/ src/auth.py"))
    assert _decision(result) == "ask"


def test_a_write_that_reaches_another_worktree_is_judged_there(
    run_hook, project: Path, a_holds, claudes: Start
) -> None:
    _git(project, "worktree", "add", "-q", str(project.parent / "review"), "-b", "review")
    review = project.parent / "review"
    env = {"CLAUDE_PID": str(claudes().pid)}
    assert run_hook("SessionStart", start_payload("c3", review), env=env).returncode == 0
    (review / "notes.txt").write_text("c3 was here\n")
    run_hook("PostToolUse", _edit("c3", review, review / "notes.txt", "PostToolUse"), env=env)
    for command in ("rm ../review/notes.txt", f"cp /dev/null {review}/notes.txt", "cd .. && rm -rf review"):
        assert _decision(run_hook("PreToolUse", _bash("b2", project, command))) == "ask", command


def test_a_file_git_ignores_is_held_too(run_hook, project: Path, a_holds) -> None:
    (project / ".gitignore").write_text(".env\n")
    (project / ".env").write_text("TOKEN=1\n")
    run_hook("PostToolUse", _edit("a1", project, project / ".env", "PostToolUse"), env=a_holds[0])
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "rm .env"))) == "ask"


def test_a_hand_written_record_with_a_huge_number_does_not_switch_the_guard_off(
    run_hook, project: Path, root: Path, a_holds
) -> None:
    live_file = next(root.glob("*/*/.blackboard/sessions/a1/_live.jsonl"))
    with live_file.open("a") as handle:
        handle.write('{"kind": "hold", "top": "/x", "patterns": ["*"], "until": 1' + "0" * 400 + ', "at": 1}\n')
        handle.write('{"kind": "edit", "top": "/x", "path": "y", "at": 1' + "0" * 400 + "}\n")
    result = run_hook("PreToolUse", _bash("b2", project, "git stash"))
    assert _decision(result) == "ask"


def test_a_plain_commit_would_sweep_another_sessions_staged_file(run_hook, project: Path, a_holds) -> None:
    for command in ("git commit -m mine", "git commit --amend --no-edit"):
        assert _decision(run_hook("PreToolUse", _bash("b2", project, command))) is None, command  # nothing staged
    _git(project, "add", "src/auth.py")  # a1 staged its work
    for command in ("git commit -m mine", "git commit --amend --no-edit", "cd src && git commit -qm x"):
        result = run_hook("PreToolUse", _bash("b2", project, command))
        assert _decision(result) == "ask", command
        assert "staged" in json.loads(result.stdout)["systemMessage"]


def test_naming_files_shared_is_asked_about_while_someone_holds_work(run_hook, project: Path, a_holds) -> None:
    result = run_hook("PreToolUse", _bash("b2", project, "blackboard share '*'", mode="bypassPermissions"))
    assert _decision(result) == "deny"
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "blackboard share --remove x"))) is None


@pytest.mark.parametrize("command", ["rm docs/in*", "rm docs/*.md", "rm -r doc?", "sed -i s/a/b/ docs/[a-z]*.md"])
def test_a_glob_written_that_meets_a_glob_held_is_asked_about(run_hook, project: Path, a_holds, command: str) -> None:
    """The shell expands `docs/in*` from the disk: where it names a file a held glob (`docs/*.md`) covers, it is
    that file's work at stake."""
    (project / "docs").mkdir()
    (project / "docs" / "intro.md").write_text("intro\n")
    (project / "docs" / "notes.txt").write_text("x\n")
    assert _cli(project, "a1", "hold", "docs/*.md", "--reason", "rewriting").returncode == 0
    assert _decision(run_hook("PreToolUse", _bash("b2", project, command))) == "ask", command
    assert _decision(run_hook("PreToolUse", _bash("b2", project, "rm docs/no*"))) is None  # notes.txt: not held


def test_a_stash_finds_the_one_holder_among_many_whose_work_is_committed(
    run_hook, project: Path, a_holds, claudes: Start
) -> None:
    """Sessions are read a few at a time for a whole-checkout command: the first ones holding nothing (their
    edits committed) do not end the search before the one that holds work."""
    _git(project, "commit", "-qam", "a1's work, committed")
    for n in range(5):
        session_id = f"c{n}"
        env = {"CLAUDE_PID": str(claudes().pid)}
        assert run_hook("SessionStart", start_payload(session_id, project), env=env).returncode == 0
        path = project / f"mod{n}.py"
        path.write_text("x = 1\n")
        _git(project, "add", path.name)
        _git(project, "commit", "-qm", f"{session_id}'s work")
        run_hook("PostToolUse", _edit(session_id, project, path, "PostToolUse"), env=env)
    (project / "mod4.py").write_text("x = 2  # not committed\n")  # only c4 holds anything now
    result = run_hook("PreToolUse", _bash("b2", project, "git stash"))
    assert _decision(result) == "ask"
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "session c4" in reason and '"mod4.py" (uncommitted)' in reason
    assert "session a1" not in reason and "session c0" not in reason


def _nested_repository(project: Path) -> Path:
    """``vendor/lib``: a repository of its own inside the checkout, with x.py committed."""
    lib = project / "vendor" / "lib"
    lib.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(lib)], check=True)
    (lib / "x.py").write_text("x\n")
    _git(lib, "add", ".")
    _git(lib, "commit", "-qm", "vendored")
    return lib


@pytest.mark.xfail(
    strict=True,
    reason="the guard takes the session's checkout from the hook's cwd: once a session has gone into a nested "
    "repository (`cd vendor/lib`, kept by Claude Code), its files are recorded and looked up from that repository "
    "(its own project even), while the other session's are named from the outer checkout, so neither sees the other",
)
@pytest.mark.parametrize("inside", ["holder", "other"])
def test_a_file_of_a_nested_repository_is_held_whichever_of_the_two_sessions_works_inside_it(
    run_hook, project: Path, a_holds, inside: str
) -> None:
    lib = _nested_repository(project)
    (lib / "x.py").write_text("y\n")
    holder_cwd, other_cwd = (lib, project) if inside == "holder" else (project, lib)
    run_hook("PostToolUse", _edit("a1", holder_cwd, lib / "x.py", "PostToolUse"), env=a_holds[0])
    edit = run_hook("PreToolUse", _edit("b2", other_cwd, lib / "x.py", mode="bypassPermissions"))
    stash = run_hook("PreToolUse", _bash("b2", lib, "git stash", mode="bypassPermissions"))
    assert (_decision(edit), _decision(stash)) == ("deny", "deny")
