"""Which project a working directory belongs to: named after its git remote ``origin``.

``git@github.com:acme/widget.git`` -> ``acme/widget``; a folder without a remote is
``local/{folder}-{hash of its path}``. See docs/adr/0002-project-identity.md.
"""

from __future__ import annotations

import os
import re

from .gitinfo import find_git
from .redact import redact

_UNSAFE_RUN = r"[^A-Za-z0-9._+-]+"
_URL_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*://"
MAX_SEGMENT = 80


class Project:
    """A project's board name (``acme``/``widget``), its current branch, and why it got that name."""

    __slots__ = ("org", "name", "git_branch", "reason")

    def __init__(self, org: str, name: str, git_branch: str | None, reason: str) -> None:
        self.org = org
        self.name = name
        self.git_branch = git_branch
        self.reason = reason

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
    import zlib  # a C extension to load: only a long name or a folder without a remote needs it

    return zlib.crc32(data)


def parse_remote(url: str) -> tuple[str, str] | None:
    """``(org, project)`` from a git remote URL, or None when it names no repository.

    ``git@github.com:acme/widget.git`` -> ``("acme", "widget")``;
    nested groups ``https://gitlab.com/a/b/widget`` -> ``("a+b", "widget")``.
    """
    url = url.strip()
    url_path, scp_path = _url_path(url), _scp_path(url)
    if url_path is not None:
        path, local = url_path, url.lower().startswith("file:")
    elif scp_path is not None:
        path, local = scp_path, False
    else:
        host, _, rest = url.partition("/")
        local = url.startswith(("/", ".", "~")) or "." not in host
        path = url if local else rest
    path = path.split("?")[0].split("#")[0]  # a query or a fragment (`#token`) names no repository
    parts = [redact(p) for p in path.split("/") if p not in ("", ".", "..", "_git")]
    if not parts:
        return None
    name = parts[-1][: -len(".git")] if parts[-1].endswith(".git") else parts[-1]
    if not name:
        return None
    # A local path's folders are not owners; only the parent folder names one.
    owners = parts[-2:-1] if local else parts[:-1]
    org = safe_segment("+".join(safe_segment(p) for p in owners)) if owners else "local"
    return org, safe_segment(name)


def _url_path(url: str) -> str | None:
    """The path of ``scheme://[user@]host[/path]`` (empty without one), or None for another form."""
    match = re.match(_URL_SCHEME, url)
    if not match:
        return None
    rest = url[match.end() :]
    slash = rest.find("/")
    return "" if slash < 0 else rest[slash:]


def _scp_path(url: str) -> str | None:
    """The path of scp-like ``[user@]host:path`` (``git@github.com:acme/widget.git``), or None.

    The user part, when there is one, runs to the first ``@``; the host to the next ``:``.
    """
    user, at, after = url.partition("@")
    for rest in ([after] if at and user and "/" not in user else []) + [url]:
        host, sep, path = rest.partition(":")
        if sep and host and "/" not in host and not path.startswith("//"):
            return path
    return None


def identify_project(cwd: str) -> Project:
    """The project of a working directory: git ``origin``, else ``local/{dir}-{hash}``."""
    git = find_git(cwd)
    if git and git.origin_url:
        parsed = parse_remote(git.origin_url)
        if parsed:
            # the reason is shown by `where`, which redacts it (a remote may carry a password)
            return Project(parsed[0], parsed[1], git.branch, f"git remote origin {git.origin_url}")
    base = git.toplevel if git else os.path.abspath(cwd)
    digest = _crc32(os.path.realpath(base).encode("utf-8", "surrogateescape"))
    name = f"{safe_segment(redact(os.path.basename(base)) or 'root')}-{digest:08x}"
    why = "git repository without an origin remote" if git else "not a git repository"
    return Project("local", name, git.branch if git else None, f"{why}: {base}")
