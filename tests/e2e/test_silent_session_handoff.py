"""A session that never runs `blackboard` still tells the next one what was asked, changed, left open, said last."""

import json
import subprocess
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, bash, text, tool_use

pytestmark = pytest.mark.e2e

PROMPT = "Add an escape() helper to util.py and commit it"
LAST_MESSAGE = "Committed util.py; the escapes are still half done: quotes are not handled yet."
TASK = "Handle quotes in escape()"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",  # Claude Code's own task list, off by default for current models
    "BLACKBOARD_END_GIT_TIMEOUT": "1",  # the commit is read from git at SessionEnd: a loaded machine needs longer
}


def _allow_edits_and_commits(project: Path) -> None:
    """What a person's own settings would allow; the session still runs in the default permission mode."""
    (project / ".claude").mkdir()
    allow = ["Write", "Edit", "Bash(git add:*)", "Bash(git commit:*)"]
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"allow": allow}}))
    (project / ".gitignore").write_text(".claude/\n")
    subprocess.run(["git", "-C", str(project), "add", ".gitignore"], check=True)
    subprocess.run(
        ["git", "-C", str(project), "commit", "-q", "-m", "start"], check=True, env={**GIT_ENV, "PATH": "/usr/bin:/bin"}
    )


def test_the_next_session_learns_what_a_silent_session_did(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    _allow_edits_and_commits(project)
    util = str(project / "util.py")
    model.add(
        tool_use("Write", {"file_path": util, "content": "def escape(text):\n    return text\n"}),
        tool_use(
            "Edit",
            {
                "file_path": util,
                "old_string": "    return text\n",
                "new_string": "    return text.replace('<', '&lt;')\n",
            },
        ),
        tool_use("TaskCreate", {"subject": TASK, "description": "escape quotes too"}),
        bash("git add util.py && git commit -q -m 'Add escape() helper'"),
        text(LAST_MESSAGE),
    )

    first = run_claude(["-p", PROMPT], cwd=project, model=model, extra_env=GIT_ENV)

    assert first.returncode == 0, f"{first.stdout}\n{first.stderr}\n{model.summary()}"
    assert first.stdout.strip() == LAST_MESSAGE
    assert [r["text"] for r in model.tool_results()][2].startswith("Task #1 created"), model.tool_results()
    session_id = model.main_requests[0].headers["X-Claude-Code-Session-Id"]
    board = root / "acme" / "widget" / ".blackboard" / "sessions" / session_id
    written = [p.name for p in board.iterdir() if p.suffix == ".md" and "\n## " in p.read_text()]
    assert written == []  # no agent wrote on the board: its files hold their headers only
    model.add(text("ok"))
    model.requests.clear()

    second = run_claude(["-p", "carry on"], cwd=project, model=model, extra_env=GIT_ENV)

    assert second.returncode == 0, second.stderr
    seen = model.main_requests[0].all_text()
    for fragment in (PROMPT, "util.py", "2 edits", TASK, "the escapes are still half done", "Add escape() helper"):
        assert fragment in seen, fragment
    assert "Claude Code's task list" in seen  # each item says where it came from
