"""Talking to the remote: a fetch into the private repository, watched and bounded, and a push (ADR 19)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..fsutil import create_exclusive, refuse_links
from ..gitstore import GitFailed, Store, TooLarge
from ..paths import PathResolver
from .config import read_config, served_by
from .state import State, note_status

TYPE_CHECKING = False  # as in ``meta``: typing only for mypy, never imported by a hook
if TYPE_CHECKING:
    from typing import NoReturn

# In the private repository: the remote's newest commit as fetched, then this machine's commit
# on top of it until pushed; and the commit the last import came from (``state.imported``),
# kept until the next import has compared its trees (gc deletes what no ref reaches).
FETCHED, IMPORTED = "refs/fetched", "refs/imported"
MAX_FETCH_BYTES = 64 * 1024 * 1024  # one fetch; board files are text, and over 8 MiB are never sent


class Fetch:
    """The remote's commit for this project: asked for with ``git ls-remote`` (a probe) or fetched at once.

    Git starts at once and works while the caller does its own work. ``git ls-remote``
    costs a fraction of a ``git fetch``, which negotiates and checks connectivity even when
    nothing changed: most SessionStarts find the commit they know, and fetch nothing.
    """

    def __init__(
        self, resolver: PathResolver, environ: Mapping[str, str], probe: bool = True, locked: bool = False
    ) -> None:
        """``locked``: the caller holds the round's lock, so what a git stopped half-way left is cleared first."""
        refuse_links(resolver.root, resolver.sync_dir)
        self.resolver, self.environ = resolver, environ
        self.config = read_config(resolver)
        self.store = Store(resolver.sync_repo, environ)
        self.store.ensure()
        if locked:
            self.store.clear_stale_locks()
        self.probe = probe
        probing = [
            "ls-remote",
            *served_by("upload-pack", self.config["remote"]),
            self.config["remote"],
            self.config["ref"],
        ]
        self.packs = None if probe else set(self.store.pack_sizes())  # what was here before a fetch
        self.proc = self.store.spawn(probing if probe else self._args())
        self.deadline: float | None = None  # the caller's (``listed``)
        self.record_up_to_date = True  # SessionStart leaves that to the round it starts: one write less
        self.seen: str | None = None  # what ``listed`` found

    def listed(self, deadline: float) -> str | None:
        """The remote's commit as ``ls-remote`` saw it (a probe) or the fetch brought it; None when it has none."""
        self.deadline = deadline
        if self.seen is None:
            try:
                self.seen = self._listed(deadline)
            except GitFailed as exc:
                self._failed(exc)
            if not self.seen:
                note_status(self.resolver, "fetch", True, "the remote has no boards of this project yet")
        return self.seen or None

    def finish(self, deadline: float, known: str | None) -> str | None:
        """The remote's commit, fetched unless it is ``known``; None when the remote has none yet."""
        listed = self.listed(deadline)
        if listed is None:
            return None
        if self.probe and listed != known:  # probed, and new: fetch it now
            try:
                self.packs = set(self.store.pack_sizes())
                self.store.finish(self.store.spawn(self._args()), None, deadline, self._too_much)
                listed = self._fetched()
            except GitFailed as exc:
                self._failed(exc)
        if listed != known:
            self._bounded(known)
        if listed != known or self.record_up_to_date:
            note_status(self.resolver, "fetch", True, "up to date" if listed == known else "fetched")
        return listed

    def _bounded(self, known: str | None) -> None:
        """Refuse what a fetch brought over ``MAX_FETCH_BYTES``, when it was too quick for ``_too_much`` to see."""
        brought = sum(size for name, size in self.store.pack_sizes().items() if name not in (self.packs or ()))
        if brought > MAX_FETCH_BYTES:
            self._failed(TooLarge(self._over_the_cap()))

    def _over_the_cap(self) -> str:
        return f"the remote sent over {MAX_FETCH_BYTES // (1024 * 1024)} MiB of boards; refused, nothing kept"

    def _failed(self, exc: GitFailed) -> NoReturn:
        """Say why the fetch failed, and forget what it brought: a fetch refused after its pack was written
        (a ref naming no commit, objects that do not connect, over the cap) would otherwise leave
        that pack here every round, and gc runs only in an import. A round forgets it at once,
        within its time; SessionStart, which a person waits on, and a round out of time leave it
        for the next round (``forget_fetched``)."""
        self.store.remove_partial_packs()
        if self.packs is not None and set(self.store.pack_sizes()) - self.packs:
            forget_fetched(self.resolver, self.environ, None if self.probe else self.deadline)
        note_status(self.resolver, "fetch", False, str(exc))
        raise exc

    def _args(self) -> list[str]:
        remote = self.config["remote"]
        return [
            *("-c", "fetch.unpackLimit=1"),  # always one pack, written where _too_much can see it grow
            "fetch",
            "--no-write-fetch-head",  # it would name the remote in a file git makes under the umask
            "--no-tags",
            "--depth=1",  # the newest commit alone: older ones, and what they held, need not stay here
            "--quiet",
            *served_by("upload-pack", remote),
            remote,
            f"+{self.config['ref']}:{FETCHED}",
        ]

    def _listed(self, deadline: float) -> str:
        """The remote's commit as ``ls-remote`` saw it; without a probe, as the fetch brought it."""
        try:
            out = self.store.finish(self.proc, None, deadline, None if self.probe else self._too_much)
        except GitFailed as exc:
            if not self.probe and "couldn't find remote ref" in str(exc):
                return ""
            raise
        return out.split(b"\t", 1)[0].decode("ascii", "replace") if self.probe else self._fetched()

    def _too_much(self) -> str | None:
        """Why the fetch under way must stop: it has brought more than ``MAX_FETCH_BYTES``."""
        return self._over_the_cap() if self.store.partial_pack_bytes() > MAX_FETCH_BYTES else None

    def _fetched(self) -> str:
        """The commit the fetch brought. A remote's ref may name anything: only a commit is taken.

        A tree or a blob is refused, and so is a tag: a remote that points its ref at a new tag
        on the same commit every round would grow a chain of tags here that no import sees.
        """
        found = self.store.run(["for-each-ref", "--format=%(objecttype) %(objectname)", FETCHED]).split()
        if found[:1] != [b"commit"]:
            raise GitFailed(f"the remote's {self.config['ref']} names no commit; refused")
        return found[1].decode("ascii")

    def stop(self) -> None:
        self.store.stop(self.proc)


def forget_fetched(resolver: PathResolver, environ: Mapping[str, str], deadline: float | None) -> None:
    """Forget what a fetch brought and nothing took: by ``deadline``, else (None) in the next round's ``settle``.

    ``_sync/unsettled`` is written first, so a repack cut short is done again.
    """
    create_exclusive(resolver.sync_file("unsettled"), "")
    if deadline is not None:
        settle(resolver, environ, deadline)


def settle(resolver: PathResolver, environ: Mapping[str, str], deadline: float) -> None:
    """Forget what a failed fetch brought and nothing took: a round's first step, under its lock.

    A repack that cannot finish by ``deadline`` is tried again by the next round; this one
    goes on, and ``sync status`` says why.
    """
    if not os.path.lexists(resolver.sync_file("unsettled")):
        return
    store = Store(resolver.sync_repo, environ)
    store.clear_stale_locks()  # a fetch stopped at its deadline leaves shallow.lock, which repack refuses
    try:
        store.forget(FETCHED, State.load(resolver).imported, deadline)
    except GitFailed as exc:
        note_status(resolver, "settle", False, f"what a failed fetch brought is still here: {exc}")
        return
    os.unlink(resolver.sync_file("unsettled"))
    note_status(resolver, "settle", True, "what a failed fetch brought is gone")
