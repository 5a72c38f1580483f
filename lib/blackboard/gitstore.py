"""A private bare git repository under the root, and the git commands sync runs in it.

Example: ``~/.claude/blackboard/acme/widget/.blackboard/_sync/repo.git``. The user's own
repository is never opened: its branches, index, working tree and HEAD stay untouched.
Git runs non-interactively with the user's own credentials and configuration, and every
command has a deadline (docs/adr/0019-sync-through-git.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping

from .errors import BlackboardError
from .fsutil import append_text, names_in, read_bounded

BLOB, GITLINK = "blob", "160000"
MAX_ENTRIES = 100_000  # files of a remote tree one round reads: about 20 000 sessions
MAX_HISTORY_BYTES = 64 * 1024 * 1024  # packs kept beside the largest one before everything unreachable goes
WATCH_SECONDS = 0.1
# No prompt may wait for a person: git's own, its askpass helpers (an empty GIT_ASKPASS
# stops git from trying core.askPass and SSH_ASKPASS), Git Credential Manager's, ssh's.
QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "SSH_ASKPASS": "",
    "SSH_ASKPASS_REQUIRE": "never",
    "GCM_INTERACTIVE": "never",
}
# Variables that would point git at another repository than the private one.
REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
)
# The private repository never collects garbage or maintains itself on its own (``Tidying`` does),
# and keeps no reflog.
OWN_CONFIG = "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[core]\n\tlogAllRefUpdates = false\n"
GC_LOOSE = 6700  # git's own gc.auto: loose objects before ``gc --auto`` packs them
GC_PACKS = 50  # git's gc.autoPackLimit is 50 too: packs before ``gc --auto`` packs them into one
# Transports that run commands are refused whatever the user's configuration says, and
# paths from a remote tree are never read as pathspec magic (``:(attr:…)``).
SAFE_CONFIG = ("-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never", "--literal-pathspecs")


class GitFailed(BlackboardError):
    """A git command failed or ran out of time; its message is git's last line, ``output`` its stdout."""

    def __init__(self, message: str, output: bytes = b"") -> None:
        super().__init__(message)
        self.output = output


class GitTimeout(GitFailed):
    """A git command ran past its deadline; it and everything it started were stopped."""


class TooLarge(GitFailed):
    """What the remote holds is over a bound this machine keeps: too many files, or too many bytes to fetch."""


class Entry:
    """One file of a tree: ``mode``, ``kind`` (blob, tree, commit), ``sha``, ``size`` (-1 when none), ``path``."""

    __slots__ = ("mode", "kind", "sha", "size", "path")

    def __init__(self, mode: str, kind: str, sha: str, size: int, path: str) -> None:
        self.mode, self.kind, self.sha, self.size, self.path = mode, kind, sha, size, path


class Store:
    """The private repository at ``git_dir``; ``environ`` is passed to every git it runs."""

    def __init__(self, git_dir: str, environ: Mapping[str, str]) -> None:
        self.git_dir = git_dir
        self.env = {**{k: v for k, v in environ.items() if k not in REPOSITORY_ENV}, **QUIET_ENV}

    def ensure(self) -> None:
        """Create the bare repository once; it never collects garbage or maintains itself on its own."""
        if os.path.isfile(os.path.join(self.git_dir, "HEAD")):
            if b"sharedrepository" not in (read_bounded(os.path.join(self.git_dir, "config"), 1 << 16) or b"").lower():
                self.run(["config", "core.sharedRepository", "0600"])  # made by a version that let the umask decide
            return
        # 0600: what git writes is this user's alone (folders 0700), whatever the umask
        self.run(["init", "--bare", "--quiet", "--shared=0600", self.git_dir], bare=False)
        # Three settings in one write (a `git config` each would be three processes more): the
        # repository was made this instant, and its config file holds what git wrote there.
        append_text(os.path.join(self.git_dir, "config"), OWN_CONFIG)

    def argv(self, args: list[str], bare: bool = True) -> list[str]:
        return ["git", *SAFE_CONFIG, *([f"--git-dir={self.git_dir}"] if bare else []), *args]

    def run(
        self, args: list[str], stdin: bytes | None = None, deadline: float | None = None, bare: bool = True
    ) -> bytes:
        """Run git; its stdout, or GitFailed with git's message (also when the deadline passes)."""
        proc = self.spawn(args, stdin is not None, bare)
        return self.finish(proc, stdin, deadline)

    def spawn(self, args: list[str], with_stdin: bool = False, bare: bool = True) -> subprocess.Popen[bytes]:
        """Start git in its own process group (so a deadline stops ssh too), never on a terminal."""
        try:
            return subprocess.Popen(
                self.argv(args, bare),
                stdin=subprocess.PIPE if with_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                start_new_session=True,
            )
        except OSError as exc:
            raise GitFailed(f"cannot run git ({exc.strerror}); install git to sync") from None

    def finish(
        self,
        proc: subprocess.Popen[bytes],
        stdin: bytes | None = None,
        deadline: float | None = None,
        watch: Callable[[], str | None] | None = None,
    ) -> bytes:
        """Wait for ``proc`` until ``deadline`` (a ``time.monotonic`` value); stop it and its children after.

        ``watch`` is asked every ``WATCH_SECONDS`` while git works: a reason it returns stops git
        (``TooLarge``).
        """
        while True:
            timeout = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            if watch is not None:
                timeout = WATCH_SECONDS if timeout is None else min(timeout, WATCH_SECONDS)
            try:
                out, err = proc.communicate(stdin, timeout=timeout)
                break
            except subprocess.TimeoutExpired:
                stdin = None  # communicate sent it already
                reason = watch() if watch is not None else None
                if reason is not None:
                    _stop(proc)
                    raise TooLarge(reason) from None
                if deadline is not None and time.monotonic() >= deadline:
                    _stop(proc)
                    raise GitTimeout(f"git {_verb(proc)} ran out of time") from None
        if proc.returncode != 0:
            lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
            message = f"git {_verb(proc)} failed: {lines[-1] if lines else f'exit {proc.returncode}'}"
            raise GitFailed(message, out)
        return out

    def tidying(self, deadline: float | None = None) -> Tidying:
        """``with store.tidying():`` packs the repository while the block only reads it (see ``Tidying``)."""
        return Tidying(self, deadline)

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        """Stop a git started by ``spawn`` and everything it started."""
        _stop(proc)

    def resolve(self, ref: str) -> str | None:
        """The commit ``ref`` names in this repository, or None."""
        try:
            return self.run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"]).decode().strip() or None
        except GitFailed:
            return None

    def tree(self, commit: str, paths: list[str] | None = None, deadline: float | None = None) -> list[Entry]:
        """Every file of ``commit`` (or under ``paths``), recursively, with sizes; ``TooLarge`` past ``MAX_ENTRIES``."""
        entries, more = self.tree_head(commit, paths, deadline)
        if more:
            raise TooLarge(f"the remote's tree holds over {MAX_ENTRIES} files; refused")
        return entries

    def tree_head(
        self, commit: str, paths: list[str] | None = None, deadline: float | None = None
    ) -> tuple[list[Entry], bool]:
        """The first ``MAX_ENTRIES`` files of ``commit`` (or under ``paths``) in git's order, with sizes, and
        whether it holds more.

        Read as git writes it, and git stopped there: a tree of a million files costs
        ``MAX_ENTRIES`` entries of memory.
        """
        proc = self.spawn(["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *(paths or [])])
        entries: list[Entry] = []
        try:
            for record in _records(proc, deadline):
                if len(entries) == MAX_ENTRIES:
                    return entries, True
                entries.append(_entry(record))
            self.finish(proc, None, deadline)  # its exit status, and its message when it failed
        finally:
            _stop(proc)
        return entries, False

    def forget(self, ref: str, commit: str | None, deadline: float | None = None) -> None:
        """Point ``ref`` back at ``commit`` (or delete it) and delete every object nothing refers to any more.

        What a refused fetch brought leaves the disk: the pack it came in is rewritten without it.
        A ``commit`` no longer here (a tidying dropped it) leaves ``ref`` deleted. A ``.keep``
        file, which a fetch killed just after writing its pack leaves, would keep that pack
        through every repack: none is ever ours, and all go first.
        """
        if commit is not None and self.resolve(commit) is not None:
            self.run(["update-ref", ref, commit])
        else:
            self.run(["update-ref", "-d", ref])
        for name in ("FETCH_HEAD",):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.git_dir, name))
        self.remove_partial_packs()
        self._remove_pack_files(lambda name: name.endswith(".keep"))
        self.run(["repack", "-a", "-d", "-q"], deadline=deadline)
        self.run(["prune", "--expire=now"], deadline=deadline)

    def clear_stale_locks(self) -> None:
        """Delete the lock files a git stopped half-way left: ``shallow.lock``, ``packed-refs.lock``, a ref's.

        A fetch stopped at its deadline leaves ``shallow.lock``, and git then refuses every
        later fetch ("remove the file manually to continue"). Only for a caller that holds the
        round's lock: then no git of a live round writes here.
        """
        stale = [os.path.join(self.git_dir, name) for name in ("shallow.lock", "packed-refs.lock")]
        for folder, _, names in os.walk(os.path.join(self.git_dir, "refs")):
            stale += [os.path.join(folder, name) for name in names if name.endswith(".lock")]
        for path in stale:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def remove_partial_packs(self) -> None:
        """Delete what a stopped fetch was writing (``objects/pack/tmp_*``)."""
        self._remove_pack_files(lambda name: name.startswith("tmp_"))

    def history_bytes(self) -> int:
        """The bytes of every pack but the largest: roughly what came since the repository was last packed whole."""
        sizes = [0, *self.pack_sizes().values()]
        return sum(sizes) - max(sizes)

    def gc_due(self) -> bool:
        """Whether ``git gc --auto`` would pack: git's own look at ``objects/17`` and the number of packs."""
        sample = [n for n in names_in(os.path.join(self.git_dir, "objects", "17")) if len(n) in (38, 62)]
        kept = {n[: -len(".keep")] for n in self._pack_files(lambda name: name.endswith(".keep"))}
        packs = [n for n in self.pack_sizes() if n[: -len(".pack")] not in kept]
        return len(sample) > -(-GC_LOOSE // 256) or len(packs) > GC_PACKS

    def pack_sizes(self) -> dict[str, int]:
        """Each pack's name and size in bytes."""
        return self._pack_files(lambda name: name.endswith(".pack"))

    def partial_pack_bytes(self) -> int:
        """The bytes a fetch under way has written so far (its ``objects/pack/tmp_pack_*``)."""
        return sum(self._pack_files(lambda name: name.startswith("tmp_")).values())

    def _remove_pack_files(self, wanted: Callable[[str], bool]) -> None:
        for name in self._pack_files(wanted):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.git_dir, "objects", "pack", name))

    def _pack_files(self, wanted: Callable[[str], bool]) -> dict[str, int]:
        """The ``wanted`` files of ``objects/pack`` with their sizes; one gone meanwhile is left out."""
        pack_dir = os.path.join(self.git_dir, "objects", "pack")
        sizes = {}
        for name in filter(wanted, names_in(pack_dir)):
            with contextlib.suppress(OSError):
                sizes[name] = os.lstat(os.path.join(pack_dir, name)).st_size
        return sizes

    def diff(self, old: str, new: str, deadline: float | None = None) -> list[tuple[str, Entry]]:
        """What changed from ``old`` to ``new``: ``(status, entry)`` for each file and folder, as ``new`` has it.

        ``status`` is git's letter (``A`` added, ``M`` changed, ``D`` deleted, ``T`` changed
        kind); a folder's entry has kind ``tree``. Sizes are not known here (-1).
        """
        proc = self.spawn(["diff-tree", "-r", "-t", "-z", "--no-renames", old, new])
        changes: list[tuple[str, Entry]] = []
        try:
            records = _records(proc, deadline)
            for meta, path in zip(records, records):  # each change is two records: its modes and shas, its path
                if len(changes) == MAX_ENTRIES:
                    raise TooLarge(f"the remote changed over {MAX_ENTRIES} files at once; refused")
                old_mode, mode, _, sha, status = meta.decode("ascii", "replace").lstrip(":").split(" ")
                kind = {"040000": "tree", GITLINK: "commit"}.get(old_mode if status == "D" else mode, BLOB)
                changes.append((status[:1], Entry(mode, kind, sha, -1, path.decode("utf-8", "surrogateescape"))))
            self.finish(proc, None, deadline)
        finally:
            _stop(proc)
        return changes

    def disk_bytes(self, commit: str, deadline: float | None = None) -> int:
        """What every object ``commit`` reaches takes on disk: its files, its folders' listings, itself.

        ``TooLarge`` past ``4 * MAX_ENTRIES`` objects (a file, a folder: one each).
        """
        proc = self.spawn(["rev-list", "--objects", "--no-object-names", commit])
        shas: list[bytes] = []
        try:
            for sha in _records(proc, deadline, b"\n"):
                if len(shas) == 4 * MAX_ENTRIES:
                    raise TooLarge(f"the remote's commit holds over {4 * MAX_ENTRIES} files and folders; refused")
                shas.append(sha)
            self.finish(proc, None, deadline)
        finally:
            _stop(proc)
        sizes = self.run(["cat-file", "--batch-check=%(objectsize:disk)"], b"".join(s + b"\n" for s in shas), deadline)
        return sum(int(size) for size in sizes.split() if size.isdigit())

    def reader(self, deadline: float | None = None) -> Reader:
        """One ``git cat-file --batch`` to read blobs with; a ``with`` starts it at once, else the first read."""
        return Reader(self, deadline)

    def commit(
        self, ref: str, parent: str | None, message: str, who: str, changes: list[tuple[str, bytes | None]]
    ) -> str:
        """Commit ``changes`` (path, content; None deletes) on top of ``parent`` into ``ref``; returns the commit."""
        stamp = f"{who} {int(time.time())} +0000"
        lines = [f"commit {ref}\n".encode(), f"committer {stamp}\n".encode(), _data(message.encode())]
        if parent:
            lines.append(f"from {parent}\n".encode())
        for path, content in changes:
            quoted = _quote_path(path)
            lines.append(f"D {quoted}\n".encode() if content is None else f"M 100644 inline {quoted}\n".encode())
            if content is not None:
                lines.append(_data(content))
        # always a pack, never loose objects: ``history_bytes`` counts packs, and so does gc's limit
        self.run(
            ["-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--force", "--done"],
            stdin=b"".join(lines) + b"\ndone\n",
        )
        found = self.resolve(ref)
        if found is None:
            raise GitFailed("git fast-import made no commit")
        return found


class Tidying:
    """``git gc`` running while the ``with`` block reads the repository; waited for at its end.

    Automatic gc is off for the hooks' sake, yet every fetch and every commit adds loose
    objects or a pack: left alone, lookups slow down month by month. This packs them when
    git's usual thresholds say so, and packs everything once the packs beside the largest
    hold over ``MAX_HISTORY_BYTES``. Fetches are shallow, so what the remote's newest commit
    and this machine's last push no longer hold is unreachable, and gc deletes it at once:
    the remote's history, and what it sent that was refused, does not pile up here.

    Git lets gc run beside readers, but it deletes what nothing refers to: ``start`` it
    only once the block reads what the refs name alone (the remote's commit, not the one
    the last import came from). Nothing may write a ref meanwhile, so the block must not
    commit or fetch. A gc that fails (a full disk) does not fail the block: ``problem``
    says why, and the next round packs again.
    """

    CONFIG = ("-c", f"gc.auto={GC_LOOSE}", "-c", f"gc.autoPackLimit={GC_PACKS}", "-c", "gc.autoDetach=false")

    def __init__(self, store: Store, deadline: float | None) -> None:
        self.store, self.deadline = store, deadline
        self.problem: str | None = None
        self.started = False
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Tidying:
        return self

    def start(self) -> None:
        """Start gc, once: packing everything when history is over its bound, else only when git would.

        Git's own ``gc --auto`` decides from a look at two folders; looking here first spares a
        round the process when, as in most rounds, nothing is due.
        """
        if self.started:
            return
        self.started = True
        if self.store.history_bytes() > MAX_HISTORY_BYTES:
            due = []
        elif self.store.gc_due():
            due = ["--auto"]
        else:
            return
        self.proc = self.store.spawn([*self.CONFIG, "-c", "gc.pruneExpire=now", "gc", *due, "--quiet"])

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None and not self.started:
            return
        self.start()
        if self.proc is None:
            return
        try:  # a gc under way is waited for even when the block failed: a gc stopped half-way leaves litter
            self.store.finish(self.proc, None, self.deadline)
        except GitFailed as exc:
            self.problem = str(exc)


class Reader:
    """Blobs read through one ``git cat-file --batch``, a few names at a time.

    Writing every name first could fill both pipes and leave git and us waiting on each
    other. A few names (``AT_ONCE``) never fill git's input, so git can always write its
    answers while they are read, and only the answers being read are held in memory.
    """

    AT_ONCE = 16

    def __init__(self, store: Store, deadline: float | None) -> None:
        self.store, self.deadline = store, deadline
        self.proc: subprocess.Popen[bytes] | None = None
        self.checker: subprocess.Popen[bytes] | None = None  # ``cat-file --batch-check``, for sizes

    def sizes(self, shas: list[str]) -> list[int]:
        """Each object's size (-1 when it is missing), from its header alone: no content is read."""
        found: list[int] = []
        for start in range(0, len(shas), self.AT_ONCE):
            chunk = shas[start : start + self.AT_ONCE]
            if self.checker is None:
                self.checker = self.store.spawn(["cat-file", "--batch-check"], with_stdin=True)
            self._ask(self.checker, chunk)
            assert self.checker.stdout is not None
            for _ in chunk:
                header = self.checker.stdout.readline().split()  # "<sha> <type> <size>" or "<sha> missing"
                found.append(int(header[2]) if len(header) == 3 else -1)
        return found

    def read(self, sha: str, limit: int) -> bytes | None:
        """The blob ``sha``; None when it is over ``limit`` bytes, missing, or not a blob."""
        return self.read_many([sha], limit)[0]

    def read_many(self, shas: list[str], limit: int) -> list[bytes | None]:
        """``read`` for each of ``shas`` (at most ``AT_ONCE``), asked together."""
        if len(shas) > self.AT_ONCE:
            raise ValueError(f"at most {self.AT_ONCE} blobs at once")
        proc = self._started()
        self._ask(proc, shas)
        assert proc.stdout is not None
        answers = proc.stdout
        found: list[bytes | None] = []
        for _ in shas:
            header = answers.readline().split()
            if len(header) != 3:  # "<sha> missing"
                found.append(None)
                continue
            size = int(header[2])
            found.append(_read_exactly(answers.read, size, keep=header[1] == b"blob" and size <= limit))
            answers.read(1)  # the newline after each object
        return found

    def _ask(self, proc: subprocess.Popen[bytes], shas: list[str]) -> None:
        """Send a few names to a ``cat-file``, unless the deadline has passed."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise GitTimeout("git cat-file ran out of time")
        assert proc.stdin is not None
        proc.stdin.write("".join(f"{sha}\n" for sha in shas).encode())
        proc.stdin.flush()

    def _started(self) -> subprocess.Popen[bytes]:
        if self.proc is None:
            self.proc = self.store.spawn(["cat-file", "--batch"], with_stdin=True)
        return self.proc

    def __enter__(self) -> Reader:
        self._started()  # git starts now, and is ready by the time the caller knows what to ask
        return self

    def __exit__(self, *exc_info: object) -> None:
        for proc in (self.proc, self.checker):
            if proc is not None:
                _stop(proc)


def _records(proc: subprocess.Popen[bytes], deadline: float | None, end: bytes = b"\0") -> Iterator[bytes]:
    """The records git writes on stdout, each ending with ``end``, as it writes them, until ``deadline``."""
    assert proc.stdout is not None
    pending = b""
    while True:
        if deadline is not None and time.monotonic() > deadline:
            raise GitTimeout(f"git {_verb(proc)} ran out of time")
        chunk = os.read(proc.stdout.fileno(), 1 << 16)
        if not chunk:
            break
        *records, pending = (pending + chunk).split(end)
        yield from filter(None, records)
    if pending:
        yield pending


def _entry(record: bytes) -> Entry:
    meta, _, path = record.partition(b"\t")
    mode, kind, sha, size = meta.decode().split()
    return Entry(mode, kind, sha, int(size) if size.isdigit() else -1, path.decode("utf-8", "surrogateescape"))


def _read_exactly(read: Callable[[int], bytes], size: int, keep: bool) -> bytes | None:
    """Read ``size`` bytes from a pipe; keep them only when asked (a huge blob is read through, not held)."""
    chunks, left = [], size
    while left:
        chunk = read(min(left, 1 << 20))
        if not chunk:
            raise GitFailed("git cat-file stopped early")
        left -= len(chunk)
        if keep:
            chunks.append(chunk)
    return b"".join(chunks) if keep else None


def _data(content: bytes) -> bytes:
    return f"data {len(content)}\n".encode() + content + b"\n"


def _quote_path(path: str) -> str:
    """A path for fast-import; ours are session ids and file names, which never need quoting."""
    if any(c in path for c in '\n"\\') or path.startswith(" "):
        raise ValueError(f"not a path sync writes: {path!r}")
    return path


def _verb(proc: subprocess.Popen[bytes]) -> str:
    args = [a for a in proc.args if isinstance(a, str) and not a.startswith("-")][1:]  # type: ignore[union-attr]
    return next((a for a in args if "=" not in a), "?")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a git and every process it started (ssh, a credential helper)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()
    proc.wait()
