"""Where mnemonic, the plugin this one replaces, kept a project's flat blackboard files.

Found without configuration, the way mnemonic finds them itself, and only ever read: its
store is ``memory_store_path`` in ``~/.config/mnemonic/config.json``, else
``~/.claude/mnemonic``. See docs/adr/0017-importing-a-mnemonic-store.md.
"""

from __future__ import annotations

import os

from .fsutil import read_json_object

CONFIG = os.path.join(".config", "mnemonic", "config.json")
DEFAULT_STORE = os.path.join(".claude", "mnemonic")
MAX_CONFIG_BYTES = 64 * 1024


class Source:
    """A folder of mnemonic's that may hold flat files, and whether they belong to one project."""

    __slots__ = ("folder", "per_project")

    def __init__(self, folder: str, per_project: bool) -> None:
        self.folder = folder
        self.per_project = per_project


def store_root(home: str) -> str:
    """mnemonic's store: ``memory_store_path`` from its config when that is usable, else its default."""
    default = os.path.join(home, DEFAULT_STORE)
    config = read_json_object(os.path.join(home, CONFIG), MAX_CONFIG_BYTES, follow=True)  # dotfiles are often links
    value = config.get("memory_store_path")
    if not isinstance(value, str) or not value or "\0" in value:
        return default
    path = home + value[1:] if value == "~" or value.startswith("~/") else value
    return os.path.normpath(path) if os.path.isabs(path) else default


def upstream_name(remote: str | None, folder: str) -> tuple[str, str]:
    """``(org, project)`` exactly as mnemonic names a project, quirks included.

    mnemonic strips ``.git`` with ``rstrip(".git")``, which removes any trailing ``.``,
    ``g``, ``i`` and ``t``: ``acme/widget.git`` is its ``acme/widge``. Without a remote the
    org is ``default`` and the project is the folder's name.
    """
    if not remote:
        return "default", os.path.basename(folder)
    if ":" in remote and "@" in remote:
        org = remote.split(":")[-1].split("/")[0].replace(".git", "")
    else:
        parts = remote.rstrip(".git").split("/")
        org = parts[-2] if len(parts) >= 2 else "default"
    return org, remote.rstrip(".git").split("/")[-1]


def sources(home: str, remote: str | None, toplevel: str | None, cwd: str) -> list[Source]:
    """mnemonic's folders that may hold this project's flat files, then its global one.

    Per project: ``{store}/{org}/{project}/.blackboard`` (and the ``_legacy/`` mnemonic
    moves flat files into itself), and ``.claude/mnemonic/.blackboard`` in the checkout.
    A name that could leave the store (``..``, empty) is not looked up.
    """
    store = store_root(home)
    found = []
    org, name = upstream_name(remote, toplevel or cwd)
    if _safe(org) and _safe(name):
        board = os.path.join(store, org, name, ".blackboard")
        found += [Source(board, True), Source(os.path.join(board, "_legacy"), True)]
    for base in dict.fromkeys(p for p in (toplevel, cwd) if p):
        found.append(Source(os.path.join(base, ".claude", "mnemonic", ".blackboard"), True))
    found.append(Source(os.path.join(store, ".blackboard"), False))
    return found


def _safe(segment: str) -> bool:
    return segment not in ("", ".", "..") and "/" not in segment and "\0" not in segment
