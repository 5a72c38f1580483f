import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from blackboard import session
from blackboard.hook import main, read_payload
from blackboard.paths import PathResolver
from helpers import REPO


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b'{"session_id": "a"}', {"session_id": "a"}, id="object"),
        pytest.param(b"", {}, id="empty"),
        pytest.param(b"[1]", {}, id="array"),
        pytest.param(b"nope", {}, id="invalid"),
        pytest.param(b"\xff\xfe", {}, id="binary"),
        pytest.param(b'{"a": "' + b"x" * (2 << 20) + b'"}', {}, id="too-large"),
    ],
)
def test_read_payload(raw: bytes, expected: dict) -> None:
    assert read_payload(io.BytesIO(raw)) == expected


def test_main_returns_zero_for_an_unknown_event(capsys) -> None:
    assert main(["bogus"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "unknown hook event" in captured.err


HEAVY_MODULES = {"json", "re", "typing", "contextlib", "datetime", "filelock", "yaml", "frontmatter", "click"}
IMPORT_PROBE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from blackboard import hook
for n in range(2):
    hook.run("session-start", {"source": "startup", "session_id": f"s{n}", "cwd": sys.argv[2]}, os.environ)
print(" ".join(sorted(sys.modules)))
"""


def test_session_start_imports_nothing_heavy(resolver: PathResolver, project: Path, root: Path) -> None:
    """Reading a handoff and another active session's age still needs no json, re, typing or datetime."""
    session.start(resolver, "earlier", "startup", {"cwd": str(project)})
    session.end(resolver, "earlier", "other")  # leaves a latest handoff to read
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", IMPORT_PROBE, str(REPO / "lib"), str(project)],
        capture_output=True,
        text=True,
        env=dict(os.environ, BLACKBOARD_ROOT=str(root)),
        check=True,
    )
    loaded = set(out.stdout.split())
    assert {"blackboard.recovery", "blackboard.context", "blackboard.migrate"} <= loaded
    assert loaded & HEAVY_MODULES == set()
