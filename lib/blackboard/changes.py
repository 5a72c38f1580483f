"""What a session changed in its repository: commits since it started, files left uncommitted.

The start is the ``HEAD`` commit recorded at SessionStart (``gitinfo.resolve_head``, from
``.git``'s files without running git). The rest asks git, read-only and non-interactively:
none of the repository's hooks, fsmonitor, pager, signature check, filter drivers or
transports run, no optional lock is taken, whatever git starts dies with it at the deadline,
and a git that fails, hangs or is missing only costs the handoff that part
(docs/adr/0021-session-digest.md). ``git_ignores`` and ``git_tracks`` ask the same careful
way about files the plugin is about to trust (docs/adr/0024-what-the-repository-ships.md).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Collection, Mapping

from .fsutil import link_on_the_way
from .gitinfo import SHA, checkout_around

MAX_COMMITS = 20
GIT_SECONDS = 0.8  # for both commands together: Claude Code cancels SessionEnd after about 1.5 s
TRACKED_SECONDS = 1.0  # git_tracks at SessionStart: one `ls-files` on an index, milliseconds when git is well
MAX_OUTPUT = 256 * 1024
# What a hostile repository's config could make a read-only command run, turned off.
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "log.showSignature=false",
    "protocol.allow=never",  # no transport at all: a partial clone's lazy fetch would run core.sshCommand
    # ...and each by name, since a repository's own `protocol.ext.allow=always` wins over the default above
    *(f"protocol.{name}.allow=never" for name in ("ext", "fd", "file", "git", "ssh", "http", "https")),
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class Changes:
    """Commits made since the session started (short sha, subject) and the files left uncommitted."""

    __slots__ = ("commits", "more_commits", "uncommitted_paths", "problem", "others")

    def __init__(
        self,
        commits: list[tuple[str, str]] | None = None,
        more_commits: bool = False,
        uncommitted_paths: list[str] | None = None,
        problem: str | None = None,
    ) -> None:
        self.commits = commits or []
        self.more_commits = more_commits
        self.uncommitted_paths = uncommitted_paths  # as ``git status`` names them; None: git could not tell
        self.problem = problem
        self.others: dict[str, list[str]] = {}  # another live session -> the uncommitted files it edited (``split``)

    @property
    def uncommitted(self) -> int | None:
        """How many uncommitted files are this session's, or no live session's; None when git could not tell."""
        if self.uncommitted_paths is None:
            return None
        return len(self.uncommitted_paths) - sum(len(paths) for paths in self.others.values())

    def split(self, own: Collection[str], others: Mapping[str, Mapping[str, float]]) -> None:
        """Say which uncommitted files are another live session's (``others``: its id -> the files it edited, each
        with when). A file is this session's when it edited it (``own``) or no other did; else it is the one's
        that edited it last. A folder git lists whole (new, untracked) is a file edited in it."""
        self.others = {}
        mine = dict.fromkeys(own, 0.0)
        for path in self.uncommitted_paths or []:
            if _last_edit(mine, path) is not None:
                continue
            edits = [(_last_edit(files, path), session) for session, files in others.items()]
            found = [(at, session) for at, session in edits if at is not None]
            if found:
                self.others.setdefault(max(found)[1], []).append(path)


def _last_edit(files: Mapping[str, float], path: str) -> float | None:
    """When ``path`` (or, for a folder ``dir/``, a file in it) was last edited among ``files``; None if never."""
    if path in files:
        return files[path]
    if not path.endswith("/"):
        return None
    return max((at for name, at in files.items() if name.startswith(path)), default=None)


def since(
    toplevel: str | None, start: str | None, started: str, environ: Mapping[str, str], deadline: float | None = None
) -> Changes:
    """Commits on ``HEAD`` after ``start`` (with no commit then: since ``started``), and uncommitted files.

    Git is asked until ``deadline`` (a ``time.monotonic`` value; ``GIT_SECONDS`` from now by default).
    """
    if not toplevel:
        return Changes(problem="not a git repository")
    if start is not None and not re.fullmatch(SHA, start):
        start = None
    deadline = time.monotonic() + GIT_SECONDS if deadline is None else deadline
    if time.monotonic() >= deadline:
        return Changes(problem="git was not asked: no time was left for it")
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


def _uncommitted(toplevel: str, environ: Mapping[str, str], deadline: float) -> tuple[list[str] | None, str | None]:
    """The files ``git status`` lists, with every filter driver turned off (a clean filter is a program)."""
    output, problem = _status(toplevel, ["--ignore-submodules=all"], environ, deadline)
    return (None, problem) if output is None else (status_paths(output), None)


MAX_PATHSPECS = 64  # past this many files, git lists every change and the answer is picked from it


def uncommitted_among(toplevel: str, paths: list[str], environ: Mapping[str, str], deadline: float) -> set[str] | None:
    """Which of ``paths`` (relative to ``toplevel``) differ from HEAD in the working tree or the index, untracked
    ones included; None when git cannot say in time. A file of a submodule or nested repository is asked of it."""
    by_checkout: dict[str, list[str]] = {}
    inner = _repositories_within(toplevel)
    folders = {folder: inner(folder) for folder in {path.rpartition("/")[0] for path in paths}}
    for path in paths:
        by_checkout.setdefault(folders[path.rpartition("/")[0]], []).append(path)
    found: set[str] = set()
    for checkout, group in by_checkout.items():
        inside = [os.path.relpath(path, checkout) if checkout else path for path in group]
        # a file git ignores (`.env`) is held too when named; past the bound, ignored files are not listed
        named = ["--ignored=matching", "--", *inside] if len(inside) <= MAX_PATHSPECS else []
        output, _ = _status(os.path.join(toplevel, checkout), ["--untracked-files=all", "--no-renames", *named],
                            environ, deadline)  # fmt: skip
        if output is None:
            return None
        listed = {entry[3:].rstrip("/") for entry in output.split("\0") if len(entry) > 3}
        found.update(path for path, there in zip(group, inside) if there in listed)
    return found


def staged(toplevel: str, environ: Mapping[str, str], deadline: float) -> set[str] | None:
    """The files whose staged content differs from HEAD, what a plain ``git commit`` would take; None when git
    cannot say in time."""
    output, _ = run_git(toplevel, ["diff", "--cached", "--name-only", "-z", "--no-renames"], environ, deadline)
    return None if output is None else {path for path in output.split("\0") if path}


def _repositories_within(toplevel: str) -> Callable[[str], str]:
    """For a folder of ``toplevel`` (a relative path), the repository it belongs to: "" for ``toplevel`` itself,
    else the folder of the submodule or nested repository around it; each folder looked at once."""
    known: dict[str, str] = {"": ""}

    def repository(folder: str) -> str:
        unknown = []
        while folder not in known:  # up to the first folder already known ("" at the latest)
            if os.path.lexists(os.path.join(toplevel, folder, ".git")):
                known[folder] = folder
                break
            unknown.append(folder)
            folder = os.path.dirname(folder)
        for below in unknown:
            known[below] = known[folder]
        return known[folder]

    return repository


def _status(
    toplevel: str, args: list[str], environ: Mapping[str, str], deadline: float
) -> tuple[str | None, str | None]:
    """``git status --porcelain=v1 -z`` with ``args``, every filter driver turned off (a clean filter is a program)."""
    drivers, problem = _filter_drivers(toplevel, environ, deadline)
    if drivers is None:
        return None, problem
    off = [f"filter.{name}.{key}=" for name in drivers for key in ("clean", "smudge", "process")]
    off += [f"filter.{name}.required=false" for name in drivers]
    return run_git(toplevel, ["status", "--porcelain=v1", "-z", *args], environ, deadline, config=off)


def status_paths(output: str) -> list[str]:
    """The files ``git status --porcelain=v1 -z`` lists, from the checkout's top; a rename or copy is followed by
    its old path, not listed. A new folder git does not look into is listed as ``dir/``."""
    entries, paths, i = output.split("\0"), [], 0
    while i < len(entries):
        if entries[i]:
            paths.append(entries[i][3:])
            i += 1 if "R" not in entries[i][:2] and "C" not in entries[i][:2] else 2
        else:
            i += 1
    return paths


def _filter_drivers(toplevel: str, environ: Mapping[str, str], deadline: float) -> tuple[set[str] | None, str | None]:
    """The filter drivers git's configuration names (None with a reason when one cannot be turned off by name)."""
    args = ["config", "--get-regexp", "--name-only", r"^filter\."]
    output, problem = run_git(toplevel, args, environ, deadline, fine=(0, 1))  # 1: no such setting at all
    if output is None:
        return None, problem
    names = {line[len("filter.") :].rpartition(".")[0] for line in output.splitlines() if line.startswith("filter.")}
    if any(not re.fullmatch(r"[A-Za-z0-9._-]+", name) for name in names):
        return None, "uncommitted files not counted: a filter driver with an unusual name"
    return names, None


def git_ignores(real_path: str, environ: Mapping[str, str], deadline: float) -> bool:
    """Whether git ignores the file at ``real_path`` (links resolved) in the checkout that holds it.

    True when git cannot say (a ``.git`` it cannot read, a failure, the deadline); a file in
    no checkout at all is ignored by nothing.
    """
    toplevel, readable = checkout_around(os.path.dirname(real_path))
    if toplevel is None:
        return not readable
    output, _ = run_git(toplevel, ["check-ignore", "-q", "--", real_path], environ, deadline, fine=(1,))
    return output is None  # 1: not ignored; 0 (ignored) and every failure are not "fine"


def excluded_by_the_person(real_path: str, environ: Mapping[str, str], deadline: float) -> bool:
    """Whether the person's own excludes (``core.excludesFile``, ``.git/info/exclude``) name the file.

    A repository's ``.gitignore`` outranks them (``!credentials.json`` un-ignores what the person's
    global excludes ignore), so ``git_ignores`` alone would let a repository decide; this asks with
    the person's files only. True when git cannot say.
    """
    toplevel, readable = checkout_around(os.path.dirname(real_path))
    if toplevel is None:
        return not readable
    asked = ["config", "--path", "--get", "core.excludesFile"]
    configured, _ = run_git(toplevel, asked, environ, deadline, fine=(0, 1))
    info, _ = run_git(toplevel, ["rev-parse", "--git-path", "info/exclude"], environ, deadline)
    if configured is None or info is None:
        return True
    home = environ.get("HOME")  # as git finds the person's own files: without a home, it has none
    xdg = environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    default = os.path.join(xdg, "git", "ignore") if xdg else ""
    files = [configured.strip() or default, os.path.join(toplevel, info.strip())]
    args = ["ls-files", "-z", "--others", "--ignored", *(f"--exclude-from={f}" for f in files if os.path.isfile(f))]
    if len(args) == 4:
        return False  # the person excludes nothing
    listed, _ = run_git(toplevel, [*args, "--", os.path.relpath(real_path, toplevel)], environ, deadline)
    return listed is None or bool(listed.strip("\0"))


def git_tracks(paths: list[str], environ: Mapping[str, str], deadline: float) -> set[str] | None:
    """Which of ``paths`` git tracks, all asked in one ``git ls-files``; a folder counts when git tracks a file in it.

    Asked of the checkout holding the first path's folder (all must be in it); a path in no
    checkout is tracked by nothing. Names match ignoring ASCII case, as a case-insensitive disk
    opens ``.Blackboard/`` for ``.blackboard/``, and a path through a link counts: a doubt counts
    as tracked. None when git cannot
    say (a ``.git`` it cannot read, a failure, the deadline, a listing too long to read whole).
    """
    if not paths:
        return set()
    toplevel, readable = checkout_around(os.path.dirname(paths[0]))
    if toplevel is None:
        return set() if readable else None
    relative = {path: os.path.relpath(path, toplevel) for path in paths}
    args = ["ls-files", "-z", "--", *(f":(literal,icase){rel}" for rel in relative.values())]
    output, _ = run_git(toplevel, args, environ, deadline, whole=True)
    if output is None:
        return None
    held: set[str] = set()  # every tracked file and each folder above it
    for line in filter(None, output.split("\0")):
        parts = _fold(line).split("/")
        held.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    # git never lists a path that goes through a link it tracks (`.claude/mnemonic` -> `docs/notes`):
    # a path inside the checkout with a link on its way came with the repository, as far as anyone can tell
    return {path for path, rel in relative.items() if _fold(rel) in held or _through_a_link(toplevel, rel)}


def _through_a_link(toplevel: str, relative: str) -> bool:
    """Whether a folder on the way from ``toplevel`` to ``relative`` (or the path itself) is a symbolic link."""
    parts = relative.split(os.sep)
    if parts[0] == os.pardir:
        return False  # not inside the checkout: git has no say
    return link_on_the_way(toplevel, parts) is not None


def _fold(name: str) -> str:
    """``name`` as git's ``icase`` compares it: ASCII in lower case, what is not UTF-8 replaced as in git's output."""
    return os.fsencode(name).decode("utf-8", "replace").translate(_ASCII_LOWER)


def run_git(
    toplevel: str,
    args: list[str],
    environ: Mapping[str, str],
    deadline: float | None = None,
    config: list[str] | None = None,
    fine: tuple[int, ...] = (0,),
    whole: bool = False,
) -> tuple[str | None, str | None]:
    """Run ``git`` read-only in ``toplevel`` until ``deadline``: ``(output, None)``, or ``(None, what went wrong)``.

    ``config`` adds ``-c`` settings; an exit status in ``fine`` is a success. Output is cut at
    ``MAX_OUTPUT`` bytes, or with ``whole`` is a failure past it. Git runs in a process group
    of its own, so whatever it started goes with it at the deadline.
    """
    # Loaded here, where git runs: most hooks that import this module run no git, and subprocess
    # (with signal, threading, selectors and locale) costs a hook about 5 ms to import.
    import signal
    import subprocess

    timeout = GIT_SECONDS if deadline is None else max(deadline - time.monotonic(), 0.05)
    try:
        process = subprocess.Popen(
            git_command(args, config or []),
            cwd=toplevel,
            env={**git_environment(environ), "GIT_CEILING_DIRECTORIES": _ceiling(toplevel)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        return None, f"git {args[0]} could not run: {exc.strerror}"
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None, f"git {args[0]} took over {timeout:.2f}s"
    if process.returncode not in fine:
        return None, f"git {args[0]} failed (exit status {process.returncode})"
    if whole and len(output) > MAX_OUTPUT:
        return None, f"git {args[0]} said more than {MAX_OUTPUT // 1024} KiB"
    return output[:MAX_OUTPUT].decode("utf-8", "replace"), None


def git_command(args: list[str], config: list[str]) -> list[str]:
    """``git`` with the settings that keep the repository's own programs from running, then ``args``."""
    command = ["git", "--no-pager", "--no-optional-locks"]
    for setting in [*SAFE_CONFIG, *config]:
        command += ["-c", setting]
    return [*command, *args]


def git_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment for git: none of the caller's other ``GIT_*`` (``GIT_DIR``, ``GIT_SSH``…), no prompt."""
    # the person's own git settings (their global excludes among them) are read where they keep them
    kept = ("PATH", "HOME", "LANG", "TMPDIR", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL")
    env = {k: v for k, v in environ.items() if k in kept}
    env.setdefault("PATH", os.defpath)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_NO_LAZY_FETCH="1", LC_ALL="C")
    return env


def _ceiling(toplevel: str) -> str:
    """What stops git looking above ``toplevel``: a broken checkout inside another is not the outer one."""
    return os.path.dirname(os.path.abspath(toplevel))
