"""Each slash command runs inside the real Claude Code, and its output reaches the model request."""

import json
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, text, texts_of

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        pytest.param("/blackboard:sessions", ["SESSION", "STATUS", "acme/widget", "ended"], id="sessions"),
        pytest.param("/blackboard:show", ["# Session ", "(active)", "## Open tasks"], id="show"),
        pytest.param("/blackboard:handoff", ["# Handoff from session", "end_reason"], id="handoff"),
        pytest.param(
            "/blackboard:cleanup --older-than 0 --keep 0",
            ["would remove acme/widget", "would remove 1 sessions"],
            id="cleanup-preview",
        ),
        pytest.param("/blackboard:doctor", ["all good under"], id="doctor"),
        pytest.param("/blackboard:sync", ["sync is off for this project", "blackboard sync enable"], id="sync"),
    ],
)
def test_slash_command_output_reaches_the_model(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path, command: str, expected: list
) -> None:
    earlier = run_claude(["--init-only"], cwd=project, model=model)  # an ended session with a handoff
    assert earlier.returncode == 0, earlier.stderr
    model.add(text("summarised"))

    result = run_claude(["-p", command], cwd=project, model=model)

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    (request,) = model.main_requests
    shown = "\n".join(texts_of([request.last_user_message()]))
    assert f"<command-name>{command.split()[0]}</command-name>" in shown
    for fragment in expected:
        assert fragment in shown, shown[-3000:]
    assert "blackboard: error" not in shown
    assert "ermission" not in shown
    sessions = list((root / "acme" / "widget" / ".blackboard" / "sessions").iterdir())
    assert len(sessions) == 2  # the command ran inside the second session, which exists and is ended
    assert all(json.loads((s / "_meta.json").read_text())["status"] == "ended" for s in sessions)
