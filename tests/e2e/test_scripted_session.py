"""A whole `claude -p` session against the scripted model: the plugin's hooks and the `blackboard` command."""

import json
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, bash, text

pytestmark = pytest.mark.e2e


def test_a_scripted_session_runs_blackboard_from_the_bash_tool(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    model.add(
        bash('blackboard task add "e2e task"'),
        bash('blackboard note "e2e note"'),
        bash("blackboard where --json"),
        text("done"),
    )

    result = run_claude(["-p", "start"], cwd=project, model=model)  # the default permission mode

    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{model.summary()}"
    assert result.stdout.strip() == "done"
    first, *rest = model.main_requests
    assert len(rest) == 3, model.summary()
    assert "[blackboard]" in first.all_text()  # SessionStart's additionalContext reached the model

    outputs = [result["text"] for result in model.tool_results()]
    assert [o.strip() for o in outputs[:2]] == ["t1", "n1"], outputs
    where = json.loads(outputs[2])
    session_id = first.headers["X-Claude-Code-Session-Id"]
    assert where["session_id"] == session_id
    assert where["session_from"] == "BLACKBOARD_SESSION_ID"  # CLAUDE_ENV_FILE reached the Bash tool
    session = root / "acme" / "widget" / ".blackboard" / "sessions" / session_id
    assert [p.name for p in session.parent.iterdir()] == [session_id]
    assert "e2e task" in (session / "active-tasks.md").read_text()
    assert "e2e note" in (session / "session-notes.md").read_text()
    meta = json.loads((session / "_meta.json").read_text())
    assert meta["status"] == "ended"
    assert meta["cwd"] == str(project)


EVERY_COMMAND = [
    "blackboard note 'decided: parser is a state machine'",
    "blackboard task add 'write the lexer'",
    "blackboard task claim t1",
    "blackboard task done t1",
    "blackboard task add 'write the parser'",
    "blackboard task list --all --json",
    "blackboard --author explorer post grammar 'expr := term (+ term)*'",
    "blackboard read grammar",
    "blackboard list",
    "blackboard claim grammar",
    "blackboard sessions",
    "blackboard show --json",
    "blackboard where",
    "blackboard handoff",
]


def test_an_agent_runs_every_command_from_the_bash_tool(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    earlier = run_claude(["--init-only"], cwd=project, model=model)  # so `blackboard handoff` has a handoff
    assert earlier.returncode == 0
    model.add(*(bash(command) for command in EVERY_COMMAND), text("done"))

    result = run_claude(["-p", "go"], cwd=project, model=model)  # the default permission mode

    assert result.returncode == 0, result.stderr
    outputs = [result["text"] for result in model.tool_results()]
    assert len(outputs) == len(EVERY_COMMAND), model.summary()
    output = "\n".join(outputs)
    refused = [c for c, o in zip(EVERY_COMMAND, outputs) if "requires approval" in o]
    assert refused == [], refused
    assert "blackboard: error" not in output, output
    session_id = model.main_requests[0].headers["X-Claude-Code-Session-Id"]
    for fragment in [
        '"claimed_by": "main"',
        '"status": "done"',
        "expr := term (+ term)*",
        "grammar",
        session_id,
        "BLACKBOARD_SESSION_ID",
        "# Handoff from session",
    ]:
        assert fragment in output, fragment
    board = root / "acme" / "widget" / ".blackboard" / "sessions" / session_id
    assert "write the parser" in (board / "active-tasks.md").read_text()
    assert "grammar" not in (board / "shared-context.md").read_text().split("-->")[-1]  # claimed away
