"""How the pinned Claude Code matches a hook handler's ``if`` against compound shell commands (ADR 32).

The shell guard of issue 38 is registered on what these tests lock in: a throwaway plugin has
PreToolUse Bash handlers with different ``if`` conditions, each saving its stdin under its own
label; the scripted model runs each command once through the Bash tool; the test reads which
handlers ran for which command. A Claude Code that matches otherwise fails here first.
"""

import json
import subprocess
from pathlib import Path

import pytest
from claude_cli import CLAUDE_TIMEOUT, ClaudeRunner
from model_server import ModelServer, bash, text

pytestmark = pytest.mark.e2e

CONDITIONS = {
    "no if": None,
    "git": "Bash(git *)",
    "git stash": "Bash(git stash*)",
    "any git": "Bash(*git*)",
    "rm": "Bash(rm *)",
    "redirect": "Bash(*>*)",  # redirections are taken off before matching: this never matches
    "git or rm": "Bash(git *)|Bash(rm *)",  # one rule per `if`: alternatives match nothing
}
SAVE_STDIN = '#!/bin/sh\ncat > "$PROBE_LOG/$$.$1.json"\n'

# command -> the handlers that run for it (SPEC §15b's forms; ADR 32 has the full table)
FIRES = {
    "git stash": {"no if", "git", "git stash", "any git"},
    "cd src && git stash": {"no if", "git", "git stash", "any git"},  # each part of a list is matched
    "FOO=1 git reset --hard": {"no if", "git", "any git"},  # an environment prefix is dropped
    "git -C src stash": {"no if", "git", "any git"},  # an option before the subcommand: `git stash*` misses it
    "true || git checkout .": {"no if", "git", "any git"},
    "ls; rm f": {"no if", "rm"},
    "bash -c 'git stash'": {"no if", "any git"},  # a nested shell is not looked into
    "env git stash": {"no if", "any git"},  # nor is a wrapper program
    "(cd src; git stash)": set(CONDITIONS),  # a subshell cannot be checked: every `if` matches
    "echo x > f": {"no if"},  # a redirection is not a command: only a handler with no `if` sees it
    "ls": {"no if"},
}


def _probe_plugin(where: Path) -> Path:
    plugin = where / "probe"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "probe", "version": "0.0.0"}))
    (plugin / "hooks").mkdir()
    save = plugin / "hooks" / "save"
    save.write_text(SAVE_STDIN)
    save.chmod(0o755)
    handlers = []
    for label, condition in CONDITIONS.items():
        handler = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/save", "args": [label.replace(" ", "-")]}
        handlers.append({**handler, "if": condition} if condition else handler)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    return plugin


def test_which_if_conditions_match_which_compound_commands(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, tmp_path: Path
) -> None:
    (project / "src").mkdir()
    (project / "f").write_text("a\n")
    log = tmp_path / "fired"
    log.mkdir()
    plugin = _probe_plugin(tmp_path)
    model.add(*(bash(command) for command in FIRES), text("done"))

    result = subprocess.run(
        [run_claude.binary, "-p", "run these", "--plugin-dir", str(plugin)],
        cwd=project,
        env={**run_claude.env(model), "PROBE_LOG": str(log)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLAUDE_TIMEOUT,
    )

    assert result.returncode == 0, f"{result.stderr}\n{model.summary()}"
    fired: dict[str, set[str]] = {command: set() for command in FIRES}
    for saved in log.iterdir():
        command = json.loads(saved.read_text())["tool_input"]["command"]
        fired[command].add(saved.name.split(".")[1].replace("-", " "))
    assert fired == FIRES
