"""What a working directory's git repository says about itself, read from ``.git`` directly.

Reading the files instead of spawning ``git`` keeps the SessionStart hook fast; see
docs/adr/0002-project-identity.md for what this does not cover.
"""

from __future__ import annotations

import itertools
import os
import re

from .fsutil import read_bounded

MAX_GIT_FILE = 1024 * 1024
MAX_WORKTREES = 256  # worktrees of one repository looked at; a folder of thousands is no one's real setup
MAX_PATH_CHARS = 4096  # PATH_MAX: a longer ``commondir`` names no folder
SHA = r"[0-9a-f]{40}(?:[0-9a-f]{24})?"  # SHA-1, or SHA-256 in a repository that uses it


class GitInfo:
    """A repository: its top folder, its ``origin`` URL and its branch."""

    __slots__ = ("toplevel", "origin_url", "branch")

    def __init__(self, toplevel: str, origin_url: str | None, branch: str | None) -> None:
        self.toplevel = toplevel
        self.origin_url = origin_url
        self.branch = branch


def find_git(cwd: str) -> GitInfo | None:
    """The repository containing ``cwd`` (walking up), or None outside any repository."""
    current = os.path.abspath(cwd)
    while True:
        dot_git = os.path.join(current, ".git")
        git_dir = _git_dir(dot_git)
        if git_dir:
            common = _common_dir(git_dir)
            config = _read(os.path.join(common, "config")) or ""
            url = parse_config(config).get('remote "origin".url')
            return GitInfo(current, url, _branch(git_dir))
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def checkout_of(cwd: str | None) -> str | None:
    """The top folder of the checkout ``cwd`` is in, links resolved; None outside one or when ``.git`` is unreadable."""
    if not cwd or not os.path.isabs(cwd) or "\0" in cwd:
        return None
    top, readable = checkout_around(os.path.realpath(cwd))
    return top if readable else None


def checkout_around(path: str) -> tuple[str | None, bool]:
    """``(top folder, True)`` of the checkout holding ``path``; ``(None, True)`` outside any;
    ``(None, False)`` when a ``.git`` on the way up cannot be read (a file of nonsense, a FIFO)."""
    current = os.path.abspath(path)
    while True:
        dot_git = os.path.join(current, ".git")
        if _git_dir(dot_git):
            return current, True
        if os.path.lexists(dot_git):
            return None, False
        parent = os.path.dirname(current)
        if parent == current:
            return None, True
        current = parent


def common_git_dir(toplevel: str) -> str | None:
    """The real path of the repository behind the checkout at ``toplevel``: its common git dir.

    Every checkout, worktree and link of one repository gives the same: ``/src/widget/.git``
    for ``/src/widget``, for a worktree whose ``.git`` file points into
    ``/src/widget/.git/worktrees/…``, and for ``~/current -> /src/widget``. None when the
    ``.git`` there leads to nothing that looks like a repository (a ``gitdir:`` pointing
    anywhere, a ``commondir`` of garbage): the caller falls back on the folder's own path.
    """
    git_dir = _git_dir(os.path.join(toplevel, ".git"))
    if git_dir is None or not os.path.isfile(os.path.join(git_dir, "HEAD")):
        return None
    common = _shared_dir(git_dir)
    if common is None or not all(os.path.isdir(os.path.join(common, part)) for part in ("objects", "refs")):
        return None  # what git itself asks of a repository before it takes a folder for one
    return os.path.realpath(common)


def worktree_checkouts(common: str) -> list[str]:
    """The top folders of the worktrees a repository lists (``{common}/worktrees/*/gitdir``), as git wrote them.

    At most ``MAX_WORKTREES``; a line that is not an absolute path to a ``.git`` is passed over.
    Nothing here proves the folder is still that worktree: the caller asks its ``.git``.
    """
    try:
        with os.scandir(os.path.join(common, "worktrees")) as entries:
            names = [entry.name for entry in itertools.islice(entries, MAX_WORKTREES)]
    except OSError:
        return []
    found = []
    for name in sorted(names):
        lines = (_read(os.path.join(common, "worktrees", name, "gitdir")) or "").splitlines()
        line = lines[0].strip() if lines else ""
        if os.path.isabs(line) and os.path.basename(line) == ".git" and "\0" not in line:
            found.append(os.path.dirname(line))
    return found


def _shared_dir(git_dir: str) -> str | None:
    """``git_dir``'s ``commondir`` as git takes it (one line, relative to ``git_dir``); None when it is nonsense."""
    if not os.path.lexists(os.path.join(git_dir, "commondir")):
        return git_dir
    lines = (_read(os.path.join(git_dir, "commondir")) or "").splitlines()
    line = lines[0].strip() if len(lines) == 1 else ""
    if not line or len(line) > MAX_PATH_CHARS:
        return None
    return os.path.normpath(os.path.join(git_dir, line))


def _git_dir(dot_git: str) -> str | None:
    if os.path.isdir(dot_git):
        return dot_git
    text = _read(dot_git)
    if text and text.startswith("gitdir:"):
        target = text[len("gitdir:") :].strip()
        return os.path.normpath(os.path.join(os.path.dirname(dot_git), target))
    return None


def _common_dir(git_dir: str) -> str:
    common = _read(os.path.join(git_dir, "commondir"))
    return os.path.normpath(os.path.join(git_dir, common.strip())) if common else git_dir


def _branch(git_dir: str) -> str | None:
    head = ((_read(os.path.join(git_dir, "HEAD")) or "").strip().splitlines() or [""])[0].strip()
    if head.startswith("ref: refs/heads/"):
        return head[len("ref: refs/heads/") :]
    return f"detached@{head[:7]}" if head else None


def resolve_head(toplevel: str) -> str | None:
    """The full sha ``HEAD`` names in the checkout at ``toplevel``, from loose refs or ``packed-refs``; None if none."""
    git_dir = _git_dir(os.path.join(toplevel, ".git"))
    if git_dir is None:
        return None
    head = ((_read(os.path.join(git_dir, "HEAD")) or "").strip().splitlines() or [""])[0].strip()
    if re.fullmatch(SHA, head):
        return head
    ref = head[len("ref: ") :] if head.startswith("ref: refs/") else ""
    if not re.fullmatch(r"refs/[^\x00-\x20\x7f~^:?*\[\\]+", ref) or any(p in ("", ".", "..") for p in ref.split("/")):
        return None  # not a ref name git would take (check-ref-format): nothing to read outside .git
    common = _common_dir(git_dir)
    for folder in (git_dir, common):
        loose = (_read(os.path.join(folder, *ref.split("/"))) or "").strip()
        if re.fullmatch(SHA, loose):
            return loose
    return packed_ref(_read(os.path.join(common, "packed-refs")) or "", ref)


def head_of(toplevel: str) -> tuple[str, str]:
    """``(branch, sha)`` the checkout at ``toplevel`` is at, from its ``.git`` files: ``("main", "3f2a…")``.

    The branch is "" on a detached HEAD, the sha "" on a branch with no commit yet; both ""
    when ``.git`` cannot be read. No git runs: this is asked at every prompt.
    """
    git_dir = _git_dir(os.path.join(toplevel, ".git"))
    if git_dir is None:
        return "", ""
    branch = _branch(git_dir) or ""
    return ("" if branch.startswith("detached@") else branch), resolve_head(toplevel) or ""


def packed_ref(text: str, ref: str) -> str | None:
    """The sha ``packed-refs`` gives ``ref``, or None."""
    for line in text.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and re.fullmatch(SHA, sha):
            return sha
    return None


def parse_config(text: str) -> dict[str, str]:
    """Flatten a git config into ``{'section "sub".key': value}``; the last value wins."""
    values: dict[str, str] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = _section_name(line)
            continue
        key, _, value = line.partition("=")
        values[f"{section}.{key.strip().lower()}"] = _config_value(value)
    return values


def _section_name(line: str) -> str:
    inner = line[1 : line.find("]")] if "]" in line else line[1:]
    name, _, sub = inner.strip().partition(" ")
    return f"{name.lower()} {sub.strip()}" if sub else name.lower()


def _config_value(value: str) -> str:
    value = value.strip()
    out, quoted = [], False
    for char in value:
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()


def _read(path: str) -> str | None:
    """A regular file's text, at most 1 MiB; a FIFO or a device (``.git`` can be anything) is None.

    So is a path with a NUL in it, which a ``gitdir:`` line may hold.
    """
    try:
        data = read_bounded(path, MAX_GIT_FILE, follow=True)
    except (OSError, ValueError):
        return None
    return None if data is None else data.decode("utf-8", errors="replace")
