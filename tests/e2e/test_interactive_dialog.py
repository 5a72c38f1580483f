"""The person at an interactive session sees who holds a file in the edit dialog, before answering.

Session A (``claude -p``) edits util.py and stays alive, its model still thinking. Session B is
the interactive ``claude`` a person runs, on a pseudo-terminal, in the mode it starts in (auto),
in ``default`` and in ``acceptEdits``; its scripted model edits util.py too. The guard answers
``ask`` with a reason naming A; the test reads B's screen while the dialog waits for an answer
and finds that reason in it (SPEC §15a: from Claude Code 2.1.332 the dialog shows it; 2.1.330
showed only the question). Then the person says no (Claude Code then waits for their next
prompt), and A's work is untouched.
"""

import json
import re
import threading
from pathlib import Path

import pytest
from claude_cli import FAKE_API_KEY, ClaudeRunner
from model_server import ModelServer, held, text, tool_use
from terminal import Terminal
from test_parallel_sessions import EDITS, _edited, _wait_for

from helpers import REPO

pytestmark = pytest.mark.e2e

DIALOG = "Do you want to make this edit to util.py?"
REQUEST = "A: make util.py return 2"
# The dialog's last choice: "3. No" in default mode, "2. No" where it offers no switch of mode
NO = re.compile(r"(\d)\. No$", re.MULTILINE)


def _skip_first_run_dialogs(home: Path, project: Path) -> None:
    """What a person who has used Claude Code before has answered once: onboarding, the key, the folder's trust."""
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [FAKE_API_KEY[-20:]], "rejected": []},
        "projects": {str(project): {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude.json").write_text(json.dumps(config))


def _edit(project: Path, old: str, new: str):  # type: ignore[no-untyped-def]
    return tool_use("Edit", {"file_path": str(project / "util.py"), "old_string": old, "new_string": new})


def _one_line(screen: str) -> str:
    """The screen's words in one line: a reason wraps at the dialog's width, inside the box's left border."""
    return " ".join(screen.replace("│", " ").split())


MODES = {
    "as-started": [],  # the mode an interactive session starts in (auto)
    "default": ["--permission-mode", "default"],
    "acceptEdits": ["--permission-mode", "acceptEdits"],  # edits go through unasked, but for the hook's ask
}


@pytest.mark.parametrize("mode", MODES.values(), ids=MODES.keys())
def test_the_edit_dialog_names_the_session_holding_the_file_before_the_person_answers(
    run_claude: ClaudeRunner, project: Path, root: Path, isolated_home: Path, mode: list[str]
) -> None:
    (project / "util.py").write_text("x = 1\n")
    _skip_first_run_dialogs(isolated_home, project)
    thinking = threading.Event()
    with ModelServer() as model_a, ModelServer() as model_b:
        model_a.add(_edit(project, "x = 1", "x = 2"), held(thinking, text("A is done")))
        a = run_claude.start(["-p", REQUEST, *EDITS], project, model_a)
        try:
            _wait_for("A's edit of util.py", lambda: _edited(root, "util.py") is not None, a)
            holder = _edited(root, "util.py")
            assert holder is not None
            model_b.add(_edit(project, "x = 2", "x = 3"))
            command = [run_claude.binary, *mode, "--plugin-dir", str(REPO), "B: tidy util.py"]
            b = Terminal(command, project, run_claude.env(model_b))
            try:
                screen = b.wait_for("the edit dialog", lambda s: DIALOG in s and NO.search(s) is not None)
                words = _one_line(screen)
                assert f"session {holder[:8]}" in words, screen
                assert REQUEST in words, screen
                b.type(NO.findall(screen)[-1])  # the person says no
                b.wait_for("the refusal", lambda s: DIALOG not in s and "Rejected update to util.py" in s)
            finally:
                b.close()
            assert (project / "util.py").read_text() == "x = 2\n"  # A's work is untouched
            assert a.poll() is None, "A was alive throughout"
        finally:
            thinking.set()
            a.communicate(timeout=120)
