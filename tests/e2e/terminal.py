"""Interactive Claude Code in a pseudo-terminal, and the screen a person would see in it.

Stdlib only: ``Terminal`` starts a command on a pty of a fixed size and feeds what it writes
into ``Screen``, a small emulator of the cursor movements and erasures an Ink interface uses
(CSI cursor moves, line and screen erasure, carriage return, line feed with scrolling). Colours
and modes are read and dropped: the test looks at the characters, as a person reads them.
"""

import codecs
import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Callable, Optional

CSI = re.compile(r"\x1b\[([0-?]*)([ -/]*)([@-~])")
OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
OTHER_ESCAPE = re.compile(r"\x1b(?:[()*+][0-9A-Za-z]|[=>78cDEHMNOZ\\])")


class Screen:
    """The visible characters of a terminal of ``rows`` x ``columns``, fed the bytes a program writes."""

    def __init__(self, rows: int, columns: int) -> None:
        self.rows = rows
        self.columns = columns
        self.lines = [[" "] * columns for _ in range(rows)]
        self.row = 0
        self.column = 0
        self.saved = (0, 0)
        self._pending = ""

    def feed(self, data: str) -> None:
        data = self._pending + data
        self._pending = ""
        at = 0
        while at < len(data):
            char = data[at]
            if char != "\x1b":
                self._put(char)
                at += 1
                continue
            match = CSI.match(data, at) or OSC.match(data, at) or OTHER_ESCAPE.match(data, at)
            if match is None:
                if len(data) - at < 64:  # an escape cut in two by a read: wait for the rest
                    self._pending = data[at:]
                    return
                at += 1  # an escape this screen does not know: skip the ESC alone
                continue
            if match.re is CSI:
                self._csi(match.group(1), match.group(3))
            elif match.group(0) == "\x1b7":
                self.saved = (self.row, self.column)
            elif match.group(0) == "\x1b8":
                self.row, self.column = self.saved
            at = match.end()

    def text(self) -> str:
        return "\n".join("".join(line).rstrip() for line in self.lines)

    def _put(self, char: str) -> None:
        if char == "\r":
            self.column = 0
        elif char == "\n":
            self._line_feed()
        elif char == "\b":
            self.column = max(0, self.column - 1)
        elif char == "\t":
            self.column = min(self.columns - 1, (self.column // 8 + 1) * 8)
        elif unicodedata.category(char) in ("Cc", "Cf", "Mn"):
            pass  # bells, shifts, joiners and combining marks take no cell
        else:
            if self.column >= self.columns:
                self.column = 0
                self._line_feed()
            self.lines[self.row][self.column] = char
            self.column += 1
            if unicodedata.east_asian_width(char) in ("W", "F") and self.column < self.columns:
                self.lines[self.row][self.column] = ""  # the second cell of a wide character
                self.column += 1

    def _line_feed(self) -> None:
        if self.row == self.rows - 1:
            self.lines.pop(0)
            self.lines.append([" "] * self.columns)
        else:
            self.row += 1

    def _csi(self, parameters: str, command: str) -> None:
        if parameters.startswith(("?", ">", "<", "=")):
            return  # private modes (cursor shown, bracketed paste, keyboard protocols): nothing visible
        numbers = [int(p) if p.isdigit() else 0 for p in parameters.split(";")] if parameters else []
        first = numbers[0] if numbers else 0
        count = max(1, first)
        if command == "A":
            self.row = max(0, self.row - count)
        elif command in ("B", "e"):
            self.row = min(self.rows - 1, self.row + count)
        elif command in ("C", "a"):
            self.column = min(self.columns - 1, self.column + count)
        elif command == "D":
            self.column = max(0, self.column - count)
        elif command == "E":
            self.row, self.column = min(self.rows - 1, self.row + count), 0
        elif command == "F":
            self.row, self.column = max(0, self.row - count), 0
        elif command in ("G", "`"):
            self.column = min(self.columns - 1, count - 1)
        elif command == "d":
            self.row = min(self.rows - 1, count - 1)
        elif command in ("H", "f"):
            row = numbers[0] if numbers else 1
            column = numbers[1] if len(numbers) > 1 else 1
            self.row = min(self.rows - 1, max(1, row) - 1)
            self.column = min(self.columns - 1, max(1, column) - 1)
        elif command == "J":
            self._erase_display(first)
        elif command == "K":
            self._erase_line(first)
        elif command == "X":
            end = min(self.columns, self.column + count)
            self.lines[self.row][self.column : end] = [" "] * (end - self.column)

    def _erase_line(self, mode: int) -> None:
        line = self.lines[self.row]
        start, end = {0: (self.column, self.columns), 1: (0, self.column + 1)}.get(mode, (0, self.columns))
        line[start:end] = [" "] * (end - start)

    def _erase_display(self, mode: int) -> None:
        if mode == 0:
            self._erase_line(0)
            rows = range(self.row + 1, self.rows)
        elif mode == 1:
            self._erase_line(1)
            rows = range(0, self.row)
        else:
            rows = range(self.rows)
        for row in rows:
            self.lines[row] = [" "] * self.columns


class Terminal:
    """A command running on a pseudo-terminal; ``screen`` is what it shows."""

    def __init__(
        self, command: Sequence[str], cwd: Path, env: dict[str, str], rows: int = 50, columns: int = 160
    ) -> None:
        self.screen = Screen(rows, columns)
        self.output = ""  # everything it wrote, escapes and all, for a failure's message
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self._master = master
        self.process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,  # the pty becomes its controlling terminal, as in a person's shell
        )
        os.close(slave)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def read(self, seconds: float) -> None:
        """Take in what the program writes for up to ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self._master], [], [], min(left, 0.1))
            if not ready:
                continue
            try:
                data = os.read(self._master, 65536)
            except OSError:  # the program has exited and closed its side
                return
            if not data:
                return
            text = self._decoder.decode(data)
            self.output += text
            self.screen.feed(text)

    def wait_for(self, what: str, shown: Callable[[str], bool], timeout: float = 90) -> str:
        """The screen once ``shown(screen text)`` holds; fails with the screen after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen.text()
            if shown(screen):
                return screen
            if self.process.poll() is not None:
                self.read(0.2)
                raise AssertionError(f"{what}: the program exited ({self.process.returncode}):\n{self.screen.text()}")
            assert time.monotonic() < deadline, f"{what}: not shown within {timeout} s:\n{screen}"
            self.read(0.2)

    def type(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def close(self, timeout: float = 30) -> Optional[int]:
        """End the program as a person closing the window would (SIGHUP), then reap it."""
        if self.process.poll() is None:
            self.process.send_signal(1)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        os.close(self._master)
        return self.process.returncode
