"""Locks between processes, through filelock, on ``path + '.lock'`` (docs/adr/0026-locks-with-filelock.md).

filelock is imported where a lock is taken: the hooks that run after every turn take none,
and never pay for its import.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator

from .errors import BlackboardError
from .fsutil import PRIVATE_FILE

LOCK_TIMEOUT_SECONDS = 30.0
POLL_SECONDS = 0.01


@contextlib.contextmanager
def file_lock(path: str, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the lock on ``path + '.lock'`` for the ``with`` block, waiting up to ``timeout`` seconds.

    The kernel drops it when its holder dies, so a crash never leaves it held. Past the
    timeout: a one-line error that says what to do.
    """
    release = _take(path, timeout)
    if release is None:
        raise BlackboardError(
            f"timed out after {timeout:.0f}s waiting for {path}.lock: another blackboard "
            "process holds it; retry, and if it stays held, `blackboard doctor` names the holder"
        )
    try:
        yield
    finally:
        release()


def try_lock(path: str) -> Callable[[], object] | None:
    """Take the lock on ``path + '.lock'`` if it is free now (what releases it), else None; never waits.

    The lock ``file_lock`` takes: for a hook that would rather skip a step than wait for another process.
    """
    return _take(path, 0)


def _take(path: str, timeout: float) -> Callable[[], object] | None:
    """The lock on ``path + '.lock'`` taken (what releases it), or None when it stayed held for ``timeout``.

    A file system without ``flock`` (some network and FUSE mounts) gets filelock's soft lock,
    a file created beside it, instead. Taking the lock stamps the lock file's modification
    time, so ``doctor`` can tell how long its holder has had it.
    """
    lock_path = path + ".lock"
    if os.path.islink(lock_path):  # filelock follows links, and would truncate what one points at
        raise BlackboardError(f"cannot use {lock_path}: it is a link (`blackboard doctor` says what is wrong)")
    try:
        import filelock  # where a lock is taken (ADR 26)
    except ImportError:  # no environment: it could not be built, and the hooks go on without it
        return _kernel_lock(lock_path, timeout)
    lock: filelock.BaseFileLock = filelock.FileLock(lock_path, mode=PRIVATE_FILE)
    try:
        try:
            lock.acquire(timeout=timeout, poll_interval=POLL_SECONDS)
        except NotImplementedError:  # no flock here
            lock = filelock.SoftFileLock(path + ".soft.lock", mode=PRIVATE_FILE)
            lock.acquire(timeout=timeout, poll_interval=POLL_SECONDS)
    except filelock.Timeout:
        return None
    with contextlib.suppress(OSError):  # a file system that refuses only costs ``doctor`` its answer
        os.utime(lock.lock_file)
    return lock.release


def _kernel_lock(lock_path: str, timeout: float) -> Callable[[], object] | None:
    """The ``flock`` filelock takes, for a process without filelock (the environment could not be built)."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(POLL_SECONDS)
    with contextlib.suppress(OSError):
        os.utime(fd)
    return lambda: os.close(fd)


def held_for(lock_path: str) -> float | None:
    """Seconds the lock file ``lock_path`` has been held, by the stamp its holder set; None when it is free.

    Asked without taking the lock through filelock (whose attempt would truncate the file and
    reset the stamp) and without importing it: a hook asks whether a sync round waits. A
    process waiting for the lock resets the stamp too, as filelock opens the file at each try.
    """
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None  # gone, or not ours to open: nothing to report
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: closing the file lets go at once
        return None
    except BlockingIOError:
        return max(time.time() - os.fstat(fd).st_mtime, 0.0)
    except OSError:
        return None  # no flock here: the soft lock's holder is not known this way
    finally:
        os.close(fd)
