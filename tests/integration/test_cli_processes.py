"""The `blackboard` launcher and its exactly-once guarantees, with real processes at once."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from blackboard import entries, session
from blackboard.paths import PathResolver
from helpers import REPO, as_from_a_terminal, settings_now, wait_until_reading_a_pipe

LAUNCHER = str(REPO / "bin" / "blackboard")
# Each process sleeps until a shared instant, then becomes `blackboard ARGS`.
AT_ONCE = (
    "import os, sys, time; time.sleep(max(0.0, float(sys.argv[1]) - time.time())); os.execv(sys.argv[2], sys.argv[2:])"
)


@pytest.fixture
def env(hook_venv: Path, resolver: PathResolver) -> dict:
    session.start(resolver, "s1", "startup", {}, settings_now())
    return dict(os.environ, BLACKBOARD_VENV=str(hook_venv), BLACKBOARD_SESSION_ID="s1")


def _at_once(commands: list[list[str]], env: dict, cwd: Path) -> list[subprocess.CompletedProcess]:
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AT_ONCE, str(start), LAUNCHER, *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def test_launcher_runs_the_cli(env: dict, project: Path, resolver: PathResolver) -> None:
    result = subprocess.run(
        [LAUNCHER, "task", "add", "from", "bash", "--json"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"id": "t1", "session_id": "s1"}
    help_text = subprocess.run([LAUNCHER, "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert help_text.returncode == 0
    assert "note" in help_text.stdout
    assert "task" in help_text.stdout


def test_launcher_runs_in_an_environment_of_the_users_own(env: dict, project: Path) -> None:
    """BLACKBOARD_VENV may name a venv the plugin did not build (no stamp): its packages are still found."""
    own = dict(env, BLACKBOARD_VENV=sys.prefix)  # the test environment: click and the rest, no stamp of ours
    assert not (Path(sys.prefix) / ".blackboard-requirements").exists()
    result = subprocess.run(
        [LAUNCHER, "note", "from my own venv"], env=own, cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_launcher_through_a_symlink(env: dict, project: Path, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "blackboard").symlink_to(LAUNCHER)
    result = subprocess.run(
        [str(tmp_path / "bin" / "blackboard"), "where", "--json"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["session_id"] == "s1"


@pytest.mark.parametrize(
    ("args", "status"),
    [
        pytest.param(["task", "claim", "t9"], 1, id="expected-failure"),
        pytest.param(["task", "claim"], 2, id="usage-error"),
    ],
)
def test_launcher_errors_are_one_line(env: dict, project: Path, args: list[str], status: int) -> None:
    result = subprocess.run([LAUNCHER, *args], env=env, cwd=project, capture_output=True, text=True)
    assert result.returncode == status
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1


def test_ctrl_c_exits_130_without_a_traceback(env: dict, project: Path) -> None:
    proc = subprocess.Popen(
        [LAUNCHER, "note", "-"],  # waits on stdin, as a long command would
        env=env,
        cwd=project,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    wait_until_reading_a_pipe(proc.pid)  # past the interpreter's start and click's import
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the foreground process group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_twelve_claimants_of_one_task_one_wins(env: dict, project: Path, resolver: PathResolver) -> None:
    board = Path(resolver.get_session_blackboard_dir("s1"))
    entries.append(str(board / "active-tasks.md"), "t", {"status": "open", "author": "main"}, "the prize")
    results = _at_once([["--author", f"agent-{i}", "task", "claim", "t1"] for i in range(12)], env, project)
    winners = [r for r in results if r.returncode == 0]
    losers = [r for r in results if r.returncode != 0]
    assert len(winners) == 1
    assert len(losers) == 11
    assert all(
        r.returncode == 1 and "already claimed by" in r.stderr and len(r.stderr.splitlines()) == 1 for r in losers
    )
    (task,), _ = entries.parse((board / "active-tasks.md").read_text())
    winner = winners[0].args[winners[0].args.index("--author") + 1]
    assert task.fields["claimed_by"] == winner


def test_twelve_claimants_of_one_key_one_wins(env: dict, project: Path, resolver: PathResolver) -> None:
    board = Path(resolver.get_session_blackboard_dir("s1"))
    entries.put(str(board / "shared-context.md"), "job", {"author": "main"}, "payload-42")
    results = _at_once([["claim", "job"] for _ in range(12)], env, project)
    assert sorted(r.returncode for r in results) == [0] + [1] * 11
    assert [r.stdout.strip() for r in results if r.returncode == 0] == ["payload-42"]
    assert entries.parse((board / "shared-context.md").read_text())[0] == []


def test_eight_writers_at_once_each_note_exactly_once(env: dict, project: Path, resolver: PathResolver) -> None:
    # Eight command processes appending at once, ten notes each; the library's own appends
    # are hammered harder in tests/unit/test_fsutil.py, and 16 x 200 in `make bench`.
    loop = 'for i in $(seq 1 10); do "$0" --author "w$1" note "note $1-$i" || exit 1; done'
    start = time.time() + 1.5
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AT_ONCE, str(start), "/bin/bash", "-c", loop, LAUNCHER, str(w)],
            env=env,
            cwd=project,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    notes, problems = entries.parse((Path(resolver.get_session_blackboard_dir("s1")) / "session-notes.md").read_text())
    assert problems == []
    bodies = [n.body for n in notes]
    assert sorted(bodies) == sorted(f"note {w}-{i}" for w in range(8) for i in range(1, 11))
    assert sorted(int(n.id[1:]) for n in notes) == list(range(1, 81))  # ids unique and gapless
