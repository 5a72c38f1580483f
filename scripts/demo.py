"""`make demo`: two sessions of a sample git project, run through the real hooks in hooks/hooks.json.

Starts from a temporary root holding old flat blackboard files, so the migration shows too.
Nothing outside the temporary directory is touched, except the plugin's Python environment,
which the first run builds in .cache/ exactly as Claude Code's first session would.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / ".cache" / "demo-plugin-data"

LEGACY_NOTES = """# Session notes

---
**Session:** 1706012345-4242
**Time:** 2026-10-30T16:20:00Z

Auth module half done: login works, refresh tokens not started.

---
**Session:** 1706099999-5151
**Time:** 2026-11-02T09:05:00Z

Switched the token store to Redis; tests need REDIS_URL.
"""


ASK = "Add refresh tokens to the auth module"
LAST_MESSAGE = "The refresh() stub is committed; rotation is not written yet and expiry has no tests."
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Demo",
    "GIT_AUTHOR_EMAIL": "demo@example.invalid",
    "GIT_COMMITTER_NAME": "Demo",
    "GIT_COMMITTER_EMAIL": "demo@example.invalid",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, env=dict(os.environ, **GIT_IDENTITY))


def claude_task(config: Path, session_id: str, number: int, subject: str, status: str) -> None:
    """What Claude Code's TaskCreate leaves in its own folder: ``tasks/{session}/{n}.json``."""
    folder = config / "tasks" / session_id
    folder.mkdir(parents=True, exist_ok=True)
    task = {"id": str(number), "subject": subject, "description": "", "status": status, "blocks": [], "blockedBy": []}
    (folder / f"{number}.json").write_text(json.dumps(task, indent=2))


def banner(title: str) -> None:
    bold, plain = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")
    print(f"\n{bold}== {title} =={plain}")


def run_hook(event: str, payload: dict, env: dict) -> str:
    """Run the command hooks/hooks.json registers for ``event``, as Claude Code does."""
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    (hook,) = [h for group in config["hooks"][event] for h in group["hooks"]]
    argv = [part.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for part in [hook["command"], *hook["args"]]]
    result = subprocess.run(argv, input=json.dumps(payload), text=True, capture_output=True, env=env)
    shown = " ".join([hook["command"], *hook["args"]])
    print(f"$ echo '{json.dumps(payload)[:90]}…' | {shown}   -> exit {result.returncode}")
    if result.stderr:
        print(result.stderr.rstrip())
    return result.stdout


def blackboard(env: dict, cwd: Path, *args: str) -> None:
    """Run the plugin's `blackboard` command as an agent would from Claude Code's Bash tool."""
    print(f"$ blackboard {' '.join(args)}")
    result = subprocess.run(
        [str(REPO / "bin" / "blackboard"), *args],
        env=env,
        cwd=cwd,
        text=True,
        capture_output=True,
    )
    print((result.stdout + result.stderr).rstrip())


def agents_write(env: dict, project: Path, env_file: Path) -> None:
    """The main agent and two subagents use the board; the session comes from CLAUDE_ENV_FILE's exports."""
    for line in env_file.read_text().splitlines():
        name, _, value = line[len("export ") :].partition("=")
        env = dict(env, **{name: value.strip("'")})
    blackboard(env, project, "task", "add", "Add refresh tokens")
    blackboard(env, project, "task", "add", "Cover token expiry with tests")
    blackboard(env, project, "task", "claim", "t1")
    blackboard(env, project, "task", "done", "t1")
    blackboard(env, project, "--author", "test-writer", "task", "claim", "t2")
    print("(a second claimant is refused, as it should be:)")
    blackboard(env, project, "--author", "reviewer", "task", "claim", "t2")
    blackboard(env, project, "--author", "api-explorer", "post", "token_ttl", "15 minutes")
    blackboard(env, project, "note", "Refresh tokens rotate on every use.")
    blackboard(env, project, "task", "list")


def tree(path: Path, prefix: str = "") -> None:
    for child in sorted(p for p in path.iterdir() if not p.name.endswith(".lock")):
        print(f"{prefix}{child.name}{'/' if child.is_dir() else ''}")
        if child.is_dir():
            tree(child, prefix + "    ")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="blackboard-demo-"))
    root, project = work / "root", work / "widget"
    board = root / "acme" / "widget" / ".blackboard"
    board.mkdir(parents=True)
    (board / "session-notes.md").write_text(LEGACY_NOTES)
    (board / "active-tasks.md").write_text("- [ ] add refresh tokens\n")
    env = dict(
        os.environ,
        BLACKBOARD_ROOT=str(root),
        CLAUDE_PLUGIN_ROOT=str(REPO),
        CLAUDE_PLUGIN_DATA=str(DATA),
        CLAUDE_ENV_FILE=str(work / "session-env.sh"),
        CLAUDE_CONFIG_DIR=str(work / "claude-config"),  # where Claude Code keeps its own task lists
        **GIT_IDENTITY,
    )
    git(project.parent, "init", "-q", "-b", "main", str(project))
    git(project, "remote", "add", "origin", "git@github.com:acme/widget.git")
    git(project, "commit", "-q", "--allow-empty", "-m", "Start the widget")
    if not (DATA / "venv").exists():
        print("(first run: the SessionStart hook builds the plugin's Python environment; this takes a moment)")

    banner("Session one starts (the old flat files get migrated)")
    common = {"cwd": str(project), "transcript_path": str(work / "one.jsonl")}
    run_hook(
        "SessionStart", {"session_id": "one", **common, "hook_event_name": "SessionStart", "source": "startup"}, env
    )
    print(f"CLAUDE_ENV_FILE now exports:\n{(work / 'session-env.sh').read_text().rstrip()}")

    banner("You ask; the agent edits a file, commits, and keeps a task in Claude Code's own list")
    run_hook(
        "UserPromptSubmit", {"session_id": "one", **common, "hook_event_name": "UserPromptSubmit", "prompt": ASK}, env
    )
    (project / "auth.py").write_text("def refresh(token):\n    raise NotImplementedError\n")
    edit = {"tool_name": "Write", "tool_input": {"file_path": str(project / "auth.py"), "content": "…"}}
    run_hook("PostToolUse", {"session_id": "one", **common, "hook_event_name": "PostToolUse", **edit}, env)
    git(project, "add", "auth.py")
    git(project, "commit", "-q", "-m", "Add a refresh() stub")
    claude_task(work / "claude-config", "one", 1, "Rotate refresh tokens on every use", "in_progress")

    banner("The agents of session one also use the board")
    one = board / "sessions" / "one"
    agents_write(env, project, work / "session-env.sh")
    print(f"\n{one / 'active-tasks.md'}:\n{(one / 'active-tasks.md').read_text()}")
    stop = {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": LAST_MESSAGE}
    run_hook("Stop", {"session_id": "one", **common, **stop}, env)

    banner("Session one ends")
    run_hook(
        "SessionEnd",
        {"session_id": "one", **common, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
        env,
    )

    banner("Session two starts in the same project")
    common["transcript_path"] = str(work / "two.jsonl")
    out = run_hook(
        "SessionStart", {"session_id": "two", **common, "hook_event_name": "SessionStart", "source": "startup"}, env
    )

    banner(f"The tree under {root}")
    tree(root)
    banner("sessions/one/_meta.json")
    print((one / "_meta.json").read_text().rstrip())
    banner("handoff/latest-handoff.md")
    print((board / "handoff" / "latest-handoff.md").read_text().rstrip())
    banner("The context session two received (additionalContext)")
    print(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    print(f"\n(Everything above lives in {work}; delete it when you are done.)")


if __name__ == "__main__":
    main()
