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
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "git@github.com:acme/widget.git"], check=True)
    env = dict(
        os.environ,
        BLACKBOARD_ROOT=str(root),
        CLAUDE_PLUGIN_ROOT=str(REPO),
        CLAUDE_PLUGIN_DATA=str(DATA),
        CLAUDE_ENV_FILE=str(work / "session-env.sh"),
    )
    if not (DATA / "venv").exists():
        print("(first run: the SessionStart hook builds the plugin's Python environment; this takes a moment)")

    banner("Session one starts (the old flat files get migrated)")
    common = {"cwd": str(project), "transcript_path": str(work / "one.jsonl")}
    run_hook(
        "SessionStart", {"session_id": "one", **common, "hook_event_name": "SessionStart", "source": "startup"}, env
    )
    print(f"CLAUDE_ENV_FILE now exports:\n{(work / 'session-env.sh').read_text().rstrip()}")

    banner("The agents of session one work on the board")
    one = board / "sessions" / "one"
    agents_write(env, project, work / "session-env.sh")
    print(f"\n{one / 'active-tasks.md'}:\n{(one / 'active-tasks.md').read_text()}")
    run_hook("Stop", {"session_id": "one", **common, "hook_event_name": "Stop", "stop_hook_active": False}, env)

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
