"""What a Bash command would do to the working tree, read from its text (docs/adr/0033-reading-shell-commands.md).

``effects("cd src && git checkout .", "/repo")`` gives one ``Effect("restore", "/repo/src", (".",), False, …)``.
The command is read as bash reads it (quotes, ``&&``/``||``/``;``/pipes, subshells, groups, ``$( … )``,
backticks, heredocs, ``bash -c``, ``eval``, wrappers such as ``sudo`` or ``timeout``), never run: nothing
here touches a process or the environment, nor a disk but through the caller's ``is_dir``. Text that
cannot be read (an open quote, nesting too deep) is judged by the git and write words it holds, as
touching the whole checkout. Text holding none of the words that could write is answered at once, so an
ordinary command costs one regular expression.
``touches(effect, path)`` says whether an effect reaches a file: whole, the file, a directory above, a glob.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Callable, Iterable

from .writes import NOT_FILES, WRITERS, Found, fed_code, git, interpreter_code, join, printed, split_options

KINDS = frozenset(
    {
        "stash", "reset", "switch", "restore", "clean", "pull", "rebase", "merge", "cherry-pick", "revert", "am",
        "sweep", "commit-paths", "commit-staged", "remove", "overwrite", "move", "rewrite", "unread",
    }
)  # fmt: skip


class Effect:
    """One thing a command would do to the files of ``cwd``'s checkout; frozen.

    ``paths`` are as written (relative to ``cwd``, or absolute, globs kept): each names a file, or a
    directory and all under it. ``whole`` means every file of the checkout is at stake, whatever ``paths``.
    ``words`` is the command's segment (at most ``WORDS_SHOWN`` characters), for a reason a person reads.
    A plain class, not a frozen dataclass: ``dataclasses`` would cost every Bash command's hook (ADR 28).
    """

    __slots__ = ("kind", "cwd", "paths", "whole", "words")
    kind: str
    cwd: str
    paths: tuple[str, ...]
    whole: bool
    words: str

    def __init__(self, kind: str, cwd: str, paths: tuple[str, ...], whole: bool, words: str) -> None:
        for name, value in zip(self.__slots__, (kind, cwd, paths, whole, words)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Effect is frozen: {name} cannot change")

    def _fields(self) -> tuple:
        return (self.kind, self.cwd, self.paths, self.whole, self.words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Effect) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Effect({!r}, {!r}, {!r}, {!r}, {!r})".format(*self._fields())


# Every command that can yield an effect holds one of these; a command holding none is answered at once.
_MAY_WRITE = re.compile(
    r"git|rm|mv|cp|tee|sed|perl|truncate|patch|dd|install|ln|delete|unlink|shred|>|rsync|tar|unzip"
    r"|python|pypy|node|ruby|php|bun"
)
_UNQUOTED = re.compile(r"[\\'\"]")
WORDS_SHOWN = 300  # characters of a command kept in ``Effect.words``, for a reason a person reads
# Nesting of subshells, groups, substitutions and ``bash -c`` read before judging by words. Text nested
# ``bash -c``, ``eval`` and backticks is read again once per level, so the work is at most this many times linear.
_MAX_DEPTH = 20
_MAX_ALSO = 4  # other directories a shell may be left in by failed `cd`s, kept apart
# Words and operators read (heredoc bodies aside) before judging by words: a command longer than any a
# person or a model writes costs a fraction of a second, never seconds.
_MAX_TOKENS = 20_000

_SPACE = re.compile(r"(?:[^\S\n]|\\\n)+")
_PLAIN = re.compile(r"[^\s;&|()<>'\"\\$`]+")
_IN_DOUBLE = re.compile(r'[^"\\$`]+')
_BACKTICK = re.compile(r"`([^`\\]*(?:\\.[^`\\]*)*)`", re.S)
_ANSI_C = re.compile(r"\$'[^'\\]*(?:\\.[^'\\]*)*'", re.S)
_OPERATOR = re.compile(r"&&|\|\||;;&|;;|;&|;|\|&|\||&|\n|\(|\)")
_REDIRECT = re.compile(r"&>>?|(?:\d+)?(?:>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")
_PARENS = re.compile(r"[()]")
_BRACES = re.compile(r"[{}]")
_FALLBACK_WORDS = re.compile(r"[\w.-]+")
_FALLBACK_WRITE = re.compile(r"(?<![<>&\d])(?:\d*>>?|&>>?)\s*(?!&|/dev/)[^\s;&|]")

_NOT_WRITTEN = (*NOT_FILES, ">(", "<(")  # `> >(tee log)` writes to a pipe
_SEPARATORS_IN_CHILD = ("|", "|&", "&")  # a `cd` before these runs in a child shell
_PREFIX_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!"})
_NOT_COMMANDS = frozenset({"for", "select", "case", "function", "done", "fi", "esac", "in", "}", "[[", "[", "test"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "fish"})
# For text that cannot be read: the kind each git verb or write command stands for.
_FALLBACK_GIT = {
    **{"pull": "pull", "rebase": "rebase", "merge": "merge", "cherry-pick": "cherry-pick", "revert": "revert"},
    **{"am": "am", "switch": "switch"},
    **{"stash": "stash", "reset": "reset", "checkout": "switch", "restore": "restore", "clean": "clean"},
    **{"bisect": "switch", "apply": "rewrite", "add": "sweep", "commit": "sweep", "rm": "remove", "mv": "move"},
}
_FALLBACK_COMMANDS = {"rm": "remove", "rmdir": "remove", "unlink": "remove", "shred": "remove", "mv": "move"}
_FALLBACK_COMMANDS.update({"cp": "overwrite", "install": "overwrite", "tee": "overwrite", "dd": "overwrite"})
_FALLBACK_COMMANDS.update({"truncate": "rewrite", "patch": "rewrite", "-delete": "remove"})


def touches(effect: Effect, path: str) -> bool:
    """Whether ``effect`` reaches the file at the absolute, normalised ``path``.

    It does when it is ``whole`` (the caller checks the file is in the checkout of ``effect.cwd``), or
    when one of its paths, taken from ``effect.cwd``, is the file, a directory above it, or a glob or
    git pathspec matching it (``*`` also crosses ``/``: ``rm -r src/*`` and ``git add '*.py'`` do).
    """
    return effect.whole or any(_covers(join(effect.cwd, written), path) for written in effect.paths)


def _covers(written: str, path: str) -> bool:
    if path == written or path.startswith(written.rstrip("/") + "/"):
        return True
    return any(char in written for char in "*?[") and fnmatch.fnmatchcase(path, written)


class _Unreadable(Exception):
    """The text is not a command bash would read the way we do, or reading it would cost too much."""


def effects(command: str, cwd: str, is_dir: Callable[[str], bool] | None = None) -> list[Effect]:
    """What ``command``, run in ``cwd``, would do to the working tree: ``[]`` for a command that only reads.

    With ``is_dir``, a ``cd`` into a directory that is not there (while ``cwd`` is) may fail: what
    runs after it other than through ``&&`` is read both where it would go and where the shell was.
    """
    if not _MAY_WRITE.search(_UNQUOTED.sub("", command)):  # `g\it`, `'g'it` are git too
        return []
    found: list[Effect] = []
    try:
        _Reader(command, found, _Limits(is_dir)).read_all(_Place(cwd))
    except (_Unreadable, RecursionError, IndexError, ValueError):
        return _by_words(command, cwd)
    return found


def _by_words(command: str, cwd: str) -> list[Effect]:
    """Text that cannot be read: each git verb and write command it holds touches the whole checkout."""
    words = set(_FALLBACK_WORDS.findall(_UNQUOTED.sub("", command)))
    kinds = [kind for word, kind in _FALLBACK_COMMANDS.items() if word in words]
    if "git" in words:
        kinds += [kind for verb, kind in _FALLBACK_GIT.items() if verb in words]
    if {"sed", "perl"} & words and ("-i" in command or "--in-place" in command):
        kinds.append("rewrite")
    if _FALLBACK_WRITE.search(command):
        kinds.append("overwrite")
    shown = command[:WORDS_SHOWN]
    return [Effect(kind, cwd, (), True, shown) for kind in dict.fromkeys(kinds)]


class _Place:
    """Where a shell is: its directory, the one before (``cd -``), ``pushd``'s stack, and where else it may be.

    ``also`` holds the directories the shell stays in when a ``cd`` into a missing one fails.
    """

    def __init__(self, cwd: str, previous: str = "", stack: tuple[str, ...] = (), also: tuple[str, ...] = ()) -> None:
        self.cwd, self.previous, self.stack, self.also = cwd, previous or cwd, stack, also

    def copy(self) -> _Place:
        return _Place(self.cwd, self.previous, self.stack, self.also)

    def set(self, other: _Place) -> None:
        self.cwd, self.previous, self.stack, self.also = other.cwd, other.previous, other.stack, other.also

    def may_stay(self, where: str) -> None:
        if where != self.cwd and where not in self.also and len(self.also) < _MAX_ALSO:
            self.also = (*self.also, where)

    def moved(self, words: list[str]) -> _Place | None:
        """The place after ``cd``/``pushd``/``popd`` with these arguments, or None for another command."""
        name, args = words[0], [w for w in words[1:] if not (w.startswith("-") and w != "-")]
        relative = args[0] if args and args[0] != "-" and not args[0].startswith("+") else None
        also = tuple(join(where, relative) for where in self.also) if relative else self.also
        if name == "cd":
            target = self.previous if args[:1] == ["-"] else join(self.cwd, args[0]) if args else "~"
            return _Place(target, self.cwd, self.stack, also)
        if name == "pushd":
            target = join(self.cwd, args[0]) if args and not args[0].startswith("+") else self.previous
            return _Place(target, self.cwd, (self.cwd, *self.stack), also)
        if name == "popd":
            return _Place(self.stack[0], self.cwd, self.stack[1:], self.also) if self.stack else self
        return None


class _Limits:
    """How deep the reading is and how many tokens it read, shared by a command and every text nested in it;
    with the caller's ``is_dir``."""

    def __init__(self, is_dir: Callable[[str], bool] | None = None) -> None:
        self.open = self.tokens = 0
        self.is_dir = is_dir


class _Heredoc:
    def __init__(self, delimiter: str, strip_tabs: bool) -> None:
        self.delimiter, self.strip_tabs = delimiter, strip_tabs
        self.shell: _Place | None = None  # where the shell that reads it as commands runs (`bash <<EOF`)
        self.code: tuple[str, list[str], _Place, str] | None = None  # the command it feeds, where, and its words


class _Reader:
    """Reads one command text token by token, recording the effects of each simple command as it ends."""

    def __init__(self, text: str, found: list[Effect], limits: _Limits) -> None:
        self.text, self.pos, self.found, self.limits = text, 0, found, limits
        self.heredocs: list[_Heredoc] = []
        self.piped: str | None = None  # the text `echo`/`printf` writes into the pipe to the next command
        self.fed: tuple[list[tuple[str, str]], str] = ([], "")  # the redirections of the command judged, its words

    def nested(self, text: str, place: _Place) -> None:
        """Read ``text`` (``bash -c``, ``eval``, backticks, a heredoc fed to a shell) as commands at ``place``."""
        self.limits.open += 1
        try:
            _Reader(text, self.found, self.limits).read_all(place)
        finally:
            self.limits.open -= 1

    def read_all(self, place: _Place) -> None:
        if self.read_list(place, None) is not None:
            raise _Unreadable("unmatched closing")

    def read_list(self, place: _Place, closer: str | None) -> str | None:
        """Commands up to ``closer`` (``)``, ``}``) or the end; returns what stopped it."""
        self.limits.open += 1
        if self.limits.open > _MAX_DEPTH:
            raise _Unreadable("nested too deep")
        try:
            return self.read_commands(place, closer)
        finally:
            self.limits.open -= 1

    def read_commands(self, place: _Place, closer: str | None) -> str | None:
        stays: str | None = None  # where the shell is left by a `cd` that fails, once its `&&` chain ends
        while True:
            before = place.cwd
            end, moved = self.read_command(place)
            if end == "\n":
                self.read_heredocs()
            if moved is not None and end not in _SEPARATORS_IN_CHILD:
                place.set(moved)
                if self.may_fail(before, moved.cwd):
                    stays = before
            if stays is not None and end != "&&":
                place.may_stay(stays)
                stays = None
            if end in (")", "}"):
                if end != closer:
                    raise _Unreadable(f"unmatched {end}")
                return end
            if end == "":
                if closer is not None:
                    raise _Unreadable(f"missing {closer}")
                return None

    def may_fail(self, before: str, target: str) -> bool:
        """Whether a ``cd`` from ``before`` to ``target`` may fail: ``target`` is not there (yet) by ``is_dir``."""
        is_dir = self.limits.is_dir
        return is_dir is not None and not _unknown(target, ()) and is_dir(before) and not is_dir(target)

    def read_command(self, place: _Place) -> tuple[str, _Place | None]:
        """One simple or compound command; returns the operator that ended it and where a ``cd`` in it went."""
        words: list[str] = []
        redirects: list[tuple[str, str]] = []
        start = last = self.skip_space()
        while True:
            keywords_only = not redirects and all(word in _PREFIX_WORDS for word in words)
            arithmetic = (
                self.arithmetic_end(self.skip_space(), words == ["for"]) if keywords_only or words == ["for"] else None
            )
            if arithmetic is not None:  # `(( i > 3 ))`, `for ((…))`: read as data
                self.pos = last = arithmetic
                continue
            kind, value, raw = self.token(place)
            if kind == "word" and raw == "}" and not words and not redirects:
                return "}", None
            if kind == "word" and raw == "{" and keywords_only:
                self.read_list(place, "}")
            elif kind == "word":
                words.append(value)
            elif kind == "redirect":
                redirects.append((value, self.redirect_target(value, place)))
            elif value == "(" and keywords_only:
                self.read_list(place.copy(), ")")
            elif value == "(":  # `name ()`: a function's definition, its body the next command
                if self.token(place)[1] != ")":
                    raise _Unreadable("( after words")
                return ";", None
            else:
                break
            last = self.pos
        moved = self.judge(words, redirects, place, self.text[start:last])
        self.piped = printed(words) if value in ("|", "|&") else None  # what the next command reads
        return value, moved

    def skip_space(self) -> int:
        """Skips blanks and a comment; returns where the next token starts."""
        match = _SPACE.match(self.text, self.pos)
        if match:
            self.pos = match.end()
        if self.text.startswith("#", self.pos):
            newline = self.text.find("\n", self.pos)
            self.pos = len(self.text) if newline < 0 else newline
        return self.pos

    def arithmetic_end(self, pos: int, after_for: bool = False) -> int | None:
        """Where ``((…))`` at ``pos`` ends, when it is arithmetic rather than nested subshells (as bash decides).

        After ``for`` it always is, semicolons included: ``for ((i = 0; i < 3; i++))``.
        """
        if not self.text.startswith("((", pos):
            return None
        end = self.skip_parens(pos)
        inner = self.text[pos + 2 : end - 2]
        closed = self.text[end - 2 : end] == "))"
        return end if closed and (after_for or (";" not in inner and "\n" not in inner)) else None

    def skip_parens(self, pos: int) -> int:
        """The position after the parenthesis that closes the one at ``pos`` (arithmetic, read as data)."""
        depth = 0
        for match in _PARENS.finditer(self.text, pos):
            depth += 1 if match.group() == "(" else -1
            if depth == 0:
                return match.end()
        raise _Unreadable("open (")

    def token(self, place: _Place) -> tuple[str, str, str]:
        """The next token as (``word``|``redirect``|``operator``, its value, its text); ``operator ""`` at the end."""
        start = self.skip_space()
        text = self.text
        if start >= len(text):
            return "operator", "", ""
        self.limits.tokens += 1
        if self.limits.tokens > _MAX_TOKENS:
            raise _Unreadable("too long")
        if text.startswith(("<(", ">("), start):  # process substitution: a word whose commands run
            self.pos = start + 2
            self.read_list(place.copy(), ")")
            return "word", text[start : self.pos], text[start : self.pos]
        match = _REDIRECT.match(text, start)
        if match:
            self.pos = match.end()
            return "redirect", match.group(), match.group()
        match = _OPERATOR.match(text, start)
        if match:
            self.pos = match.end()
            return "operator", match.group(), match.group()
        value = self.word(place)
        if self.pos == start:  # a character no rule reads (a control character): a blank
            self.pos += 1
            return self.token(place)
        return "word", value, text[start : self.pos]

    def word(self, place: _Place) -> str:
        """One word with its quotes removed; substitutions inside are read as commands and kept as written."""
        text, pos, parts = self.text, self.pos, []
        while pos < len(text):
            match = _PLAIN.match(text, pos)
            if match:
                parts.append(match.group())
                pos = match.end()
                continue
            char = text[pos]
            if char == "'":
                end = text.find("'", pos + 1)
                if end < 0:
                    raise _Unreadable("open '")
                parts.append(text[pos + 1 : end])
                pos = end + 1
            elif char == '"':
                pos = self.double_quoted(pos + 1, parts, place)
            elif char == "\\":
                parts.append(text[pos + 1 : pos + 2].replace("\n", ""))
                pos += 2
            elif char == "$":
                pos = self.dollar(pos, parts, place)
            elif char == "`":
                pos = self.backticks(pos, parts, place)
            else:
                break
        self.pos = pos
        return "".join(parts)

    def double_quoted(self, pos: int, parts: list[str], place: _Place) -> int:
        text = self.text
        while pos < len(text):
            match = _IN_DOUBLE.match(text, pos)
            if match:
                parts.append(match.group())
                pos = match.end()
                continue
            char = text[pos]
            if char == '"':
                return pos + 1
            if char == "\\":
                escaped = text[pos + 1 : pos + 2]
                parts.append(escaped if escaped in '$`"\\' else "" if escaped == "\n" else "\\" + escaped)
                pos += 2
            elif char == "$":
                pos = self.dollar(pos, parts, place)
            else:
                pos = self.backticks(pos, parts, place)
        raise _Unreadable('open "')

    def dollar(self, pos: int, parts: list[str], place: _Place) -> int:
        """``$((…))``, ``$(…)``, ``${…}``, ``$'…'`` or a bare ``$``; kept as written."""
        text = self.text
        arithmetic = self.arithmetic_end(pos + 1)
        if arithmetic is not None:
            end = arithmetic
        elif text.startswith("$(", pos):
            self.pos = pos + 2
            self.read_list(place.copy(), ")")
            end = self.pos
        elif text.startswith("${", pos):
            end = self.skip_braces(pos + 1)
        elif text.startswith("$'", pos):
            match = _ANSI_C.match(text, pos)
            if not match:
                raise _Unreadable("open $'")
            end = match.end()
        else:
            end = pos + 1
        parts.append(text[pos:end])
        return end

    def skip_braces(self, pos: int) -> int:
        depth = 0
        for match in _BRACES.finditer(self.text, pos):
            depth += 1 if match.group() == "{" else -1
            if depth == 0:
                return match.end()
        raise _Unreadable("open {")

    def backticks(self, pos: int, parts: list[str], place: _Place) -> int:
        match = _BACKTICK.match(self.text, pos)
        if not match:
            raise _Unreadable("open `")
        inner = re.sub(r"\\([\\`$])", r"\1", match.group(1))
        self.nested(inner, place.copy())
        parts.append(match.group())
        return match.end()

    def redirect_target(self, operator: str, place: _Place) -> str:
        kind, target, raw = self.token(place)
        if kind != "word":
            raise _Unreadable(f"{operator} without a word")
        if operator.startswith("<<") and operator != "<<<":
            self.heredocs.append(_Heredoc(target, operator == "<<-"))
        return target

    def read_heredocs(self) -> None:
        """After a newline: the bodies of the heredocs begun on the line, data unless a shell reads them."""
        text = self.text
        for heredoc in self.heredocs:
            start = body_end = self.pos
            while self.pos < len(text):
                newline = text.find("\n", self.pos)
                line_end = len(text) if newline < 0 else newline
                line, body_end = text[self.pos : line_end], self.pos
                self.pos = line_end + 1
                if (line.lstrip("\t") if heredoc.strip_tabs else line) == heredoc.delimiter:
                    break
                body_end = self.pos
            if heredoc.shell is not None:
                self.nested(text[start:body_end], heredoc.shell)
            if heredoc.code is not None:  # `python3 <<'EOF'`: code an interpreter reads from its input
                name, args, place, shown = heredoc.code
                self.code(fed_code(name, args, text[start:body_end]), place, shown)
        self.heredocs = []

    def code(self, judged: list[tuple[str, list[str], bool]], place: _Place, shown: str) -> None:
        """Records what code fed to an interpreter may write (``writes.fed_code``), where it runs."""
        for kind, paths, whole in judged:
            self.found += [
                Effect(kind, w, tuple(paths), whole or _unknown(w, paths), shown) for w in (place.cwd, *place.also)
            ]

    def read_input(self, words: list[str], cwd: str) -> None:
        """Commands or code the input feeds, past wrappers: ``timeout 5 bash <<< …``, ``python3 <<EOF``."""
        (redirects, shown), place, name = self.fed, _Place(cwd), posixpath.basename(words[0])
        for heredoc in self.heredocs if name in _SHELLS and any(op.startswith("<<") for op, _ in redirects) else []:
            heredoc.shell = heredoc.shell or place
        for heredoc in self.heredocs[len(self.heredocs) - sum(op in ("<<", "<<-") for op, _ in redirects) :]:
            heredoc.code = (name, words[1:], place, shown)
        for herestring in [target for operator, target in redirects if operator == "<<<"]:
            self.code(fed_code(name, words[1:], herestring), place, shown)
        if (script := _stdin_script(words, redirects, self.piped)) is not None:
            self.nested(script, place)

    def judge(self, words: list[str], redirects: list[tuple[str, str]], place: _Place, segment: str) -> _Place | None:
        """Records the effects of one simple command; returns the place a ``cd`` in it moves to."""
        shown = segment[:WORDS_SHOWN]
        if words[:1] == ["[["]:  # `>` compares strings there
            return None
        for operator, target in redirects:
            if ">" in operator and not _is_duplication(operator, target) and not target.startswith(_NOT_WRITTEN):
                kind = "rewrite" if ">>" in operator or operator == "<>" else "overwrite"
                for where in (place.cwd, *place.also):
                    self.found.append(Effect(kind, where, (target,), _unknown(where, [target]), shown))
        while words and (_ASSIGNMENT.match(words[0]) or words[0] in _PREFIX_WORDS):
            words = words[1:]
        if not words:
            return None
        if words[0] in _NOT_COMMANDS:  # `for x in …`, `[[ … ]]`: no command runs; the body is read on its own
            return None
        if words[0] in ("cd", "pushd", "popd"):
            return place.moved(words)
        if words[0] == "eval":  # read in this shell: a `cd` in it stays
            self.nested(" ".join(words[1:]), place)
            return None
        self.fed = (redirects, shown)
        for where in (place.cwd, *place.also):
            for kind, cwd, paths, whole in _command(words, where, self):
                files = tuple(path for path in paths if not path.startswith(("<(", ">(")))  # `tee >(grep x)`: a pipe
                if files or whole or kind == "commit-staged":  # a plain commit takes what is staged, named nowhere
                    self.found.append(Effect(kind, cwd, files, whole or _unknown(cwd, files), shown))
        return None


def _stdin_script(words: list[str], redirects: list[tuple[str, str]], piped: str | None) -> str | None:
    """The commands a shell reads from its input, when the command line shows them: a here-string, or what
    ``echo``/``printf`` pipes into it. None for a shell given ``-c`` or a script file, or another command."""
    if posixpath.basename(words[0]) not in _SHELLS:
        return None
    options, operands, after = split_options(words[1:], "o", ("--rcfile", "--init-file"))
    if "-c" in options or ([o for o in operands + after if o != "-"] and "-s" not in options):  # `bash -`: stdin
        return None
    herestrings = [target for operator, target in redirects if operator == "<<<"]
    return herestrings[-1] if herestrings else piped


def _unknown(cwd: str, paths: Iterable[str]) -> bool:
    """Whether only the running shell knows where the effect lands (``$f``, ``$(ls)``, ``~``, ``cd $DIR``, ``{}``)."""
    return any(path.startswith("~") or "$" in path or "`" in path or "{}" in path for path in (cwd, *paths))


def _is_duplication(operator: str, target: str) -> bool:
    """``>&2``, ``2>&1``, ``>&-``: a descriptor copied or closed, no file."""
    return operator.endswith("&") and (target.isdigit() or target == "-")


def _command(words: list[str], cwd: str, reader: _Reader) -> Found:
    """The effects of one command's words (assignments and shell keywords already taken off)."""
    name = posixpath.basename(words[0])
    args = words[1:]
    if name in _WRAPPERS:
        return _WRAPPERS[name](args, cwd, reader)
    reader.read_input(words, cwd)
    if name in _SHELLS:
        options, operands, after = split_options(args, "o", ("--rcfile", "--init-file"))
        script = (operands + after)[:1]
        if "-c" in options and script:  # also `-lc`, `-ec`: the first operand is the script
            reader.nested(script[0], _Place(cwd))
        return []
    if name == "git":
        return git(args, cwd)
    if name in WRITERS:
        return [(kind, cwd, paths, whole) for kind, paths, whole in WRITERS[name](args)]
    code = interpreter_code(name, args)
    if code:
        return [(kind, cwd, paths, whole) for kind, paths, whole in code]
    if name == "find":
        return _find(args, cwd, reader)
    if name == "xargs":
        return _xargs(args, cwd, reader)
    return []


def _wrapped(rest: list[str], cwd: str, reader: _Reader) -> Found:
    return _command(rest, cwd, reader) if rest else []


_Run = Callable[[list[str], str, _Reader], Found]


def _after_options(short: str, long: tuple[str, ...] = (), skip: int = 0, chdir: tuple[str, ...] = ()) -> _Run:
    """A wrapper such as ``sudo``: options (``short``/``long`` take a value), ``skip`` operands, then the command.

    ``chdir`` names the options that change the directory the command runs in (``sudo -D``, ``env -C``).
    """

    def run(args: list[str], cwd: str, reader: _Reader) -> Found:
        index = 0
        while index < len(args) and args[index].startswith("-") and args[index] != "-":
            arg = args[index]
            index += 1
            if arg == "--":
                break
            name, has_value, value = arg.partition("=") if arg.startswith("--") else (arg[:2], arg[2:], arg[2:])
            takes = name in long or (not arg.startswith("--") and arg[1:2] in short)
            if takes and not has_value and index < len(args):
                value, index = args[index], index + 1
            if name in chdir and takes:
                cwd = join(cwd, value)
        rest = args[index:]
        while rest and _ASSIGNMENT.match(rest[0]):
            rest = rest[1:]
        return _wrapped(rest[skip:], cwd, reader)

    return run


def _command_builtin(args: list[str], cwd: str, reader: _Reader) -> Found:
    """``command git …`` runs git; ``command -v git`` only looks it up."""
    if any(arg in ("-v", "-V") for arg in args[:2]):
        return []
    return _after_options("")(args, cwd, reader)


def _with_command_option(short: str, long: tuple[str, ...] = (), skip: int | None = 0, letter: str = "c") -> _Run:
    """A wrapper that runs ``-c TEXT`` through a shell, else (after ``skip`` operands; None: nothing) a command:
    ``flock LOCK -c 'git stash'``, ``flock LOCK git stash``, ``su -c …``, ``script -c …``."""

    def run(args: list[str], cwd: str, reader: _Reader) -> Found:
        for index, arg in enumerate(args[:-1]):
            if arg == "--command" or (arg[:1] == "-" and arg[1:2] != "-" and arg.endswith(letter)):  # `-qc`
                reader.nested(args[index + 1], _Place(cwd))
                return []
        return [] if skip is None else _after_options(short, long, skip)(args, cwd, reader)

    return run


def _watch(args: list[str], cwd: str, reader: _Reader) -> Found:
    """``watch git stash``: its words, joined, run by ``sh -c`` again and again."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in ("-n", "--interval", "-q", "--equexit") else 1
    if args[index:]:
        reader.nested(" ".join(args[index:]), _Place(cwd))
    return []


_WRAPPERS = {
    "flock": _with_command_option("wE", ("--timeout", "--wait", "--conflict-exit-code"), skip=1),
    "su": _with_command_option("", skip=None),  # without -c, a login shell: nothing read
    "runuser": _with_command_option("ugG", ("--user", "--group", "--supp-group")),
    "script": _with_command_option("", skip=None),
    "watch": _watch,
    "setsid": _after_options(""),
    "taskset": _after_options("", skip=1),
    "chrt": _after_options("TPD", skip=1),
    "xvfb-run": _after_options("nsfepw", ("--server-num", "--server-args", "--auth-file", "--error-file")),
    "sudo": _after_options("ugCDhprtUTR", ("--user", "--group", "--chdir"), chdir=("-D", "--chdir")),
    "doas": _after_options("uC"),
    "env": _after_options("uCS", ("--unset", "--chdir", "--split-string"), chdir=("-C", "--chdir")),
    "nice": _after_options("n", ("--adjustment",)),
    "nohup": _after_options(""),
    "time": _after_options(""),
    "exec": _after_options("a"),
    "builtin": _after_options(""),
    "command": _command_builtin,
    "stdbuf": _after_options("ioe", ("--input", "--output", "--error")),
    "ionice": _after_options("cnpt", ("--class", "--classdata")),
    "timeout": _after_options("sk", ("--signal", "--kill-after"), skip=1),
    "chronic": _after_options(""),
    "unbuffer": _after_options(""),
}


def _find(args: list[str], cwd: str, reader: _Reader) -> Found:
    """``find DIRS … -delete`` or ``-exec rm {} ;``: what the action does, under each starting directory."""
    starts = []
    for arg in args:
        if arg.startswith("-") or arg in ("(", "!", ")"):
            break
        starts.append(arg)
    found: Found = [("remove", cwd, starts or ["."], False)] if "-delete" in args else []
    for index, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = []
            for word in args[index + 1 :]:
                if word in (";", "+"):
                    break
                inner.append(word)
            found += [(kind, cwd, starts or ["."], False) for kind, _, _, _ in _wrapped(inner, cwd, reader)]
    return found


def _xargs(args: list[str], cwd: str, reader: _Reader) -> Found:
    """``xargs rm``: the command gets names we cannot see, so what it does touches the whole checkout."""
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        index += 1
        if arg[1:2] in "ILnPsdEa" and len(arg) == 2 and not arg.startswith("--"):
            index += 1
    inner = args[index:] + ["…"]
    return [(kind, where, [], True) for kind, where, _, _ in _wrapped(inner, cwd, reader)] if args[index:] else []
