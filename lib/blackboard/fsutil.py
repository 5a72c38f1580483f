"""The one place that writes files: atomic replace, appends; and bounded reads. Locks are in ``locks``."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
from collections.abc import Iterator

from .errors import BlackboardError

# Boards, handoffs and sync settings are the person's own: created private whatever the umask
# (a umask only takes bits away).
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def make_dirs(path: str) -> None:
    """Create the folder ``path`` and its missing parents, each private; one that exists is left as it is.

    ``os.makedirs`` gives its mode to the last folder only. ``path`` may not be a link:
    nothing is written through one. Folders above it that exist are taken as they are (a
    home whose ``.claude`` links to a dotfiles checkout).
    """
    if os.path.islink(path):
        raise _link_refused(path, path)
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent and parent != path and not os.path.isdir(parent):
        make_dirs(parent)
    try:
        os.mkdir(path, PRIVATE_DIR)
    except FileExistsError:
        if not os.path.isdir(path) or os.path.islink(path):
            raise


@contextlib.contextmanager
def _folder_of(path: str) -> Iterator[tuple[int, str]]:
    """The folder ``path`` is in, opened (never through a link), and its name in it, itself no link.

    Every write below goes through the folder's descriptor: a link swapped in for the folder
    after this opened it changes nothing, and neither the folder nor the file may be one.
    """
    directory, name = os.path.split(path)
    try:
        folder = os.open(directory or os.curdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(directory):
            raise _link_refused(path, directory) from None
        raise
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK(os.lstat(name, dir_fd=folder).st_mode):
                raise _link_refused(path, path)
        yield folder, name
    finally:
        os.close(folder)


def _link_refused(path: str, link: str) -> BlackboardError:
    return BlackboardError(
        f"refusing to write {path}: {link} is a symbolic link, and nothing is written through one "
        "(`blackboard doctor` names them)"
    )


def atomic_write(path: str, data: str | bytes, durable: bool = True) -> None:
    """Replace ``path`` with ``data``: temp file in the same directory, fsync, ``os.replace``.

    Readers see the old file or the new one, never a mix. ``durable=False`` skips the fsync
    for what can be derived again (Stop's draft handoff): a power loss may then leave the
    previous version, or an empty file. Neither ``path`` nor its folder may be a link.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with _folder_of(path) as (folder, name):
        temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE, dir_fd=folder)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                if durable:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise


def create_exclusive(path: str, data: str) -> bool:
    """Write ``data`` to a new file; False when ``path`` already exists (a link included)."""
    with _folder_of(path) as (folder, name):
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE, dir_fd=folder)
        except FileExistsError:
            return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(data)
    return True


def _open_append(path: str, folder: int, name: str, access: int) -> int:
    """A regular file opened to append to; O_NONBLOCK: a FIFO in its place fails at once, not waits for a reader."""
    flags = access | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    fd = os.open(name, flags, PRIVATE_FILE, dir_fd=folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", path)
    return fd


def append_line(path: str, line: str) -> None:
    """Append one line with one ``write``, taking no lock: appends of several processes never interleave.

    A line a full disk cut short stays, unreadable, and the next starts on a line of its own.
    """
    with _folder_of(path) as (folder, name):
        fd = _open_append(path, folder, name, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        cut_short = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        os.write(fd, ("\n" if cut_short else "").encode() + line.encode("utf-8") + b"\n")
    finally:
        os.close(fd)


def append_text(path: str, text: str) -> None:
    """Append ``text`` whole or not at all (the caller holds the file's lock); never through a link.

    A write cut short (a full disk) is taken back, so no half entry is left behind.
    """
    payload = text.encode("utf-8")
    with _folder_of(path) as (folder, name):
        fd = _open_append(path, folder, name, os.O_WRONLY)
        try:
            before = os.fstat(fd).st_size
            try:
                written = os.write(fd, payload)
                while written < len(payload):
                    written += os.write(fd, payload[written:])
            except BaseException:
                os.ftruncate(fd, before)
                if before == 0:
                    os.unlink(name, dir_fd=folder)  # it was ours: the next append starts it again, header included
                raise
        finally:
            os.close(fd)


MAX_WHOLE_READ = 64 * 1024 * 1024  # a board file read whole, to be rewritten, is refused beyond this


def open_regular(path: str, follow: bool = False) -> io.BufferedReader:
    """Open ``path`` for reading if it is a regular file; OSError for a FIFO, a device or (unless ``follow``) a link.

    Never blocks: a FIFO named like a file (``.git``, a board file) is refused, not waited on.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "not a regular file", path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str, max_bytes: int, follow: bool = False) -> bytes | None:
    """At most ``max_bytes`` of a regular file; None when it does not exist."""
    try:
        with open_regular(path, follow) as handle:
            return read_up_to(handle, max_bytes)
    except FileNotFoundError:
        return None


READ_CHUNK = 64 * 1024


def read_up_to(handle: io.BufferedReader, max_bytes: int) -> bytes:
    """At most ``max_bytes`` of ``handle``, ``READ_CHUNK`` at a time.

    ``handle.read(max_bytes)`` sets aside all ``max_bytes`` before it reads: with a bound of a
    megabyte, listing 10 000 small ``_meta.json`` took three times as long.
    """
    chunks = []
    while max_bytes > 0:
        chunk = handle.read(min(max_bytes, READ_CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        max_bytes -= len(chunk)
    return b"".join(chunks)


def names_in(directory: str) -> list[str]:
    """The names in a folder; none when it is missing or cannot be listed."""
    try:
        return os.listdir(directory)
    except OSError:
        return []


def read_given_file(path: str, max_bytes: int) -> bytes | None:
    """At most ``max_bytes`` of a file a command was given (``--file``); None when it does not exist.

    Never through a link, a folder of a relative path included, and never a file with other
    names (hard links): one swapped in after the approval hook looked would read what it points
    to (docs/adr/0014-approving-board-commands.md).
    """
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        return None
    except OSError:
        if os.path.islink(path):
            raise BlackboardError(f"--file {path} is a symbolic link; give the file it points to") from None
        raise
    with handle:
        if os.fstat(handle.fileno()).st_nlink > 1:
            raise BlackboardError(f"--file {path} has other names (hard links); give a copy of it")
        folders = [] if os.path.isabs(path) else os.path.normpath(path).split(os.sep)[:-1]
        if link_on_the_way(os.curdir, folders) is not None:
            raise BlackboardError(f"--file {path} goes through a symbolic link; give the path it points to")
        return read_up_to(handle, max_bytes)


def read_tail(path: str, max_bytes: int) -> tuple[str, bool]:
    """The last ``max_bytes`` of a file as text, and whether anything before it was skipped."""
    try:
        with open_regular(path) as handle:
            size = handle.seek(0, os.SEEK_END)
            start = max(size - max_bytes, 0)
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return "", False
    if start:
        # Drop the partial first line so a multi-byte character is never split.
        data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
    return data.decode("utf-8", errors="replace"), start > 0


def read_head(path: str, max_bytes: int) -> str:
    """The first ``max_bytes`` of a file as text; empty when it does not exist."""
    data = read_bounded(path, max_bytes)
    return "" if data is None else data.decode("utf-8", errors="replace")


def read_text(path: str, max_bytes: int = MAX_WHOLE_READ) -> str:
    """A whole file as text; empty when it does not exist; an error when it is larger than ``max_bytes``.

    For a file about to be rewritten: a part of it must never be taken for the whole.
    """
    data = read_bounded(path, max_bytes + 1)
    if data is not None and len(data) > max_bytes:
        raise BlackboardError(f"{path} is over {max_bytes // (1024 * 1024)} MiB; move old entries out of it by hand")
    return "" if data is None else data.decode("utf-8", errors="replace")


def json_object(data: bytes | None) -> dict:
    """``data`` as a JSON object; ``{}`` for nothing, bad bytes, deep nesting or any other JSON value."""

    try:
        loaded = json.loads(data or b"{}")
    except (ValueError, RecursionError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def read_json_object(path: str, max_bytes: int, follow: bool = False) -> dict:
    """A JSON file as a dict; ``{}`` when it is missing, no regular file, damaged or over ``max_bytes``."""
    try:
        data = read_bounded(path, max_bytes + 1, follow)
    except OSError:
        return {}
    return {} if data is not None and len(data) > max_bytes else json_object(data)


def resolves_inside(root: str, path: str) -> bool:
    """Whether ``path``, with every symlink resolved, is ``root`` or below it."""
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    return real == real_root or real.startswith(real_root + os.sep)


def refuse_links(root: str, path: str) -> None:
    """Raise BlackboardError if ``path``, or a folder between ``root`` and it, is a symbolic link.

    Nothing is read or written through a link inside the root: a link there could lead a
    write outside it, or a read of any file into a handoff. What does not exist yet is fine.
    """
    relative = os.path.relpath(path, root)
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        raise BlackboardError(f"refusing {path}: it is outside {root}")
    link = link_on_the_way(root, relative.split(os.sep))
    if link is not None:
        raise BlackboardError(
            f"refusing {link}: a symbolic link inside {root}; nothing is written or read through one "
            "(`blackboard doctor` names them)"
        )


def link_on_the_way(base: str, parts: list[str]) -> str | None:
    """The first of ``base/part1``, ``base/part1/part2``, … that is a symbolic link, or None.

    Empty and ``.`` parts are skipped; past a part that does not exist, nothing does.
    """
    current = base
    for part in parts:
        if part in ("", os.curdir):
            continue
        current = os.path.join(current, part)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except FileNotFoundError:
            return None
    return None
