"""Which project a working directory belongs to: named after its git remote ``origin``.

``git@github.com:acme/widget.git`` -> ``acme/widget``; a repository without a remote is
``local/{repository}-{hash of its path}``, whichever checkout, worktree or link it is reached
through; a folder outside git is ``local/{folder}-{hash of its real path}``. See
docs/adr/0002-project-identity.md and docs/adr/0031-one-project-every-way-in.md.
"""

from __future__ import annotations

import os
import re
import zlib

from .gitinfo import common_git_dir, find_git
from .redact import redact

_UNSAFE_RUN = r"[^A-Za-z0-9._+-]+"
_URL_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*://"
MAX_SEGMENT = 80


class Project:
    """A project's board name (``acme``/``widget``), its branch, and where the name came from.

    ``remote`` is the ``origin`` URL as written in ``.git/config`` (None without one) and
    ``toplevel`` the checkout's top folder (None outside git): migration reads both to find
    boards kept under an earlier name.
    """

    __slots__ = ("org", "name", "git_branch", "reason", "remote", "toplevel")

    def __init__(
        self,
        org: str,
        name: str,
        git_branch: str | None,
        reason: str,
        remote: str | None = None,
        toplevel: str | None = None,
    ) -> None:
        self.org = org
        self.name = name
        self.git_branch = git_branch
        self.reason = reason
        self.remote = remote
        self.toplevel = toplevel

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Project) and (self.org, self.name) == (other.org, other.name)

    def __hash__(self) -> int:
        return hash((self.org, self.name))


def safe_segment(text: str) -> str:
    """``text`` made safe as one path component: ``a b/../c`` -> ``a_b_.._c``.

    Each run of characters other than ``A-Za-z0-9._+-`` becomes one ``_``; a long name is
    cut and ends in a hash of the whole.
    """
    segment = re.sub(_UNSAFE_RUN, "_", text).strip(".") or "_"
    if len(segment) > MAX_SEGMENT:
        segment = f"{segment[: MAX_SEGMENT - 9]}-{_crc32(text.encode('utf-8', 'surrogatepass')):08x}"
    return segment


def _crc32(data: bytes) -> int:
    return zlib.crc32(data)


def parse_remote(url: str) -> tuple[str, str] | None:
    """``(org, project)`` from a git remote URL, or None when it names no repository.

    The host is part of the name, except for GitHub, whose boards keep the name they had
    before hosts counted (docs/adr/0018-hosts-in-project-identity.md):

    - ``git@github.com:acme/widget.git`` -> ``("acme", "widget")``;
    - ``https://gitlab.com/a/b/widget`` -> ``("gitlab.com+a+b", "widget")``;
    - a path on this machine, ``/srv/git/widget.git`` -> ``("local", "widget-{hash of the path}")``.
    """
    parsed = _parse(url)
    if parsed is None:
        return None
    host, owners, name, path = parsed
    if host is None:
        return "local", f"{safe_segment(name)}-{_crc32(path.encode('utf-8', 'surrogatepass')):08x}"
    if host not in GITHUB_HOSTS:
        owners = [host, *owners]
    return _joined(owners), safe_segment(name)


def former_name(url: str) -> tuple[str, str] | None:
    """The ``(org, project)`` a remote was given before hosts counted, when it differs from today's.

    Then the host was dropped and a path's parent folder was its org: ``/srv/git/widget.git``
    was ``git/widget``, and ``gitlab.com/acme/widget`` was ``acme/widget``.
    """
    parsed = _parse(url)
    if parsed is None:
        return None
    host, owners, name, path = parsed
    if host is None:
        parts = _parts(path)
        owners = parts[-2:-1]
    former = (_joined(owners) if owners else "local", safe_segment(name))
    return former if former != parse_remote(url) else None


GITHUB_HOSTS = frozenset({"github.com", "www.github.com", "ssh.github.com"})


def _joined(owners: list[str]) -> str:
    """Owners as one segment: nested groups ``a``, ``b`` -> ``a+b`` (``+`` is allowed in no group name)."""
    return safe_segment("+".join(safe_segment(p) for p in owners)) if owners else "local"


def _parse(url: str) -> tuple[str | None, list[str], str, str] | None:
    """``(host, owners, name, path)`` of a remote; the host is None for a path on this machine."""
    url = url.strip()
    scheme = re.match(_URL_SCHEME, url)
    if scheme:
        rest = url[scheme.end() :]
        authority, slash, tail = rest.partition("/")
        local = url.lower().startswith("file:")
        host, path = (None, "/" + tail) if local else (authority, slash + tail)
    else:
        scp = _scp(url)
        if scp is not None:
            host, path = scp
        else:
            first, _, rest = url.partition("/")
            local = url.startswith(("/", ".", "~")) or "." not in first
            host, path = (None, url) if local else (first, rest)
    path = path.split("?")[0].split("#")[0]  # a query or a fragment (`#token`) names no repository
    parts = _parts(path)
    if not parts:
        return None
    name = parts[-1][: -len(".git")] if parts[-1].endswith(".git") else parts[-1]
    if not name:
        return None
    if host is None:
        return None, [], name, path
    host = _host(host)
    return (host or "_"), parts[:-1], name, path


def _parts(path: str) -> list[str]:
    return [redact(p) for p in path.split("/") if p not in ("", ".", "..", "_git")]


def _host(authority: str) -> str:
    """``user:pass@Host.example:2222`` -> ``host.example``: no user, no port, lower case."""
    host = authority.rpartition("@")[2]
    host = host[1 : host.find("]")] if host.startswith("[") and "]" in host else host.partition(":")[0]
    return safe_segment(redact(host.lower())) if host else ""


def _scp(url: str) -> tuple[str, str] | None:
    """``(host, path)`` of scp-like ``[user@]host:path`` (``git@github.com:acme/widget.git``), or None.

    The user part, when there is one, runs to the first ``@``; the host to the next ``:``.
    """
    user, at, after = url.partition("@")
    for rest in ([after] if at and user and "/" not in user else []) + [url]:
        host, sep, path = rest.partition(":")
        if sep and host and "/" not in host and not path.startswith("//"):
            return host, path
    return None


def identify_project(cwd: str) -> Project:
    """The project of a working directory: git ``origin``, else the repository, else the folder.

    Without an origin remote, every checkout, worktree and link of one repository is one
    project, named after the repository's common git dir (``local/widget-{hash}``); outside
    git, the folder's real path is the project (docs/adr/0031-one-project-every-way-in.md).
    """
    git = find_git(cwd)
    if git and git.origin_url:
        parsed = parse_remote(git.origin_url)
        if parsed:
            # the reason is shown by `where`, which redacts it (a remote may carry a password)
            why = f"git remote origin {git.origin_url}"
            return Project(parsed[0], parsed[1], git.branch, why, git.origin_url, git.toplevel)
    if git is None:
        folder = os.path.realpath(cwd)
        return Project("local", local_name(folder), None, f"not a git repository: the folder {folder} (links resolved)")
    common = common_git_dir(git.toplevel)
    if common is None:  # a `.git` that leads nowhere sensible: the checkout's own folder, as outside git
        folder = os.path.realpath(git.toplevel)
        why = f"git repository without an origin remote, whose .git leads to no repository: the folder {folder}"
        why += " (links resolved)"
        return Project("local", local_name(folder), git.branch, why, None, git.toplevel)
    home, name = repository_home(common)
    why = (
        f"git repository without an origin remote: the repository {common}, "
        "shared by every checkout, worktree and link of it"
    )
    return Project("local", local_name(home, name), git.branch, why, None, git.toplevel)


def repository_home(common: str) -> tuple[str, str]:
    """``(folder, name)`` a repository is known by: ``/src/widget``, ``widget`` for ``/src/widget/.git``;
    else its common git dir itself (a bare ``widget.git``, a submodule's ``.git/modules/hal``).

    A main checkout so keeps the board it had when each checkout was a project of its own.
    """
    if os.path.basename(common) == ".git":
        return os.path.dirname(common), os.path.basename(os.path.dirname(common))
    name = os.path.basename(common)
    return common, (name[: -len(".git")] if name.endswith(".git") and name != ".git" else name)


def local_name(folder: str, name: str | None = None) -> str:
    """``{name}-{crc32 of folder}`` for a project named after ``folder`` (a real path): ``widget-1a2b3c4d``."""
    label = safe_segment(redact(os.path.basename(folder) if name is None else name) or "root")
    return f"{label}-{_crc32(folder.encode('utf-8', 'surrogateescape')):08x}"


def former_local_name(folder: str) -> str:
    """The id ``folder`` had before links were resolved and worktrees shared a board: ``local/{this}``.

    It was named after the folder as reached (a link's own name) and keyed by its real path;
    migration looks for a board under it (docs/adr/0031-one-project-every-way-in.md).
    """
    return local_name(os.path.realpath(folder), os.path.basename(folder))
