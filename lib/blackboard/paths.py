"""Where everything lives: the root, a project's board, its sessions, handoffs and legacy files.

Example: ``~/.claude/blackboard/acme/widget/.blackboard/sessions/abc123/_meta.json``.
"""

from __future__ import annotations

import os
import zlib

from .errors import BlackboardError
from .gitinfo import find_git
from .ids import ASCII_ALNUM, ASCII_LETTERS, is_session_id, validate_session_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import List, Mapping, NamedTuple, Optional
else:
    from .records import NamedTuple

# Plain string checks instead of regular expressions: every SessionStart runs them, and
# importing ``re`` would cost it half a bare interpreter start.
_SEGMENT_CHARS = frozenset(ASCII_ALNUM + "._+-")
_SCHEME_CHARS = frozenset(ASCII_ALNUM + "+.-")
MAX_SEGMENT = 80


def default_root(environ: Mapping[str, str] = os.environ) -> str:
    """``$BLACKBOARD_ROOT``, else ``$MNEMONIC_ROOT``, else ``~/.claude/blackboard``."""
    for name in ("BLACKBOARD_ROOT", "MNEMONIC_ROOT"):
        if environ.get(name):
            root = os.path.expanduser(environ[name])
            if not os.path.isabs(root):
                raise BlackboardError(f"{name}={environ[name]!r} is a relative path; set it to an absolute one")
            return os.path.normpath(root)
    return os.path.join(os.path.expanduser("~"), ".claude", "blackboard")


def safe_segment(text: str) -> str:
    """A string made safe as one path component: ``a b/../c`` -> ``a_b_.._c``.

    Each run of characters other than ``A-Za-z0-9._+-`` becomes one ``_``.
    """
    kept: List[str] = []
    in_run = False
    for char in text:
        if char in _SEGMENT_CHARS:
            kept.append(char)
        elif not in_run:
            kept.append("_")
        in_run = char not in _SEGMENT_CHARS
    segment = "".join(kept).strip(".") or "_"
    if len(segment) > MAX_SEGMENT:
        segment = f"{segment[: MAX_SEGMENT - 9]}-{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"
    return segment


class Project(NamedTuple):
    """Which board a working directory belongs to."""

    org: str
    name: str
    git_branch: Optional[str]
    reason: str


def parse_remote(url: str) -> Optional[tuple[str, str]]:
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
    parts = [p for p in path.split("?")[0].split("/") if p not in ("", ".", "..", "_git")]
    if not parts:
        return None
    name = parts[-1][: -len(".git")] if parts[-1].endswith(".git") else parts[-1]
    if not name:
        return None
    # A local path's folders are not owners; only the parent folder names one.
    owners = parts[-2:-1] if local else parts[:-1]
    org = safe_segment("+".join(safe_segment(p) for p in owners)) if owners else "local"
    return org, safe_segment(name)


def _url_path(url: str) -> Optional[str]:
    """The path of ``scheme://[user@]host[/path]`` (empty without one), or None for another form."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme or scheme[0] not in ASCII_LETTERS or not set(scheme) <= _SCHEME_CHARS:
        return None
    slash = rest.find("/")
    return "" if slash < 0 else rest[slash:]


def _scp_path(url: str) -> Optional[str]:
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
            return Project(parsed[0], parsed[1], git.branch, f"git remote origin {git.origin_url}")
    base = git.toplevel if git else os.path.abspath(cwd)
    digest = zlib.crc32(os.path.realpath(base).encode("utf-8", "surrogateescape"))
    name = f"{safe_segment(os.path.basename(base) or 'root')}-{digest:08x}"
    why = "git repository without an origin remote" if git else "not a git repository"
    return Project("local", name, git.branch if git else None, f"{why}: {base}")


class SessionEntry(NamedTuple):
    session_id: str
    directory: str
    meta: Optional[dict]
    error: Optional[str]


class PathResolver:
    """Paths of one project's board under one root; every path stays inside the root."""

    def __init__(self, root: str, project: Project) -> None:
        self.root = os.path.abspath(root)
        self.project = project
        self.project_dir = os.path.join(self.root, project.org, project.name, ".blackboard")

    @classmethod
    def for_cwd(cls, cwd: str, environ: Mapping[str, str] = os.environ) -> PathResolver:
        """The resolver for the project of ``cwd`` under the configured root."""
        return cls(default_root(environ), identify_project(cwd))

    @property
    def sessions_dir(self) -> str:
        return os.path.join(self.project_dir, "sessions")

    @property
    def active_dir(self) -> str:
        """Marker files naming this project's active sessions, so nothing scans all sessions."""
        return os.path.join(self.project_dir, "_active")

    @property
    def global_legacy_source(self) -> str:
        """The flat board shared by all projects in older versions: ``$ROOT/.blackboard``."""
        return os.path.join(self.root, ".blackboard")

    def get_session_blackboard_dir(self, session_id: str) -> str:
        """``.../.blackboard/sessions/{session_id}``, refusing unsafe ids."""
        return os.path.join(self.sessions_dir, validate_session_id(session_id))

    def meta_path(self, session_id: str) -> str:
        return os.path.join(self.get_session_blackboard_dir(session_id), "_meta.json")

    def get_handoff_dir(self) -> str:
        return os.path.join(self.project_dir, "handoff")

    def get_legacy_dir(self) -> str:
        return os.path.join(self.project_dir, "_legacy")

    def handoff_path(self, session_id: str) -> str:
        return os.path.join(self.get_handoff_dir(), f"handoff-{validate_session_id(session_id)}.md")

    def latest_handoff_path(self) -> str:
        return os.path.join(self.get_handoff_dir(), "latest-handoff.md")

    def active_session_ids(self) -> List[str]:
        """Ids with an active marker, cheap even when the project holds thousands of sessions."""
        try:
            names = os.listdir(self.active_dir)
        except OSError:
            return []
        return sorted(n for n in names if is_session_id(n))

    def list_session_blackboards(self, status: Optional[str] = None) -> List[SessionEntry]:
        """Every session of the project, newest start first; a corrupt ``_meta.json`` is reported, not fatal."""
        entries = []
        try:
            names = os.listdir(self.sessions_dir)
        except FileNotFoundError:
            names = []
        for entry in map(self.session_entry, names):
            if status is None or (entry.meta is not None and entry.meta.get("status") == status):
                entries.append(entry)
        entries.sort(key=lambda e: (str((e.meta or {}).get("started") or ""), e.session_id), reverse=True)
        return entries

    def session_entry(self, name: str) -> SessionEntry:
        """The session in ``sessions/{name}``, with an error instead of metadata when that is missing or corrupt."""
        from .meta import read_meta

        directory = os.path.join(self.sessions_dir, name)
        try:
            meta = read_meta(os.path.join(directory, "_meta.json"))
            error = None if meta else f"{directory} has no _meta.json; run `blackboard doctor`"
        except BlackboardError as exc:
            meta, error = None, str(exc)
        return SessionEntry(name, directory, meta, error)

    def owner_of(self, session_id: str) -> Optional[PathResolver]:
        """The resolver whose project holds ``session_id``: this one, else any under the root, else None."""
        if os.path.exists(self.meta_path(session_id)):
            return self
        for other in all_projects(self.root):
            if os.path.exists(other.meta_path(session_id)):
                return other
        return None

    def ensure_inside_root(self, path: str) -> str:
        """``path`` if it resolves inside the root, else BlackboardError."""
        real_root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        if real != real_root and not real.startswith(real_root + os.sep):
            raise BlackboardError(f"refusing to touch {path}: it resolves outside {self.root}")
        return path


def all_projects(root: str) -> List[PathResolver]:
    """A resolver for every project that has a board under ``root``."""
    resolvers = []
    for org in _subdirs(root):
        for name in _subdirs(os.path.join(root, org)):
            if os.path.isdir(os.path.join(root, org, name, ".blackboard")):
                resolvers.append(PathResolver(root, Project(org, name, None, "found under the root")))
    return resolvers


def _subdirs(path: str) -> List[str]:
    try:
        return sorted(e.name for e in os.scandir(path) if e.is_dir(follow_symlinks=False) and e.name[0] != ".")
    except OSError:
        return []
