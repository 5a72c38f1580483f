"""Sync through git with real Claude Code sessions: a note taken on one machine reaches the next session on another.

Two machines, "alpha" and "beta", share one box as in tests/integration/test_sync_machines.py: each has its own
HOME, blackboard root, clone of a bare remote and BLACKBOARD_HOST, and has run `blackboard sync enable`.
On alpha a `claude -p` session, in Claude Code's default permission mode, runs `blackboard note` through
the Bash tool and ends; its SessionEnd starts a background push, which lands after Claude Code has exited. On
beta a `claude -p` session starts: its SessionStart fetches the remote, imports alpha's finished session,
and injects alpha's handoff as the context the scripted model receives.
"""

import os
import subprocess
import time
from pathlib import Path

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, Request, bash, text

from helpers import REPO

pytestmark = pytest.mark.e2e

LAUNCHER = str(REPO / "bin" / "blackboard")
SESSION_HEADER = "X-Claude-Code-Session-Id"
NOTE = "alpha traced the flaky upload to a stale ETag cache"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


class Machine:
    """One simulated machine: its HOME, its blackboard root, its clone of the project, its host name."""

    def __init__(self, base: Path, name: str, remote: Path, hook_venv: Path) -> None:
        self.name = name
        self.home, self.root, self.clone = base / name / "home", base / name / "root", base / name / "widget"
        self.home.mkdir(parents=True)
        _git("clone", "-q", f"file://{remote}", str(self.clone), cwd=base)
        self.claude_env = {  # on top of what the runner sets; its HOME is the shared isolated_home
            "HOME": str(self.home),
            "BLACKBOARD_ROOT": str(self.root),
            "BLACKBOARD_HOST": name,
            "BLACKBOARD_SYNC_TIMEOUT": "30",  # a loaded test box must not turn a local fetch into a miss
        }
        self.hook_venv = hook_venv

    def cli(self, *args: str) -> "subprocess.CompletedProcess[str]":
        """``bin/blackboard ARGS`` in the clone, as this machine; fails the test unless it succeeds."""
        env = dict(os.environ, BLACKBOARD_VENV=str(self.hook_venv), **self.claude_env)
        proc = subprocess.run([LAUNCHER, *args], cwd=self.clone, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{self.name}: blackboard {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
        return proc

    def claude(self, run_claude: ClaudeRunner, model: ModelServer, prompt: str) -> list[Request]:
        """One whole `claude -p` session in the clone; returns the main-loop requests the model received."""
        first = len(model.main_requests)
        result = run_claude(["-p", prompt], cwd=self.clone, model=model, extra_env=self.claude_env)
        assert result.returncode == 0, f"{self.name}:\n{result.stdout}\n{result.stderr}\n{model.summary()}"
        return model.main_requests[first:]

    def sessions(self) -> list[str]:
        """This machine's own sessions."""
        return sorted(p.name for p in self.root.glob("*/*/.blackboard/sessions/*"))

    def received(self) -> list[str]:
        """What other machines sent, kept under their machine's id (ADR 30)."""
        return sorted(p.name for p in self.root.glob("*/*/.blackboard/_sync/machines/*/sessions/*"))


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare repository holding the project's own history (one commit on main)."""
    bare = tmp_path / "remote" / "widget.git"
    seed = tmp_path / "seed"
    _git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)  # HEAD names main: clones check it out
    _git("init", "-q", "-b", "main", str(seed), cwd=tmp_path)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init", cwd=seed)
    _git("push", "-q", str(bare), "main", cwd=seed)
    return bare


def _remote_tree(remote: Path) -> list[str]:
    """Every file of every machine's ref (``refs/blackboard-machines/``)."""
    refs = _git(
        "--git-dir", str(remote), "for-each-ref", "--format=%(refname)", "refs/blackboard-machines/", cwd=remote
    )
    return sorted(
        path
        for ref in refs.split()
        for path in _git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", ref, cwd=remote).split()
    )


def _session_id(request: Request) -> str:
    return request.headers[SESSION_HEADER]


def test_a_note_from_alphas_session_is_the_context_of_betas_next_session(
    run_claude: ClaudeRunner, model: ModelServer, remote: Path, hook_venv: Path, tmp_path: Path
) -> None:
    machines: dict[str, Machine] = {n: Machine(tmp_path / "machines", n, remote, hook_venv) for n in ("alpha", "beta")}
    alpha, beta = machines["alpha"], machines["beta"]
    for machine in (alpha, beta):
        machine.cli("sync", "enable", "--yes")

    # alpha: a real session whose agent takes a note, then one foreground round that makes sure it was pushed
    model.add(bash(f'blackboard note "{NOTE}"'), text("noted"))
    on_alpha = alpha.claude(run_claude, model, "take a note")
    assert len(on_alpha) == 2, model.summary()
    (note_result,) = on_alpha[1].tool_results()
    assert note_result["text"].strip() == "n1", note_result["text"]  # it ran, unasked, on alpha's board
    alpha_session = _session_id(on_alpha[0])
    assert alpha.sessions() == [alpha_session]
    # the push that alpha's SessionEnd started outlives Claude Code: it lands with no `blackboard sync`
    deadline = time.monotonic() + 30
    while f"handoff/handoff-{alpha_session}.md" not in _remote_tree(remote):
        assert time.monotonic() < deadline, f"the background push never landed: {_remote_tree(remote)}"
        time.sleep(0.2)
    alpha.cli("sync")  # waits for any round still running there

    # beta: a fresh session; its SessionStart imports alpha's session and hands its handoff to the model
    model.add(text("hello from beta"))
    (on_beta,) = beta.claude(run_claude, model, "hi")

    beta_session = _session_id(on_beta)
    assert beta_session != alpha_session
    shown = on_beta.all_text()
    assert NOTE in shown, shown[:4000]
    assert "on host alpha" in shown, shown[:4000]
    assert f"From session {alpha_session} on host alpha" in shown, shown[:4000]
    assert beta.sessions() == [beta_session] and beta.received() == [alpha_session]  # alpha's kept apart

    beta.cli("sync")  # waits for the round beta's hooks started in the background, so none outlives the test
