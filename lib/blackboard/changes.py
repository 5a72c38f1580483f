"""What a session changed in its repository: commits since it started, files left uncommitted.

The start is the ``HEAD`` commit recorded at SessionStart (``gitinfo.resolve_head``, from
``.git``'s files without running git). The rest asks git, read-only and non-interactively: no hook, fsmonitor, pager,
signature check or credential prompt of the repository's runs, no optional lock is taken,
and a git that fails, hangs or is missing only costs the handoff that part
(docs/adr/0021-session-digest.md).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Mapping

from .gitinfo import SHA

MAX_COMMITS = 20
GIT_SECONDS = 0.8  # for both commands together: Claude Code cancels SessionEnd after about 1.5 s
MAX_OUTPUT = 256 * 1024
# What a hostile repository's config could make a read-only command run, turned off.
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "log.showSignature=false",
)


class Changes:
    """Commits made since the session started (short sha, subject) and how many files are uncommitted."""

    __slots__ = ("commits", "more_commits", "uncommitted", "problem")

    def __init__(
        self,
        commits: list[tuple[str, str]] | None = None,
        more_commits: bool = False,
        uncommitted: int | None = None,
        problem: str | None = None,
    ) -> None:
        self.commits = commits or []
        self.more_commits = more_commits
        self.uncommitted = uncommitted  # None: git could not tell
        self.problem = problem


def since(toplevel: str | None, start: str | None, started: str, environ: Mapping[str, str]) -> Changes:
    """Commits on ``HEAD`` after ``start`` (with no commit then: since ``started``), and uncommitted files."""
    if not toplevel:
        return Changes(problem="not a git repository")
    if start is not None and not re.fullmatch(SHA, start):
        start = None
    deadline = time.monotonic() + GIT_SECONDS
    commits, more, problem = _commits(toplevel, start, started, environ, deadline)
    uncommitted, status_problem = _uncommitted(toplevel, environ, deadline)
    return Changes(commits, more, uncommitted, problem or status_problem)


def _commits(
    toplevel: str, start: str | None, started: str, environ: Mapping[str, str], deadline: float
) -> tuple[list[tuple[str, str]], bool, str | None]:
    since_start = [f"{start}..HEAD"] if start else [f"--since={started}", "HEAD"]
    args = ["log", f"--max-count={MAX_COMMITS + 1}", "--no-decorate", "--format=%h%x00%s", *since_start, "--"]
    output, problem = run_git(toplevel, args, environ, deadline)
    if output is None:
        return [], False, problem if start else None  # no start and no commit yet: nothing to say
    rows = [line.split("\0", 1) for line in output.splitlines() if "\0" in line]
    commits = [(sha[:12], subject) for sha, subject in rows]
    return commits[:MAX_COMMITS], len(commits) > MAX_COMMITS, None


def _uncommitted(toplevel: str, environ: Mapping[str, str], deadline: float) -> tuple[int | None, str | None]:
    args = ["status", "--porcelain=v1", "-z", "--ignore-submodules=all"]
    output, problem = run_git(toplevel, args, environ, deadline)
    if output is None:
        return None, problem
    entries = [e for e in output.split("\0") if e]
    # a rename (R, C) is followed by the path it came from, which is no change of its own
    renames = sum(1 for e in entries if e[:2].strip().startswith(("R", "C")) and len(e) > 3)
    return max(len(entries) - renames, 0), None


def run_git(
    toplevel: str, args: list[str], environ: Mapping[str, str], deadline: float | None = None
) -> tuple[str | None, str | None]:
    """Run ``git`` read-only in ``toplevel`` until ``deadline``: ``(output, None)``, or ``(None, what went wrong)``."""
    timeout = GIT_SECONDS if deadline is None else max(deadline - time.monotonic(), 0.05)
    command = ["git", "--no-pager", "--no-optional-locks"]
    for setting in SAFE_CONFIG:
        command += ["-c", setting]
    try:
        result = subprocess.run(
            [*command, *args],
            cwd=toplevel,
            env=git_environment(environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, f"git {args[0]} took over {timeout:.2f}s"
    except OSError as exc:
        return None, f"git {args[0]} could not run: {exc.strerror}"
    if result.returncode != 0:
        return None, f"git {args[0]} failed (exit status {result.returncode})"
    return result.stdout[:MAX_OUTPUT].decode("utf-8", "replace"), None


def git_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for git: none of the caller's ``GIT_*`` (a hostile ``GIT_DIR`` or ``GIT_SSH``), no prompt."""
    env = {
        k: v
        for k, v in environ.items()
        if not k.startswith("GIT_") and k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
    }
    env.setdefault("PATH", os.defpath)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env
