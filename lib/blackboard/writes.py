"""What a git verb or a write command does to the files it names, read from its arguments (docs/adr/0033).

``git(["checkout", "--", "a.py"], "/repo")`` gives ``[("restore", "/repo", ["a.py"], False)]``. Pure
functions over argument lists, the words of one command after the shell has read them (``shell.py``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_GIT_WHOLE = {"pull": "pull", "rebase": "rebase", "merge": "merge", "cherry-pick": "cherry-pick", "revert": "revert"}
_GIT_WHOLE.update({"am": "am", "switch": "switch"})


def join(cwd: str, path: str) -> str:
    """``cwd`` after ``cd path``; a path starting with ``~`` or a variable is kept as written."""
    if path.startswith(("~", "$")):
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


# What one command does, as (kind, cwd, paths, whole) tuples; what a git verb or a writer does, without the cwd.
Found = list[tuple[str, str, list[str], bool]]
Judged = list[tuple[str, list[str], bool]]
_Options = tuple[dict[str, str], list[str], list[str]]


def printed(words: list[str]) -> str | None:
    """What ``echo`` or ``printf`` (a format with no arguments) prints, its escapes read; None for another command."""
    name = posixpath.basename(words[0]) if words else ""
    args = words[1:]
    if name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0]):
            args = args[1:]
        return " ".join(args).replace("\\n", "\n")
    if name == "printf" and args:
        return "\n".join(args).replace("\\n", "\n")  # a format and its arguments: read as one text, each a line
    return None


def split_options(args: list[str], short: str = "", long: tuple[str, ...] = (), attached: str = "") -> _Options:
    """Splits ``args`` into ({option: value}, operands, operands after ``--``); ``short`` and ``long`` take a value.

    ``attached`` letters take only a value written in the same word (``sed -i.bak``, ``perl -pi``).
    """
    options: dict[str, str] = {}
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            return options, operands, args[index:]
        if arg.startswith("--"):
            name, has_value, value = arg.partition("=")
            if not has_value and name in long and index < len(args):
                value, index = args[index], index + 1
            options[name] = value
        elif arg.startswith("-") and len(arg) > 1:
            for position, letter in enumerate(arg[1:], 2):
                options["-" + letter] = arg[position:]
                if letter in short and position == len(arg) and index < len(args):
                    options["-" + letter], index = args[index], index + 1
                if letter in short or letter in attached:
                    break
        else:
            operands.append(arg)
    return options, operands, []


def git(args: list[str], cwd: str) -> Found:
    """``git [global options] VERB …``: the verbs that touch the working tree or sweep it into a commit."""
    index = 0
    aliases: dict[str, list[str]] = {}
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        index += 1
        name, has_value, value = arg.partition("=")
        if name in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"):
            if not has_value:
                value, index = args[index], index + 1
            if name == "-C" or name == "--work-tree":
                cwd = join(cwd, value)
            key, _, expansion = value.partition("=")
            if name == "-c" and key.lower().startswith("alias.") and not expansion.startswith("!"):
                aliases[key[len("alias.") :]] = expansion.split()
    if index >= len(args):
        return []
    verb, rest = args[index], args[index + 1 :]
    if rest[:1] in (["--help"], ["-h"]):  # `git stash --help` is `git help stash`: a page shown, nothing run
        return []
    if "$" in verb or "`" in verb:  # `git $VERB`, `git "$(…)"`: only the shell knows which verb runs
        return [("unread", cwd, [], True)]
    if verb == "worktree" and rest[:1] == ["remove"]:  # another checkout, and every change in it, goes
        targets = [arg for arg in rest[1:] if not arg.startswith("-")]
        return [("clean", join(cwd, targets[0]), [], True)] if targets else []
    if aliases.get(verb):  # `git -c alias.x=stash x`; aliases of the person's config are not read (no I/O here)
        verb, rest = (aliases[verb] + rest)[0], (aliases[verb] + rest)[1:]
    if verb in _GIT_WHOLE:
        return [(_GIT_WHOLE[verb], cwd, [], True)]
    judge = _GIT_VERBS.get(verb)
    # a pathspec with magic (`:/`, `:(top)`, `:!x`, `:(icase)…`) can reach any file of the checkout
    return (
        [(kind, cwd, paths, whole or any(p.startswith(":") for p in paths)) for kind, paths, whole in judge(rest)]
        if judge
        else []
    )


def _git_stash(rest: list[str]) -> Judged:
    sub = rest[0] if rest and not rest[0].startswith("-") else "push"
    if sub in ("list", "show", "create", "store"):
        return []
    if sub == "branch":
        return [("switch", [], True)]
    if sub != "push":  # save, pop, apply, drop, clear: the files, or the stashes, of every session
        return [("stash", [], True)]
    options, operands, after = split_options(rest[1:] if rest[:1] == ["push"] else rest, "m", ("--message",))
    paths = operands + after
    return [("stash", paths, not paths or "--pathspec-from-file" in options)]


def _git_reset(rest: list[str]) -> Judged:
    """Only the modes that change files: ``--mixed`` (the default) and ``--soft`` keep the working tree."""
    options, _, _ = split_options(rest)
    return [("reset", [], True)] if {"--hard", "--merge", "--keep"} & set(options) else []


def _looks_like_path(word: str) -> bool:
    """A ``checkout`` operand that can only be a path: ``.``, ``./x``, ``../x``, ``/x``, ``:/``, ``*.py``.

    Anything else may be a branch (``release/v1.2``, ``dependabot/npm/lodash-4.17.21``): taken as a switch,
    which touches the whole checkout, so a restore of a path is asked about too.
    """
    return word in (".", "..") or word.startswith(("./", "../", "/", ":")) or any(c in word for c in "*?[")


def _git_checkout(rest: list[str]) -> Judged:
    options, operands, after = split_options(rest, "bB", ("--orphan", "--conflict"))
    if {"-b", "-B", "--orphan", "--detach"} & set(options):
        return [("switch", [], True)]
    if "--pathspec-from-file" in options:
        return [("restore", [], True)]
    if after:
        return [("restore", after, False)]
    if not operands:  # `checkout -f` throws every change away; bare `checkout` only reports
        return [("restore", [], True)] if {"-p", "--patch", "-f", "--force"} & set(options) else []
    if {"-f", "--force", "-m", "--merge"} & set(options) or (len(operands) == 1 and not _looks_like_path(operands[0])):
        return [("switch", [], True)]
    return [("restore", operands, False)]


def _git_restore(rest: list[str]) -> Judged:
    """``--staged`` alone changes the index only: the working tree, and so no one's work, is touched."""
    options, operands, after = split_options(rest, "s", ("--source",))
    if {"-S", "--staged"} & set(options) and not {"-W", "--worktree"} & set(options):
        return []
    paths = operands + after
    if "--pathspec-from-file" in options or (not paths and {"-p", "--patch"} & set(options)):
        return [("restore", [], True)]
    return [("restore", paths, False)] if paths else []


def _git_clean(rest: list[str]) -> Judged:
    """``git clean`` starts from the current directory: without paths, ``.``."""
    options, operands, after = split_options(rest, "e", ("--exclude",))
    if {"-n", "--dry-run"} & set(options):
        return []
    return [("clean", operands + after or ["."], False)]


def _git_add(rest: list[str]) -> Judged:
    """``add -A|-u`` sweep the whole checkout; ``add PATHS`` sweeps what is under them (``.`` is a path)."""
    options, operands, after = split_options(rest, "", ("--chmod",))
    paths = operands + after
    if {"-n", "--dry-run"} & set(options):
        return []
    every = {"-A", "--all", "-u", "--update", "--no-ignore-removal"} & set(options)
    if "--pathspec-from-file" in options or any(path in (":/", ":") for path in paths) or (every and not paths):
        return [("sweep", [], True)]
    return [("sweep", paths, False)] if paths else []


_COMMIT_VALUES: tuple[str, ...] = ("--message", "--file", "--reuse-message", "--reedit-message", "--fixup")
_COMMIT_VALUES += ("--squash", "--author", "--date", "--template", "--cleanup", "--trailer")


def _git_commit(rest: list[str]) -> Judged:
    options, operands, after = split_options(rest, "mFcCt", _COMMIT_VALUES, attached="Su")
    paths = operands + after
    if "--dry-run" in options:
        return []
    if {"-a", "--all"} & set(options):
        return [("sweep", [], True)]
    if "--pathspec-from-file" in options:
        return [("commit-paths", [], True)]
    # with no path, what is staged goes into the commit, another session's staged files included
    return [("commit-paths", paths, False)] if paths else [("commit-staged", [], False)]


def _git_apply(rest: list[str]) -> Judged:
    """The files a patch names are in the patch, not the command: the whole checkout."""
    options = set(split_options(rest, "pC", ("--directory", "--exclude", "--include"))[0])
    reads_only = {"--check", "--stat", "--numstat", "--summary"} & options and "--apply" not in options
    if reads_only or ("--cached" in options and "--index" not in options):
        return []
    return [("rewrite", [], True)]


def _git_rm(rest: list[str]) -> Judged:
    options, operands, after = split_options(rest)
    if {"--cached", "-n", "--dry-run"} & set(options):
        return []
    return [("remove", operands + after, "--pathspec-from-file" in options)]


def _git_mv(rest: list[str]) -> Judged:
    options, operands, after = split_options(rest)
    return [] if {"-n", "--dry-run"} & set(options) else [("move", operands + after, False)]


def _git_bisect(rest: list[str]) -> Judged:
    """Every step of a bisection checks out another commit."""
    return [] if rest[:1] in (["log"], ["view"], ["visualize"], ["terms"], ["help"]) else [("switch", [], True)]


def _git_read_tree(rest: list[str]) -> Judged:
    """``read-tree`` replaces the index (and with ``-u`` the files): what every session staged goes."""
    return [] if {"-n", "--dry-run"} & set(split_options(rest)[0]) else [("reset", [], True)]


def _git_checkout_index(rest: list[str]) -> Judged:
    """``checkout-index -f`` writes the index's version over the files named, or over all with ``-a``."""
    options, operands, after = split_options(rest, "", ("--prefix", "--stage"))
    if not {"-f", "--force"} & set(options):
        return []  # an existing file is left as it is
    every = {"-a", "--all", "--stdin"} & set(options)
    return [("restore", [], True)] if every else [("restore", operands + after, False)]


_REFRESH_ONLY = {"-q", "--refresh", "--really-refresh", "--ignore-missing", "--unmerged", "--ignore-submodules"}


def _git_update_index(rest: list[str]) -> Judged:
    """``update-index`` stages, removes or hides (``--assume-unchanged``, ``--skip-worktree``) the files named:
    hidden, another session's changes would look committed. Without names (``--again``, ``--stdin``), any."""
    options, operands, after = split_options(rest, "", ("--cacheinfo", "--chmod", "--index-version"))
    paths = operands + after
    if not paths and set(options) <= _REFRESH_ONLY:  # the index's record of file times brought up to date
        return []
    if not paths or {"-g", "--again", "--stdin", "--index-info"} & set(options):
        return [("sweep", [], True)]
    return [("sweep", paths, False)]


def _git_moves_head(rest: list[str]) -> Judged:
    """``update-ref HEAD …`` and ``symbolic-ref HEAD refs/heads/x`` move the checkout's HEAD, as a switch does."""
    options, operands, _ = split_options(rest, "m")
    writes = len(operands) >= 2 or "-d" in options or "--delete" in options
    return [("switch", [], True)] if writes and operands[:1] == ["HEAD"] else []


_GIT_VERBS = {
    "stash": _git_stash,
    "reset": _git_reset,
    "checkout": _git_checkout,
    "restore": _git_restore,
    "clean": _git_clean,
    "add": _git_add,
    "commit": _git_commit,
    "apply": _git_apply,
    "rm": _git_rm,
    "mv": _git_mv,
    "bisect": _git_bisect,
    "read-tree": _git_read_tree,
    "checkout-index": _git_checkout_index,
    "update-index": _git_update_index,
    "update-ref": _git_moves_head,
    "symbolic-ref": _git_moves_head,
}


def _remove(args: list[str]) -> Judged:
    options, operands, after = split_options(args)
    paths = operands + after
    return [("remove", paths, False)] if paths else []


def _copy_like(kind: str, short: str, sources_too: bool, needs: str = "") -> Callable[[list[str]], Judged]:
    """``mv``, ``cp``, ``install``, ``ln``: the target (``-t DIR`` or the last operand), and for ``mv`` the sources.

    ``needs`` names options without which the command overwrites nothing (``ln`` replaces a file only with ``-f``).
    """

    def judge(args: list[str]) -> Judged:
        options, operands, after = split_options(args, short, ("--target-directory", "--suffix", "--mode", "--owner"))
        operands += after
        if needs and not any("-" + letter in options for letter in needs) and "--force" not in options:
            return []
        target = options.get("-t") or options.get("--target-directory")
        if target:
            sources, targets = operands, [target]
        elif len(operands) >= 2:
            sources, targets = operands[:-1], operands[-1:]
        elif needs and operands:  # `ln -sf /x/y` makes ./y
            sources, targets = operands, [posixpath.basename(operands[0].rstrip("/"))]
        else:
            return []
        return [(kind, sources + targets if sources_too else targets, False)]

    return judge


def _install(args: list[str]) -> Judged:
    """``install -d`` makes directories; otherwise it copies, as ``cp``."""
    return [] if "-d" in split_options(args, "gmoSt")[0] else _copy_like("overwrite", "gmoSt", sources_too=False)(args)


def _tee(args: list[str]) -> Judged:
    options, operands, after = split_options(args)
    paths = [path for path in operands + after if path != "-" and not path.startswith(NOT_FILES)]
    kind = "rewrite" if {"-a", "--append"} & set(options) else "overwrite"
    return [(kind, paths, False)] if paths else []


def _sed(args: list[str]) -> Judged:
    options, operands, after = split_options(args, "efl", ("--expression", "--file", "--line-length"), attached="i")
    if not {"-i", "--in-place"} & set(options):
        return []
    has_script = {"-e", "-f", "--expression", "--file"} & set(options)
    files = (operands if has_script else operands[1:]) + after
    return [("rewrite", files, False)] if files else []


def _perl(args: list[str]) -> Judged:
    options, operands, after = split_options(args, "eE", (), attached="iIlmMx0dDC")
    if "-i" not in options:
        return inline_code(options.get("-e") or options.get("-E") or "")
    files = (operands if {"-e", "-E"} & set(options) else operands[1:]) + after
    return [("rewrite", files, False)] if files else []


# Code given on an interpreter's command line (`python -c`, `node -e`) that may write: a call that removes,
# moves, copies or writes, or a file opened to write. What it writes is what its string literals name.
# Compiled where code is read: most commands hold none.
# Not a string's `.replace(…)` nor a write to the standard streams: code that only reads a file calls them.
_WRITING_CODE = (
    r"remove|unlink|rmtree|rmdir|rmSync|rename|\bos\s*\.\s*replace|truncate|move|copy"
    r"|(?<!stdout\.)(?<!stderr\.)write"
    r"|(?:open|File)\b[^;\n]*['\"][wa]b?\+?['\"]"
)
_LITERAL = r"'([^'\\\n]{1,300})'" + r'|"([^"\\\n]{1,300})"'
INTERPRETERS = {"node": "e", "nodejs": "e", "ruby": "e", "php": "r", "bun": "e"}  # and python's -c
_PYTHON = re.compile(r"python[0-9.]*|pypy[0-9.]*")
_PYTHON_VALUES = "cWXm"  # python's letters that take a value: `-Bc CODE`, `-cCODE` are read as `-c CODE`


def interpreter_code(name: str, args: list[str]) -> Judged:
    """``python -c CODE``, ``node -e CODE``, ``ruby -e``, ``php -r``: what the code may write (``inline_code``)."""
    if _PYTHON.fullmatch(name):
        return inline_code(split_options(args, _PYTHON_VALUES)[0].get("-c") or "")
    letter = INTERPRETERS.get(name)
    if not letter:
        return []
    options, operands, _ = split_options(args, letter, ("--eval", "--print"))
    code = options.get(f"-{letter}") or options.get("--eval") or options.get("--print")
    if not code and letter == "e" and "-p" in options and operands:  # `node -p CODE` prints what CODE gives
        code = operands[0]
    return inline_code(code or "")


def fed_code(name: str, args: list[str], fed: str) -> Judged:
    """What the code an interpreter reads from its input (``fed``: a heredoc, a here-string) may write; nothing
    for a command that reads no code there."""
    return inline_code(fed) if code_from_stdin(name, args) else []


def code_from_stdin(name: str, args: list[str]) -> bool:
    """Whether an interpreter reads its code from its input: ``python3 <<EOF``, ``node - <<EOF``; not a
    script file's run, ``-m``, nor code given with ``-c``/``-e``."""
    if _PYTHON.fullmatch(name):
        options, operands, after = split_options(args, _PYTHON_VALUES)
        return not {"-c", "-m"} & set(options) and all(operand == "-" for operand in operands + after)
    letter = "e" if name == "perl" else INTERPRETERS.get(name)
    if not letter:
        return False
    options, operands, after = split_options(args, letter, ("--eval", "--print"))
    code_given = {f"-{letter}", "-E", "-p", "--eval", "--print"} & set(options)
    return not code_given and all(operand == "-" for operand in operands + after)


def inline_code(code: str) -> Judged:
    """The files code on a command line names in its string literals, when it may write (``_WRITING_CODE``)."""
    if not re.search(_WRITING_CODE, code):
        return []
    named = [a or b for a, b in re.findall(_LITERAL, code)]
    paths = [path for path in named if path.strip() and not any(char.isspace() for char in path)]
    return [("rewrite", paths, False)] if paths else []


def _truncate(args: list[str]) -> Judged:
    options, operands, after = split_options(args, "sr", ("--size", "--reference"))
    paths = operands + after
    return [("rewrite", paths, False)] if paths else []


def _patch(args: list[str]) -> Judged:
    """``patch FILE [PATCH]`` rewrites FILE; without one, the files the patch names: the whole checkout."""
    options, operands, after = split_options(args, "pFiorBDVYzdg", ("--input", "--output", "--directory", "--strip"))
    if "--dry-run" in options:
        return []
    output = options.get("-o") or options.get("--output")
    if output:
        return [("overwrite", [output], False)]
    files = (operands + after)[:1]
    return [("rewrite", files, not files)]


def _dd(args: list[str]) -> Judged:
    targets = [arg[3:] for arg in args if arg.startswith("of=") and not arg[3:].startswith(NOT_FILES)]
    return [("overwrite", targets, False)] if targets else []


def _rsync(args: list[str]) -> Judged:
    """``rsync … DEST``: what is under the destination (a file, or a folder and all in it) may be replaced."""
    _, operands, after = split_options(args, "eBfT", ("--rsh", "--filter", "--exclude", "--include", "--temp-dir"))
    operands += after
    local = [path for path in operands[-1:] if ":" not in path.split("/")[0]]  # `host:dir` is another machine
    return [("overwrite", local, False)] if len(operands) >= 2 and local else []


def _tar(args: list[str]) -> Judged:
    """``tar x``: the archive's files land under ``-C DIR`` (else here), over what is there."""
    first = args[0] if args and not args[0].startswith("-") else ""  # `tar xzf a.tgz`: old-style letters
    options, _, _ = split_options(args[1:] if first else args, "fCbHIKLNTVX", ("--directory", "--file"))
    if "x" not in first and not {"-x", "--extract", "--get"} & set(options):
        return []
    return [("overwrite", [options.get("-C") or options.get("--directory") or "."], False)]


def _unzip(args: list[str]) -> Judged:
    """``unzip A.zip``: its files land under ``-d DIR`` (else here); ``-l``, ``-t``, ``-v``, ``-Z`` only list."""
    options, _, _ = split_options(args, "dx")
    if {"-l", "-t", "-v", "-Z", "-p", "-c", "-z"} & set(options):
        return []
    return [("overwrite", [options.get("-d") or "."], False)]


WRITERS = {
    "rm": _remove,
    "rmdir": _remove,
    "unlink": _remove,
    "shred": _remove,
    "mv": _copy_like("move", "tS", sources_too=True),
    "cp": _copy_like("overwrite", "tS", sources_too=False),
    "install": _install,
    "ln": _copy_like("overwrite", "tS", sources_too=False, needs="f"),
    "tee": _tee,
    "sed": _sed,
    "perl": _perl,
    "truncate": _truncate,
    "patch": _patch,
    "dd": _dd,
    "rsync": _rsync,
    "tar": _tar,
    "unzip": _unzip,
}
