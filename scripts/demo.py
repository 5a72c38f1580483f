"""`make demo`: sessions of a sample git project, run through the real hooks in hooks/hooks.json.

Starts from a temporary root holding old flat blackboard files, so the migration shows too.
First one session hands off to the next; then two sessions are live at once, each under a
stand-in for its own Claude Code process, and the second is asked before it edits, stashes
or removes the first's work.
Nothing outside the temporary directory is touched, except the plugin's Python environment,
which the first run builds in .cache/ exactly as Claude Code's first session would.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap
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
A_ID, B_ID = "a11ce000-5eed-4a00-8000-00000000000a", "b0b00000-5eed-4b00-8000-00000000000b"
A_ASK = "Rotate refresh tokens on every use"
A_AUTH = "def refresh(token):\n    new = issue_token(token.user)\n    revoke(token)\n    return new\n"
# What the environment of whatever runs the demo may say of its own session: the sessions here have their own.
OUTSIDE = (
    "CLAUDE_PID",
    "CLAUDE_CODE_SESSION_ATTENDED",
    "BLACKBOARD_SESSION_ID",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_SESSION_ID",
)
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


def step(title: str) -> None:
    print(f"\n-- {title} --")


def run_hook(event: str, payload: dict, env: dict) -> str:
    """Run the command hooks/hooks.json registers for ``event`` (and the payload's tool), as Claude Code does."""
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    tool = payload.get("tool_name", "")
    # a matcher names the tools (`Write|Edit`); Claude Code runs one command registered twice once
    (hook,) = {
        (h["command"], *h["args"]): h
        for group in config["hooks"][event]
        if re.fullmatch(group.get("matcher") or ".*", tool)
        for h in group["hooks"]
    }.values()
    argv = [part.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for part in [hook["command"], *hook["args"]]]
    result = subprocess.run(argv, input=json.dumps(payload), text=True, capture_output=True, env=env)
    shown = " ".join([hook["command"], *hook["args"]])
    print(f"$ echo '{json.dumps(payload)[:100]}…' | {shown}   -> exit {result.returncode}")
    if result.stderr:
        print(result.stderr.rstrip())
    return result.stdout


def verdict(out: str) -> None:
    """What PreToolUse answered, as the person reads it: the decision and its reason, or that it said nothing."""
    if not out.strip():
        print("(the hook says nothing: Claude Code goes on as it would without the plugin)")
        return
    answer = json.loads(out)["hookSpecificOutput"]
    reason = f"{answer['permissionDecision']}: {answer['permissionDecisionReason']}"
    print(textwrap.fill(reason, width=100, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False))


def blackboard(env: dict, cwd: Path, *args: str) -> None:
    """Run the plugin's `blackboard` command as an agent would from Claude Code's Bash tool."""
    print(f"$ {shlex.join(['blackboard', *args])}")
    result = subprocess.run(
        [str(REPO / "bin" / "blackboard"), *args],
        env=env,
        cwd=cwd,
        text=True,
        capture_output=True,
    )
    print((result.stdout + result.stderr).rstrip())


def exported(env: dict, env_file: Path) -> dict:
    """``env`` with what SessionStart exported in CLAUDE_ENV_FILE, as Claude Code's Bash tool has it."""
    for line in env_file.read_text().splitlines():
        name, _, value = line[len("export ") :].partition("=")
        env = dict(env, **{name: value.strip("'")})
    return env


def agents_write(env: dict, project: Path, env_file: Path) -> None:
    """The main agent and two subagents use the board; the session comes from CLAUDE_ENV_FILE's exports."""
    env = exported(env, env_file)
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


class LiveSession:
    """A session under a stand-in for its own Claude Code process: a sleeping child whose pid its hooks get as
    CLAUDE_PID, as Claude Code's do. One process runs one conversation, so each session has its own."""

    def __init__(self, session_id: str, env: dict, work: Path, project: Path) -> None:
        self.session_id, self.project = session_id, project
        # its own streams: one holding the demo's output open would keep whoever reads it waiting
        self.process = subprocess.Popen(
            ["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        env = {name: value for name, value in env.items() if name not in OUTSIDE}
        self.env_file = work / f"{session_id[:8]}-env.sh"
        self.env = dict(env, CLAUDE_PID=str(self.process.pid), CLAUDE_ENV_FILE=str(self.env_file))
        self.payload = {
            "session_id": session_id,
            "cwd": str(project),
            "transcript_path": str(work / f"{session_id}.jsonl"),
        }

    def hook(self, event: str, **fields: object) -> str:
        # the tool call first, so that the line shown of the payload says what it is
        return run_hook(event, {**fields, "hook_event_name": event, **self.payload}, self.env)

    def blackboard(self, *args: str) -> None:
        blackboard(exported(self.env, self.env_file), self.project, *args)

    def asks(self, tool_name: str, tool_input: dict, mode: str = "default") -> None:
        """PreToolUse of a tool call: what the person is asked, or that nothing is said."""
        verdict(self.hook("PreToolUse", tool_name=tool_name, tool_input=tool_input, permission_mode=mode))

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def who_is_here(context: str) -> str:
    """The part of a SessionStart context that names the other live sessions; all of it when none does."""
    start = context.find("Other live sessions")
    return context if start < 0 else context[start:].split("\nYour board:")[0]


def live_sessions(env: dict, work: Path, project: Path) -> None:
    """Sessions A and B at once in one checkout: B is asked before it edits, stashes or removes A's work."""
    banner("Two live sessions at once")
    a, b = LiveSession(A_ID, env, work, project), LiveSession(B_ID, env, work, project)
    try:
        step("A starts, is asked to rotate refresh tokens, and edits auth.py (left uncommitted)")
        a.hook("SessionStart", source="startup")
        a.hook("UserPromptSubmit", prompt=A_ASK)
        (project / "auth.py").write_text(A_AUTH)
        edit = {
            "file_path": str(project / "auth.py"),
            "old_string": "    raise NotImplementedError\n",
            "new_string": "…",
        }
        a.hook("PostToolUse", tool_name="Edit", tool_input=edit, tool_response={"filePath": edit["file_path"]})

        step("B starts in the same checkout; its context says who is here")
        context = json.loads(b.hook("SessionStart", source="startup"))["hookSpecificOutput"]["additionalContext"]
        print(who_is_here(context))
        b.blackboard("who")

        step("B's Edit of auth.py: the person is asked")
        b.asks("Edit", {"file_path": str(project / "auth.py"), "old_string": "def refresh", "new_string": "def renew"})
        step("B's `git stash`: asked; where no one can be asked (bypassPermissions), refused")
        b.asks("Bash", {"command": "git stash"})
        b.asks("Bash", {"command": "git stash"}, mode="bypassPermissions")

        step("A holds the docs while it rewrites them; B's `rm docs/intro.md` is asked")
        a.blackboard("hold", "docs/*", "--reason", "rewriting the docs")
        b.blackboard("who")
        b.asks("Bash", {"command": "rm docs/intro.md"})
        step("A releases what it holds; B's same command says nothing now")
        a.blackboard("release")
        b.asks("Bash", {"command": "rm docs/intro.md"})
    finally:
        a.stop()
        b.stop()
    print("(The stand-in Claude Code processes of A and B are ended: the two sessions are no longer live.)")


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
        # the most time SessionEnd may give git (1 s of Claude Code's 1.5 s): the demo shows what changed even on
        # a machine busy enough that git misses the everyday 0.2 s
        BLACKBOARD_END_GIT_TIMEOUT="1.0",
        **GIT_IDENTITY,
    )
    git(project.parent, "init", "-q", "-b", "main", str(project))
    git(project, "remote", "add", "origin", "git@github.com:acme/widget.git")
    (project / "docs").mkdir()
    (project / "docs" / "intro.md").write_text("# Widget\n\nA widget with login.\n")
    git(project, "add", "docs")
    git(project, "commit", "-q", "-m", "Start the widget")
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

    banner("Session two ends (so that only the two below are live)")
    run_hook(
        "SessionEnd",
        {"session_id": "two", **common, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
        env,
    )
    live_sessions(env, work, project)
    print(f"\n(Everything above lives in {work}; delete it when you are done.)")


if __name__ == "__main__":
    main()
