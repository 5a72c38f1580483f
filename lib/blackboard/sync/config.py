"""Opting in: ``_sync/config.json`` names the remote; the refs a project's boards travel under (ADR 19, ADR 30)."""

from __future__ import annotations

import json
import os

from ..errors import BlackboardError
from ..fsutil import atomic_write, make_dirs, read_json_object, refuse_links
from ..gitstore import Store
from ..paths import PathResolver
from ..project import safe_segment
from ..redact import redact_remote
from ..settings import Settings, expand_user

# A remote on this machine (a path, ``file://``) is served by a git started here, in that
# repository: it would run that repository's hooks and configured commands as this user.
# Its side runs with none: no hooks, no command to list an alternate's refs, no gc or
# maintenance after a push (they read its index, whose fsmonitor would run a command), and no
# update of its working tree (a checked-out ref would run its filters).
LOCAL_SIDE = (
    "git -c core.hooksPath=/dev/null -c core.alternateRefsCommand=true -c core.fsmonitor=false"
    " -c receive.autogc=false -c gc.auto=0 -c maintenance.auto=false"
    " -c receive.denyCurrentBranch=refuse -c receive.denyDeleteCurrent=refuse"
)


def enabled(resolver: PathResolver) -> bool:
    """Whether this project syncs (``blackboard sync enable`` was run)."""
    return os.path.isfile(resolver.sync_file("config.json"))


def remote_url(resolver: PathResolver, remote: str | None, home: str) -> str:
    """The remote sync would use: ``remote`` or the project's ``origin``, a relative path made absolute.

    ``~`` is ``home`` (``Settings.home``), as the shell that ran the command had it.
    """
    url = remote or resolver.project.remote
    if not url:
        raise BlackboardError("this project has no origin remote; name one: blackboard sync enable --remote URL")
    if not usable_remote(url):
        raise BlackboardError(f"not a git remote: {redact_remote(url)!r}")
    if url.startswith((".", "~")) or ("://" not in url and ":" not in url.split("/")[0] and not url.startswith("/")):
        # a path relative to the checkout, as git reads it there; every process must find the same one
        url = os.path.normpath(os.path.join(resolver.project.toplevel or os.getcwd(), expand_user(url, home)))
    return url


def readers_warning(url: str) -> str:
    """What turning sync on means, said before it is turned on and in every status."""
    return f"anyone who can read {redact_remote(url)} can read this project's synced boards (secrets redacted)"


def enable(resolver: PathResolver, remote: str | None, settings: Settings) -> str:
    """Turn sync on, to ``remote`` or the project's ``origin``; returns the remote."""
    url = remote_url(resolver, remote, settings.home)
    refuse_links(resolver.root, resolver.sync_dir)
    make_dirs(resolver.sync_dir)
    Store(resolver.sync_repo, settings.environ).ensure()
    atomic_write(resolver.sync_file("config.json"), json.dumps({"remote": url, "ref": remote_ref(resolver)}) + "\n")
    return url


def disable(resolver: PathResolver) -> bool:
    """Turn sync off; what was fetched stays. Returns whether it was on."""
    try:
        os.unlink(resolver.sync_file("config.json"))
    except FileNotFoundError:
        return False
    return True


def usable_remote(url: str) -> bool:
    """Nothing git could take for an option (``--upload-pack=…``), and one line."""
    return bool(url) and not url.startswith("-") and not any(c in url for c in "\0\n\r")


def served_by(program: str, url: str) -> list[str]:
    """The option that runs a local remote's ``program`` (upload-pack, receive-pack) as ``LOCAL_SIDE``."""
    if not url.startswith(("/", "file://")):
        return []  # the remote's own server runs its side, with its own rules
    return [f"--{program}={LOCAL_SIDE} {program}"]


def remote_ref(resolver: PathResolver) -> str:
    """``refs/blackboard-machines/{org}/{project}``: beneath it, one ref per machine (ADR 30)."""
    org, name = _ref_parts(resolver)
    return f"refs/blackboard-machines/{org}/{name}"


def legacy_ref(resolver: PathResolver) -> str:
    """``refs/blackboard/{org}/{project}``: the ref every machine rewrote before ADR 30; read once, never written."""
    org, name = _ref_parts(resolver)
    return f"refs/blackboard/{org}/{name}"


def _ref_parts(resolver: PathResolver) -> list[str]:
    parts = [resolver.project.org, resolver.project.name]
    if any(p != safe_segment(p) or ".." in p or p.endswith(".lock") for p in parts):
        raise BlackboardError(f"{'/'.join(parts)} cannot be a git ref name; this project cannot sync")
    return parts


def read_config(resolver: PathResolver) -> dict[str, str]:
    """The remote, and the refs: ``prefix`` (one ref per machine beneath it) and ``legacy`` (the old shared one)."""
    data = read_json_object(resolver.sync_file("config.json"), 64 * 1024)
    remote = data.get("remote")
    if not isinstance(remote, str) or not usable_remote(remote):
        raise BlackboardError(f"{resolver.sync_file('config.json')} names no remote; run `blackboard sync enable`")
    return {"remote": remote, "prefix": remote_ref(resolver), "legacy": legacy_ref(resolver)}
