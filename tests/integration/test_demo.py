"""`make demo` runs the real hooks from hooks/hooks.json: a handoff reaching session two, then two live sessions."""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import REPO

LIVE = "== Two live sessions at once =="


@pytest.fixture(scope="module")
def demo(hook_venv: Path) -> Iterator[tuple[str, Path]]:
    """The demo's output and the folder it worked in, run once for the tests of this module."""
    env = dict(os.environ, BLACKBOARD_VENV=str(hook_venv))
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py")], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    work = re.search(r"Everything above lives in (\S+);", result.stdout)
    assert work is not None
    yield result.stdout, Path(work.group(1))
    shutil.rmtree(work.group(1))


def hooks_run(text: str) -> list[tuple[str, str]]:
    return re.findall(r"hooks/run (\S+)\s+-> exit (\d+)", text)


def steps(text: str) -> list[str]:
    """The live part's steps (``-- title --`` and what follows), whitespace made single spaces: reasons are wrapped."""
    return [" ".join(step.split()) for step in re.split(r"\n(?=-- .+ --\n)", text)[1:]]


def test_the_demo_shows_a_handoff_reaching_the_next_session(demo: tuple[str, Path]) -> None:
    handoff = demo[0].split(LIVE)[0]
    events = ["session-start", "user-prompt-submit", "post-tool-use", "stop", "session-end", "session-start"]
    assert hooks_run(handoff) == [(event, "0") for event in [*events, "session-end"]]
    context = handoff.split("== The context session two received (additionalContext) ==")[1].split("\n== ")[0]
    assert "From session one" in context
    assert "Cover token expiry with tests" in context
    for digest in (
        "first request: Add refresh tokens",
        "rotation is not written yet",
        "`auth.py`: 1 edit",
        "Add a refresh() stub",
    ):
        assert digest in context, digest  # what was asked, where it stopped, what changed
    assert "Rotate refresh tokens on every use" in context  # Claude Code's own task, still open


def test_the_demo_shows_two_live_sessions_guarding_each_others_work(demo: tuple[str, Path]) -> None:
    output, work = demo
    live = output.split(LIVE)[1].split("\n(Everything above")[0]
    a_edits, b_starts, b_edits, b_stashes, a_holds, a_releases = steps(live)

    assert hooks_run(a_edits) == [("session-start", "0"), ("user-prompt-submit", "0"), ("post-tool-use", "0")]
    assert "def refresh(token):\n    new = issue_token" in (work / "widget" / "auth.py").read_text()  # left uncommitted
    # who is here: in B's SessionStart context, then from `blackboard who`, each naming A, its request and its file
    who_is_a = '- a11ce000: this checkout, branch "main" asks: "Rotate refresh tokens on every use" edited: "auth.py"'
    context, who = b_starts.split("$ blackboard who")
    assert "Other live sessions of this project" in context and who_is_a in context
    assert who.strip().startswith(who_is_a) and "(uncommitted," in who

    assert 'ask: blackboard: the file "auth.py" is held by another live Claude Code session' in b_edits
    assert "session a11ce000, " in b_edits and 'request (data) is "Rotate refresh tokens on every use"' in b_edits
    assert hooks_run(b_stashes) == [("pre-tool-use", "0"), ("pre-tool-use", "0")]
    asked, denied = b_stashes.split("deny: ")
    assert "ask: blackboard: this command would stash away work another live Claude Code session holds" in asked
    assert "session a11ce000" in asked and 'which holds "auth.py"' in asked
    assert "this command would stash away" in denied and "No one can be asked in this mode" in denied

    assert "$ blackboard hold 'docs/*' --reason 'rewriting the docs' held docs/*" in a_holds
    assert 'holds: "docs/*" (held explicitly, because "rewriting the docs")' in a_holds
    assert "ask: blackboard: this command would remove work" in a_holds and 'which holds "docs/*"' in a_holds
    assert "$ blackboard release released all" in a_releases
    assert hooks_run(a_releases) == [("pre-tool-use", "0")]
    assert "(the hook says nothing" in a_releases and "ask:" not in a_releases and "deny:" not in a_releases


def test_the_demo_ends_its_stand_in_claude_code_processes(demo: tuple[str, Path], hook_venv: Path) -> None:
    """Sessions A and B never end by a hook: they stop being live because their processes were ended."""
    output, work = demo
    terminal = {name: value for name, value in os.environ.items() if not name.startswith(("CLAUDE", "BLACKBOARD"))}
    env = dict(terminal, BLACKBOARD_ROOT=str(work / "root"), BLACKBOARD_VENV=str(hook_venv))
    result = subprocess.run(
        [str(REPO / "bin" / "blackboard"), "who"], cwd=work / "widget", env=env, capture_output=True, text=True
    )
    assert (result.returncode, result.stdout.strip()) == (0, "(no live session here)"), result.stderr
