"""Board commands in Claude Code's default permission mode, as users run it: no allowed-tools list, no bypass.

The plugin's PreToolUse hook approves one plain `blackboard` command at a time; anything
else is left to Claude Code, which in `-p` runs refuses what would need a person's approval.
"""

import json
import re
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, bash, text, tool_use

from helpers import REPO

pytestmark = pytest.mark.e2e

SKILL = (REPO / "skills" / "blackboard" / "SKILL.md").read_text()
SKILL_FORMS = re.findall(r"`(blackboard [^`]*)`", SKILL)


def _outputs(model: ModelServer) -> list[str]:
    return [result["text"] for result in model.tool_results()]


def _ran(output: str) -> bool:
    """Whether the command ran: blackboard's own output or its one error line, not a refusal."""
    return "requires approval" not in output and "permission" not in output.lower()


def test_the_skill_shows_forms_that_run(run_claude: ClaudeRunner) -> None:
    assert len(SKILL_FORMS) >= 10, SKILL_FORMS


def test_every_form_the_skill_shows_runs_without_approval(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    (project / "endpoints.md").write_text("GET /users\nPOST /users\n")
    model.add(*(bash(form) for form in SKILL_FORMS), text("done"))

    result = run_claude(["-p", "use the board"], cwd=project, model=model)

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    outputs = _outputs(model)
    assert len(outputs) == len(SKILL_FORMS), model.summary()
    for form, output in zip(SKILL_FORMS, outputs):
        assert _ran(output), f"{form}: {output}"
    notes = next((root / "acme" / "widget" / ".blackboard" / "sessions").iterdir()) / "session-notes.md"
    assert "- fixed the flaky test" in notes.read_text()


def test_a_subagent_runs_every_form_without_approval(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    (project / "endpoints.md").write_text("GET /users\nPOST /users\n")
    agent = {
        "description": "work the board",
        "prompt": "Use the board.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    subagent_forms = [f"{form} --author parser-writer" for form in SKILL_FORMS if "--author" not in form]
    model.add(
        tool_use("Agent", agent),  # main: delegate
        *(bash(form) for form in subagent_forms),  # the subagent, one command per turn
        text("done"),  # the subagent's report
        text("main done"),  # main
    )

    result = run_claude(["-p", "delegate"], cwd=project, model=model)

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    outputs = _outputs(model)[: len(subagent_forms)]
    assert len(outputs) == len(subagent_forms), model.summary()
    for form, output in zip(subagent_forms, outputs):
        assert _ran(output), f"{form}: {output}"
    board = next((root / "acme" / "widget" / ".blackboard" / "sessions").iterdir())
    assert "- author: parser-writer" in (board / "session-notes.md").read_text()


def _smuggling_forms(sentinels: Path) -> list[str]:
    """Commands that would create a sentinel file if Claude Code ran them."""
    s = str(sentinels)
    return [
        f"blackboard note a; touch {s}/semicolon",
        f"blackboard note a && touch {s}/and",
        f"blackboard note a || touch {s}/or",
        f"blackboard note a | tee {s}/pipe",
        f"blackboard note a > {s}/redirect",
        f"blackboard note a & touch {s}/background",
        f"blackboard note a\ntouch {s}/newline",
        f"blackboard note $(touch {s}/substitution)",
        f'blackboard note "$(touch {s}/quoted-substitution)"',
        f"blackboard note `touch {s}/backticks`",
        f"blackboard note <(touch {s}/process-substitution)",
        f"{{ blackboard note a; touch {s}/group; }}",
        f"(blackboard note a; touch {s}/subshell)",
        f"TOUCH=1 blackboard note a; touch {s}/assignment",
        f"eval 'blackboard note a; touch {s}/eval'",
        f"bash -c 'blackboard note a; touch {s}/bash-c'",
        f"env blackboard note a; touch {s}/env",
        f"blackboard note a # ; touch {s}/comment-is-fine-but-unapproved\ntouch {s}/after-comment",
        f"blackboard cleanup --yes --older-than 0 --keep 0 && touch {s}/cleanup",
    ]


def test_smuggled_commands_never_run(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, tmp_path: Path
) -> None:
    sentinels = tmp_path / "sentinels"
    sentinels.mkdir()
    forms = _smuggling_forms(sentinels)
    assert len(forms) >= 15
    model.add(*(bash(form) for form in forms), text("done"))

    result = run_claude(["-p", "try things"], cwd=project, model=model)

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    assert len(_outputs(model)) == len(forms), model.summary()
    assert sorted(p.name for p in sentinels.iterdir()) == []


def test_a_users_deny_rule_still_wins(run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(blackboard:*)"]}}))
    model.add(bash("blackboard note 'should never be written'"), text("done"))

    result = run_claude(["-p", "try"], cwd=project, model=model)

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    (output,) = _outputs(model)
    assert not _ran(output) or "denied" in output.lower(), output
    for notes in (root / "acme" / "widget" / ".blackboard" / "sessions").glob("*/session-notes.md"):
        assert "should never be written" not in notes.read_text()


def test_every_shell_command_starts_one_pretooluse_hook(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, tmp_path: Path, hook_venv: Path
) -> None:
    """One handler, no `if` (docs/adr/0032-shell-guard-registration.md): every command reaches the shell guard,
    once; a plain `ls` runs as it would without the plugin."""
    log = tmp_path / "hook-starts.log"
    traced = tmp_path / "traced-venv"
    (traced / "bin").mkdir(parents=True)
    wrapper = traced / "bin" / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {hook_venv}/bin/python "$@"\n')
    wrapper.chmod(0o755)
    model.add(bash("ls"), bash("blackboard where"), text("done"))

    result = run_claude(["-p", "look"], cwd=project, model=model, extra_env={"BLACKBOARD_VENV": str(traced)})

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    outputs = _outputs(model)
    assert _ran(outputs[0]) and _ran(outputs[1]), outputs
    starts = [line for line in log.read_text().splitlines() if line.endswith("pre-tool-use")]
    assert len(starts) == 2, log.read_text()


def test_the_plugins_own_path_to_blackboard_runs_unasked(
    run_claude: ClaudeRunner, model: ModelServer, project: Path
) -> None:
    model.add(bash(f"{REPO}/bin/blackboard where"), text("done"))

    result = run_claude(["-p", "look"], cwd=project, model=model)

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    (output,) = _outputs(model)
    assert _ran(output), output
    assert "session_id" in output
