"""What the hooks write and inject from a session's text: redacted whole (issue 39, point 5), and inert."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from blackboard import entries
from helpers import REPO, end_payload, start_payload

ROW = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q9Zx"
KEY_ROWS = [ROW[i:] + ROW[:i] for i in range(40)]  # 40 rows of a key body, each its own
YAML_KEY = (
    "apiVersion: v1\nkind: Secret\nstringData:\n  tls.key: |\n    -----BEGIN PRIVATE KEY-----\n"
    + "".join(f"    {row}\n" for row in KEY_ROWS)
    + "    -----END PRIVATE KEY-----\n"
)
JSON_KEY = (
    '{"type": "service_account", "project_id": "acme", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
    + "\\n".join(KEY_ROWS)
    + '\\n-----END PRIVATE KEY-----\\n", "client_email": "ci@acme.iam.gserviceaccount.com"}'
)
PASTES = [pytest.param(YAML_KEY, id="yaml-indented-key"), pytest.param(JSON_KEY, id="json-escaped-key")]


def _board(root: Path) -> Path:
    return root / "acme" / "widget" / ".blackboard"


def _leaked(text: str) -> list[str]:
    return [row for row in KEY_ROWS if row[:24] in text]


def _paste(key: str) -> str:
    """A 3 KB prompt: a request, the key well inside it, more words after."""
    return "Deploy this secret to staging, then check the ingress:\n\n" + key + "\n" + "and the logs. " * 40


@pytest.mark.parametrize("key", PASTES)
def test_no_row_of_a_long_pasted_key_reaches_the_digest_handoff_or_next_context(
    run_hook, project: Path, root: Path, key: str
) -> None:
    assert run_hook("SessionStart", start_payload("s1", project)).returncode == 0
    sessions = _board(root) / "sessions"
    prompt = {"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit", "prompt": _paste(key)}
    assert run_hook("UserPromptSubmit", prompt).returncode == 0
    entries.append(str(sessions / "s1" / "session-notes.md"), "n", {"author": "main"}, _paste(key))
    entries.append(str(sessions / "s1" / "active-tasks.md"), "t", {"status": "open"}, _paste(key))
    assert run_hook("SessionEnd", end_payload("s1", project)).returncode == 0
    second = run_hook("SessionStart", start_payload("s2", project))

    digest = (sessions / "s1" / "_digest.jsonl").read_text()
    handoff = (_board(root) / "handoff" / "latest-handoff.md").read_text()
    assert "Deploy this secret" in digest and "Deploy this secret" in handoff
    assert "Deploy this secret" in second.context
    assert _leaked(digest) == [] and _leaked(handoff) == [] and _leaked(second.context) == []


# Issue 39, point 8: what a terminal would act on, as a note or a posted value may hold it.
ESCAPES = {
    "clear-screen": "\x1b[2J\x1b[H",
    "window-title": "\x1b]0;pwned\x07\x1b]2;pwned too\x1b\\",
    "clipboard-write": "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07",
    "csi-colour-and-c1": "\x1b[31mred\x1b[0m \x9b2J \x9d0;t\x9c",
    "reset-bell-backspace": "\x1bc\x07\x08\x08\x0e",
}
CONTROLS = "".join(chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)] if c != 0x0D)


def _cli(hook_venv: Path, root: Path, project: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, BLACKBOARD_ROOT=str(root), BLACKBOARD_SESSION_ID="s1", BLACKBOARD_VENV=str(hook_venv))
    done = subprocess.run([str(REPO / "bin" / "blackboard"), *args], cwd=project, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("escape", list(ESCAPES.values()), ids=list(ESCAPES))
def test_terminal_escapes_in_notes_and_posted_values_reach_no_handoff_or_context_but_are_kept(
    run_hook, hook_venv: Path, project: Path, root: Path, escape: str
) -> None:
    assert run_hook("SessionStart", start_payload("s1", project)).returncode == 0
    _cli(hook_venv, root, project, "--author", f"me{escape}", "note", f"note before {escape} note after")
    _cli(hook_venv, root, project, "--author", f"me{escape}", "post", "deploy", f"value before {escape} value after")
    _cli(hook_venv, root, project, "task", "add", f"task before {escape} task after")
    assert run_hook("SessionEnd", end_payload("s1", project)).returncode == 0
    second = run_hook("SessionStart", start_payload("s2", project))

    handoff = (_board(root) / "handoff" / "latest-handoff.md").read_text()
    for shown in (handoff, second.context):
        assert "note before" in shown and "value after" in shown and "task after" in shown
        assert not any(c in CONTROLS for c in shown.replace("\n", "").replace("\t", ""))
    # Stored as written: the board's own value round-trips byte for byte.
    posted = _cli(hook_venv, root, project, "--json", "read", "deploy").stdout
    assert json.loads(posted)["text"] == f"value before {escape} value after"
