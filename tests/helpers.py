"""Plain helpers shared by the tests (fixtures live in conftest.py)."""

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from blackboard.settings import Settings

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "claude-2.1.332"  # recorded from Claude Code by tests/fixtures/record.py
SCRATCH = "/SCRATCH"  # what record.py put where the recording's temporary folder was


def recorded_constant(name: str) -> str:
    """A constant of tests/fixtures/record.py (what the session was scripted to say), read without running it."""
    import ast

    tree = ast.parse((FIXTURES.parent / "record.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise LookupError(name)


def open_work_section(context: str) -> str:
    """The open work section of an injected context ('' when it has none)."""
    _, found, rest = context.partition("## Open work\n")
    return rest.split("\n## ")[0].split("BLACKBOARD-DATA")[0] if found else ""


def write_turns(path: Path, first: int, last: int, prompt_chars: int = 1900, message_chars: int = 3900) -> None:
    """Turns ``first``..``last`` of a session's ``_digest.jsonl``, as its hooks write them: a request, an edit
    of a file of its own (``src/file_N.py``) and the last message, each of about the size the hooks keep."""
    at = "2026-11-22T10:00:00Z"
    with path.open("a") as handle:
        for n in range(first, last + 1):
            handle.write(json.dumps({"kind": "prompt", "text": f"request {n} " + "p" * prompt_chars, "at": at}) + "\n")
            handle.write(json.dumps({"kind": "edit", "tool": "Edit", "path": f"src/file_{n}.py", "at": at}) + "\n")
            handle.write(json.dumps({"kind": "stop", "text": f"answer {n} " + "m" * message_chars, "at": at}) + "\n")


def make_git_project(
    path: Path, remote: Optional[str] = "git@github.com:acme/widget.git", branch: str = "main"
) -> Path:
    """A git checkout at ``path`` on ``branch`` with ``remote`` as its origin, made by git.

    Git makes each kind once per test process; every checkout after that is a copy of its
    ``.git``, which holds no path of its own. Two processes per test cost more than the test
    on Python 3.9, whose subprocess forks the whole pytest process.
    """
    path.mkdir(parents=True, exist_ok=True)
    template = _GIT_TEMPLATES.get((remote, branch))
    if template is None:
        template = Path(tempfile.mkdtemp(prefix="git-template-"))
        atexit.register(shutil.rmtree, template, True)
        # no template: a checkout of git's sample hooks and description costs three times the files to copy
        subprocess.run(["git", "init", "-q", "--template=", "-b", branch, str(template)], check=True)
        if remote:
            subprocess.run(["git", "-C", str(template), "remote", "add", "origin", remote], check=True)
        _GIT_TEMPLATES[(remote, branch)] = template
    shutil.copytree(template / ".git", path / ".git", symlinks=True)
    return path


_GIT_TEMPLATES: dict[tuple[Optional[str], str], Path] = {}


def hook_argv(event: str) -> list[str]:
    """What hooks/hooks.json runs for a Claude Code event: ``command`` and ``args``, no shell.

    ``${CLAUDE_PLUGIN_ROOT}`` is replaced as Claude Code replaces it in the exec form.
    """
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    (argv,) = {(h["command"], *h["args"]) for group in config["hooks"][event] for h in group["hooks"]}
    return [part.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for part in argv]


class HookResult:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def context(self) -> str:
        return json.loads(self.stdout)["hookSpecificOutput"]["additionalContext"]


def start_payload(session_id: str, cwd: Path, source: str = "startup") -> dict:
    return {
        "session_id": session_id,
        "transcript_path": f"/tmp/transcripts/{session_id}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": source,
    }


def end_payload(session_id: str, cwd: Path, reason: str = "prompt_input_exit") -> dict:
    return {
        "session_id": session_id,
        "transcript_path": f"/tmp/transcripts/{session_id}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionEnd",
        "reason": reason,
    }


def spawn_hook(event: str, payload: dict, hook_venv: Path) -> "subprocess.Popen[bytes]":
    """Start a hook as Claude Code does, with its JSON written to stdin but stdin left open.

    Closing stdin (``proc.stdin.close()``) lets it run; closing several at once starts them together.
    """
    import os

    env = dict(os.environ, CLAUDE_PLUGIN_ROOT=str(REPO), BLACKBOARD_VENV=str(hook_venv))
    proc = subprocess.Popen(
        hook_argv(event),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    return proc


def dead_pid() -> int:
    """The pid of a process that has already exited."""
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# Session ids that must be refused wherever they arrive (hook stdin, env vars, `--session`):
# ADR 3 refuses `..`, `/`, NUL, empty, absolute paths and 10 000 characters; the rest are the
# usual ways a path, a shell or a human eye is fooled. Empty is not here: on stdin and in
# `--session` it means "not given" and the next source is used (tests/integration/test_hostile_input.py).
HOSTILE_SESSION_IDS = {
    "dot-dot": "..",
    "dot": ".",
    "traversal": "a/../b",
    "absolute": "/etc/passwd",
    "slash": "a/b",
    "backslash": "a\\b",
    "windows-traversal": "..\\..\\x",
    "nul": "a\x00b",
    "newline": "a\nb",
    "trailing-newline": "abc\n",
    "tab": "a\tb",
    "carriage-return": "a\rb",
    "leading-dash": "-rf",
    "leading-dot": ".hidden",
    "leading-underscore": "_x",
    "embedded-dot-dot": "a..b",
    "space": "a b",
    "tilde": "~",
    "tilde-user": "~root",
    "command-substitution": "$(touch pwned)",
    "backticks": "`id`",
    "semicolon": "a;rm -rf x",
    "glob": "*",
    "percent-encoded-dot-dot": "%2e%2e",
    "colon": "c:x",
    "ten-thousand-chars": "x" * 10_000,
    "129-chars": "x" * 129,
    "non-ascii": "séance",
    "cyrillic-lookalike": "\u0455\u0435ssion",  # Cyrillic dze and ie look like "se"
    "fullwidth-lookalike": "\uff53\uff11",  # "ｓ１"
    "zero-width-space": "s\u200b1",
    "right-to-left-override": "s1\u202etxt",
    "arabic-indic-digit": "\u0663",
    "superscript-digit": "\u00b9",
}


def run_cli(*args: str, stdin: str = "", env: Optional[dict] = None) -> "tuple[int, str, str]":
    """``blackboard ARGS`` in this process, through the CLI's own entry point: (exit status, stdout, stderr)."""
    from click.testing import CliRunner

    from blackboard import cli

    with CliRunner(mix_stderr=False).isolation(input=stdin, env=env or {}) as (out, err):
        code = cli.run(list(args))
        return code, out.getvalue().decode(), err.getvalue().decode()


def settings_now(**overrides: str) -> Settings:
    """The settings a hook or the command would read now: the test's environment, with ``overrides``."""
    return Settings({**os.environ, **overrides})


def as_from_a_terminal() -> None:
    """For ``preexec_fn``: Ctrl+C reaches the command as from a terminal, whatever the test process
    inherited or blocked (a worker of the test runner may block or ignore SIGINT)."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until_reading_a_pipe(pid: int, timeout: float = 60) -> None:
    """Wait until process ``pid``, or a Python it started, blocks reading a pipe (its stdin).

    A fixed sleep is not enough on a loaded machine: the interpreter may still be starting,
    and the launcher's shell reads pipes of its own first (a command substitution).
    Linux tells through ``/proc/{pid}/wchan``; elsewhere this waits two seconds.
    """
    import time

    if not os.path.isdir(f"/proc/{pid}"):
        time.sleep(2)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tree = _process_tree(pid)
        pythons = [p for p in tree if "python" in _proc_text(p, "cmdline")]
        if any("pipe_read" in _proc_text(p, "wchan") for p in pythons):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never waited on its stdin")


def _process_tree(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending += [int(c) for c in _proc_text(current, f"task/{current}/children").split()]
    return found


def _proc_text(pid: int, name: str) -> str:
    try:
        with open(f"/proc/{pid}/{name}") as handle:
            return handle.read()
    except OSError:
        return ""
