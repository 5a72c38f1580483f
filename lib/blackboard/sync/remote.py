"""Talking to the remote: listing the project's refs, fetching other machines', pushing this machine's (ADR 30)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..fsutil import create_exclusive, refuse_links
from ..gitstore import GitFailed, Store, TooLarge
from ..machines import LEGACY_SOURCE, MACHINE_ID
from ..paths import PathResolver
from .config import read_config, served_by
from .state import State, note_status

TYPE_CHECKING = False  # as in ``meta``: typing only for mypy, never imported by a hook
if TYPE_CHECKING:
    from typing import NoReturn

# In the private repository: each other machine's newest commit as fetched (``refs/machines/{id}``),
# the commit of it last imported (``refs/imported/{id}``, kept so the next import reads only what
# changed; gc deletes what no ref reaches), and this machine's own as last pushed (``MINE``).
FETCHED, IMPORTED, MINE = "refs/machines/", "refs/imported/", "refs/mine"
MAX_FETCH_BYTES = 64 * 1024 * 1024  # one fetch; board files are text, and over 8 MiB are never sent
MAX_LISTED = 4_096  # refs of one project a listing reads; the rest are passed over, and status says so


class Listing:
    """The project's refs on the remote: each other machine's commit, this machine's own, the old shared one."""

    __slots__ = ("others", "mine", "legacy", "passed_over")

    def __init__(self) -> None:
        self.others: dict[str, str] = {}  # machine id -> commit
        self.mine: str | None = None
        self.legacy: str | None = None
        self.passed_over = 0  # refs beneath the prefix that name no machine, or past MAX_LISTED


class Fetch:
    """The remote's refs of this project, asked for with ``git ls-remote`` at once; then the changed ones fetched.

    Git starts at once and works while the caller does its own work. ``git ls-remote`` costs a
    fraction of a ``git fetch``: most SessionStarts find every commit they know, and fetch nothing.
    """

    def __init__(self, resolver: PathResolver, environ: Mapping[str, str], me: str, locked: bool = False) -> None:
        """``me``: this machine's id. ``locked``: the caller holds the round's lock, so what a git stopped
        half-way left is cleared first."""
        refuse_links(resolver.root, resolver.sync_dir)
        self.resolver, self.environ, self.me = resolver, environ, me
        self.config = read_config(resolver)
        self.store = Store(resolver.sync_repo, environ)
        self.store.ensure()
        if locked:
            self.store.clear_stale_locks()
        remote = self.config["remote"]
        probing = ["ls-remote", *served_by("upload-pack", remote), remote, f"{self.config['prefix']}/*"]
        self.proc = self.store.spawn([*probing, self.config["legacy"]])
        self.seen: Listing | None = None
        self.problems: list[str] = []  # refs refused as fetched (they name no commit)

    def listed(self, deadline: float) -> Listing:
        """The refs as ``ls-remote`` saw them."""
        if self.seen is None:
            try:
                out = self.store.finish(self.proc, None, deadline)
            except GitFailed as exc:
                note_status(self.resolver, "fetch", False, str(exc))
                raise
            self.seen = self._parse(out)
        return self.seen

    def _parse(self, out: bytes) -> Listing:
        listing = Listing()
        beneath = self.config["prefix"] + "/"
        for line in out.splitlines():
            sha, _, name = line.decode("utf-8", "replace").partition("\t")
            if len(sha) not in (40, 64) or not all(c in "0123456789abcdef" for c in sha):
                continue
            if name == self.config["legacy"]:
                listing.legacy = sha
            elif name.startswith(beneath) and MACHINE_ID.fullmatch(name[len(beneath) :]):
                machine = name[len(beneath) :]
                if machine == self.me:
                    listing.mine = sha
                elif len(listing.others) < MAX_LISTED:
                    listing.others[machine] = sha
                else:
                    listing.passed_over += 1
            elif name.startswith(beneath):
                listing.passed_over += 1
        return listing

    def fetch(self, wanted: list[str], deadline: float) -> dict[str, str]:
        """Fetch the newest commit (alone) of each source in ``wanted`` (machine ids; ``shared`` for the old ref).

        Returns each source's commit as fetched; a ref that names no commit is left out. The whole
        fetch is bounded by ``MAX_FETCH_BYTES``; over it, nothing it brought is kept.
        """
        if not wanted:
            return {}
        remote = self.config["remote"]
        specs = [f"+{self._remote_ref(source)}:{FETCHED}{source}" for source in wanted]
        self.packs = set(self.store.pack_sizes())
        args = [
            *("-c", "fetch.unpackLimit=1"),  # always one pack, written where _too_much can see it grow
            "fetch",
            "--no-write-fetch-head",  # it would name the remote in a file git makes under the umask
            "--no-tags",
            "--depth=1",  # the newest commit alone: older ones, and what they held, need not stay here
            "--quiet",
            *served_by("upload-pack", remote),
            remote,
            *specs,
        ]
        try:
            self.store.finish(self.store.spawn(args), None, deadline, self._too_much)
            brought = sum(size for name, size in self.store.pack_sizes().items() if name not in self.packs)
            if brought > MAX_FETCH_BYTES:
                raise TooLarge(self._over_the_cap())
        except GitFailed as exc:
            self._failed(exc, deadline)
        return self._commits(wanted)

    def _remote_ref(self, source: str) -> str:
        return self.config["legacy"] if source == LEGACY_SOURCE else f"{self.config['prefix']}/{source}"

    def _commits(self, wanted: list[str]) -> dict[str, str]:
        """The commit each fetched ref names. A remote's ref may name anything: only a commit is taken (a tag
        that a remote renews on the same commit every round would grow a chain here that no import sees)."""
        found = self.store.run(["for-each-ref", "--format=%(objecttype) %(objectname) %(refname)", FETCHED])
        commits = {}
        for line in found.decode("ascii", "replace").splitlines():
            kind, sha, name = line.split(" ", 2)
            source = name[len(FETCHED) :]
            if source in wanted and kind == "commit":
                commits[source] = sha
            elif source in wanted:  # forgotten at once: a remote could send a new one every round
                self.problems.append(f"the remote's ref of machine {source[:8]} names no commit; refused")
                self.store.run(["update-ref", "-d", name])
                create_exclusive(self.resolver.sync_file("unsettled"), "")
        note_status(self.resolver, "fetch", not self.problems, "; ".join(self.problems) or "fetched")
        return commits

    def _too_much(self) -> str | None:
        """Why the fetch under way must stop: it has brought more than ``MAX_FETCH_BYTES``."""
        return self._over_the_cap() if self.store.partial_pack_bytes() > MAX_FETCH_BYTES else None

    def _over_the_cap(self) -> str:
        return f"the remote sent over {MAX_FETCH_BYTES // (1024 * 1024)} MiB of boards; refused, nothing kept"

    def _failed(self, exc: GitFailed, deadline: float | None) -> NoReturn:
        """Say why the fetch failed, and forget what it brought: a pack refused after it was written would
        otherwise stay here every round."""
        self.store.remove_partial_packs()
        if set(self.store.pack_sizes()) - self.packs:
            forget_fetched(self.resolver, self.environ, deadline)
        note_status(self.resolver, "fetch", False, str(exc))
        raise exc

    def stop(self) -> None:
        self.store.stop(self.proc)


def commit_times(store: Store) -> dict[str, int]:
    """When each fetched machine's commit was made (its committer time), by machine id."""
    out = store.run(["for-each-ref", "--format=%(committerdate:unix) %(refname)", FETCHED])
    times = {}
    for line in out.decode("ascii", "replace").splitlines():
        stamp, _, name = line.partition(" ")
        times[name[len(FETCHED) :]] = int(stamp) if stamp.isdigit() else 0
    return times


def forget_fetched(resolver: PathResolver, environ: Mapping[str, str], deadline: float | None) -> None:
    """Forget what a fetch brought and nothing took: by ``deadline``, else (None) in the next round's ``settle``.

    ``_sync/unsettled`` is written first, so a repack cut short is done again.
    """
    create_exclusive(resolver.sync_file("unsettled"), "")
    if deadline is not None:
        settle(resolver, environ, deadline)


def settle(resolver: PathResolver, environ: Mapping[str, str], deadline: float) -> None:
    """Forget what a failed fetch brought and nothing took: each machine's ref back at what was imported of it."""
    if not os.path.lexists(resolver.sync_file("unsettled")):
        return
    store = Store(resolver.sync_repo, environ)
    store.clear_stale_locks()  # a fetch stopped at its deadline leaves shallow.lock, which repack refuses
    try:
        known = State.load(resolver).known
        out = store.run(["for-each-ref", "--format=%(refname)", FETCHED])
        for name in out.decode("ascii", "replace").split():
            source = name[len(FETCHED) :]
            if source in known and store.resolve(known[source]) is not None:
                store.run(["update-ref", name, known[source]])
            else:
                store.run(["update-ref", "-d", name])
        store.forget("refs/fetched", None, deadline)  # no such ref now: it repacks and prunes
    except GitFailed as exc:
        note_status(resolver, "settle", False, f"what a failed fetch brought is still here: {exc}")
        return
    os.unlink(resolver.sync_file("unsettled"))
    note_status(resolver, "settle", True, "what a failed fetch brought is gone")
