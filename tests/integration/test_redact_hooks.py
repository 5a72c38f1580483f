"""What the hooks write and inject from a session's text: redacted whole (issue 39, point 5), and inert."""

from pathlib import Path

import pytest

from blackboard import entries
from helpers import end_payload, start_payload

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
