"""What a session changed (``changes``) and the commit it started from (``gitinfo.resolve_head``), in real repositories.

The session is the one recorded from Claude Code 2.1.332: its Write, Edit and Bash tool calls are replayed
in a scratch checkout, so the commit it made is the recorded one.
"""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from blackboard import changes
from blackboard.gitinfo import SHA, packed_ref, resolve_head
from helpers import FIXTURES, SCRATCH

REAL_GIT_SECONDS = changes.GIT_SECONDS
STARTED = "2000-01-01T00:00:00Z"  # long before any commit of these tests
IDENTITY = {
    "GIT_AUTHOR_NAME": "Tester",
    "GIT_AUTHOR_EMAIL": "tester@example.invalid",
    "GIT_COMMITTER_NAME": "Tester",
    "GIT_COMMITTER_EMAIL": "tester@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def patient_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machines are shared: a git slowed by load is not what these tests are about (the hang test says so)."""
    monkeypatch.setattr(changes, "GIT_SECONDS", 30.0)


@pytest.fixture
def git_env(isolated_home: Path) -> dict:
    """The environment the tests' own git commands run in."""
    return {**os.environ, **IDENTITY}


@pytest.fixture
def environ(isolated_home: Path) -> dict:
    """What the hook's environment would hand ``since``."""
    return {"PATH": os.environ["PATH"], "HOME": str(isolated_home), "LANG": "C.UTF-8"}


def git(repo: Path, env: dict, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def recorded_tool_calls(scratch: Path) -> list:
    """The recorded PostToolUse payloads, ``/SCRATCH`` standing for ``scratch``."""
    payloads = [json.loads(p.read_text().replace(SCRATCH, str(scratch))) for p in sorted(FIXTURES.glob("*.json"))]
    return [p for p in payloads if p.get("hook_event_name") == "PostToolUse"]


def replay(project: Path, env: dict) -> None:
    """Do in ``project`` what the recorded session's tools did: write util.py, edit it, commit it."""
    for call in recorded_tool_calls(project.parent):
        tool, given = call["tool_name"], call["tool_input"]
        if tool == "Write":
            Path(given["file_path"]).write_text(given["content"])
        elif tool == "Edit":
            path = Path(given["file_path"])
            path.write_text(path.read_text().replace(given["old_string"], given["new_string"]))
        elif tool == "Bash":
            subprocess.run(given["command"], shell=True, cwd=project, env=env, check=True)


@pytest.fixture
def start(project: Path, git_env: dict) -> str:
    """The recorded session's repository as it started (one empty commit, as record.py made it): HEAD's sha."""
    assert project.name == "widget"  # the recording's checkout was /SCRATCH/widget
    git(project, git_env, "commit", "-q", "--allow-empty", "-m", "start")
    head = resolve_head(str(project))
    assert head is not None
    return head


def as_rows(changed: changes.Changes) -> tuple:
    return (changed.commits, changed.more_commits, changed.uncommitted, changed.problem)


# --- the recorded session ------------------------------------------------------------------------------


def test_the_recorded_sessions_commit_is_found_since_its_start(
    project: Path, start: str, git_env: dict, environ: dict
) -> None:
    replay(project, git_env)
    found = changes.since(str(project), start, STARTED, environ)
    ((short, subject),) = found.commits
    assert subject == "Add escape() helper"
    assert git(project, git_env, "rev-parse", "HEAD").startswith(short)
    assert 7 <= len(short) <= 12
    assert (found.more_commits, found.uncommitted, found.problem) == (False, 0, None)


def test_files_left_uncommitted_are_counted(project: Path, start: str, git_env: dict, environ: dict) -> None:
    replay(project, git_env)
    util = project / "util.py"
    util.write_text(util.read_text() + "# quotes next\n")  # modified
    (project / "notes.txt").write_text("untracked\n")
    (project / "R odd name.txt").write_text("untracked, named like a status line\n")
    (project / "line\nbreak.txt").write_text("untracked, with a newline in its name\n")
    (project / "staged.py").write_text("x = 1\n")
    git(project, git_env, "add", "staged.py")  # added
    found = changes.since(str(project), start, STARTED, environ)
    assert [subject for _, subject in found.commits] == ["Add escape() helper"]
    assert (found.uncommitted, found.problem) == (5, None)


def test_nothing_changed_since_the_start(project: Path, start: str, environ: dict) -> None:
    assert as_rows(changes.since(str(project), start, STARTED, environ)) == ([], False, 0, None)


def test_commits_are_newest_first_and_capped(project: Path, start: str, git_env: dict, environ: dict) -> None:
    replay(project, git_env)
    for n in range(changes.MAX_COMMITS + 4):
        git(project, git_env, "commit", "-q", "--allow-empty", "-m", f"commit {n}")
    found = changes.since(str(project), start, STARTED, environ)
    expected = [f"commit {n}" for n in reversed(range(changes.MAX_COMMITS + 4))][: changes.MAX_COMMITS]
    assert [subject for _, subject in found.commits] == expected
    assert found.more_commits is True


def test_exactly_max_commits_is_not_more(project: Path, start: str, git_env: dict, environ: dict) -> None:
    for n in range(changes.MAX_COMMITS):
        git(project, git_env, "commit", "-q", "--allow-empty", "-m", f"commit {n}")
    found = changes.since(str(project), start, STARTED, environ)
    assert (len(found.commits), found.more_commits) == (changes.MAX_COMMITS, False)


def test_without_a_start_commit_the_start_time_is_used(project: Path, git_env: dict, environ: dict) -> None:
    """A session that began in a repository with no commit yet: commits since it started."""
    assert resolve_head(str(project)) is None
    git(
        project,
        {**git_env, "GIT_COMMITTER_DATE": "2020-01-01 00:00:00 +0000"},
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "old",
    )
    replay(project, {**git_env, "GIT_COMMITTER_DATE": "2022-01-01 00:00:00 +0000"})
    found = changes.since(str(project), None, "2021-01-01T00:00:00Z", environ)
    assert [subject for _, subject in found.commits] == ["Add escape() helper"]
    assert (found.uncommitted, found.problem) == (0, None)


def test_a_repository_with_no_commit_at_all_says_only_what_is_uncommitted(project: Path, environ: dict) -> None:
    (project / "draft.py").write_text("x = 1\n")
    assert as_rows(changes.since(str(project), None, STARTED, environ)) == ([], False, 1, None)


def test_a_start_commit_git_does_not_know_is_a_problem(project: Path, start: str, environ: dict) -> None:
    found = changes.since(str(project), "0123456789abcdef" * 2 + "01234567", STARTED, environ)
    assert found.commits == []
    assert found.problem is not None and "git log" in found.problem
    assert found.uncommitted == 0


def test_a_subject_that_is_not_utf_8_or_is_huge_comes_back_as_text(
    project: Path, start: str, tmp_path: Path, git_env: dict, environ: dict
) -> None:
    message = tmp_path / "message"
    message.write_bytes(b"long " * 300_000 + b"\n")
    git(project, git_env, "commit", "-q", "--allow-empty", "-F", str(message))
    message.write_bytes(b"caf\xe9 \xff\xfe latin-1\n")
    git(project, git_env, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", str(message))
    found = changes.since(str(project), start, STARTED, environ)
    assert found.problem is None
    assert all(isinstance(sha, str) and isinstance(subject, str) for sha, subject in found.commits)
    assert found.commits[0][1].startswith("caf")
    assert found.commits[1][1].startswith("long long")


# Once a bug (changes.py, `_uncommitted`, the `renames = ...` line): in `status --porcelain=v1 -z`
# a rename is followed by the path it came from, with no status letters; that entry is taken for a rename of
# its own whenever the old path starts with "R" or "C" (`e[:2].strip().startswith(("R", "C"))`), so
# `git mv README.md docs.md` counts 0 uncommitted files instead of 1 (CHANGELOG.md, Cargo.toml... alike).
@pytest.mark.parametrize("old_name", ["util.py", "README.md", "CHANGELOG.md", "Cargo.toml"])
@pytest.mark.parametrize("also_modified", [False, True], ids=["renamed", "renamed-and-modified"])
def test_a_renamed_file_counts_once(
    project: Path, start: str, git_env: dict, environ: dict, old_name: str, also_modified: bool
) -> None:
    replay(project, git_env)
    if old_name != "util.py":
        git(project, git_env, "mv", "util.py", old_name)
        git(project, git_env, "commit", "-q", "-m", f"Rename to {old_name}")
    git(project, git_env, "mv", old_name, "escape.py")
    if also_modified:
        with (project / "escape.py").open("a") as handle:
            handle.write("# moved\n")
    assert changes.since(str(project), start, STARTED, environ).uncommitted == 1


# --- start values that are no sha never reach git --------------------------------------------------------


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param("--output={marker}", id="output-option"),
        pytest.param("--output={marker} HEAD", id="output-option-and-more"),
        pytest.param("HEAD; rm -rf {marker}", id="shell"),
        pytest.param("$(touch {marker})", id="command-substitution"),
        pytest.param("HEAD", id="a-ref-name"),
        pytest.param("HEAD~1", id="a-revision"),
        pytest.param("-p", id="short-option"),
        pytest.param("{sha}..HEAD", id="a-range"),
        pytest.param("{sha}\n", id="sha-and-newline"),
        pytest.param("{sha} ", id="sha-and-space"),
        pytest.param("{upper}", id="upper-case-sha"),
        pytest.param("{short}", id="short-sha"),
        pytest.param("{sha}0", id="forty-one-digits"),
        pytest.param("", id="empty"),
    ],
)
def test_a_start_that_is_no_sha_is_never_passed_to_git(
    project: Path, start: str, tmp_path: Path, git_env: dict, environ: dict, hostile: str
) -> None:
    replay(project, git_env)
    marker = tmp_path / "created-by-git"
    value = hostile.format(marker=marker, sha=start, upper=start.upper(), short=start[:12])
    found = changes.since(str(project), value, STARTED, environ)
    assert not marker.exists()
    assert as_rows(found) == as_rows(changes.since(str(project), None, STARTED, environ))
    assert [subject for _, subject in found.commits] == ["Add escape() helper", "start"]


@pytest.mark.parametrize("hostile", ["--output={marker}", "-p --output={marker}", "yesterday; touch {marker}"])
def test_a_hostile_start_time_is_never_an_option(
    project: Path, start: str, tmp_path: Path, environ: dict, hostile: str
) -> None:
    marker = tmp_path / "created-by-git"
    found = changes.since(str(project), None, hostile.format(marker=marker), environ)
    assert not marker.exists()
    assert found.uncommitted == 0


# --- hostile repositories: nothing of theirs runs -----------------------------------------------------------


@pytest.fixture
def evil(tmp_path: Path) -> tuple:
    """A script a hostile repository's config names, and the file it leaves when it runs."""
    marker = tmp_path / "evil-ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat >/dev/null 2>&1 </dev/null\nexit 0\n')
    script.chmod(0o755)
    return script, marker


def dirty(project: Path, mark: str) -> None:
    """util.py changed but its size kept, with a new time: git must read it again to tell (refresh the index)."""
    util = project / "util.py"
    text = util.read_text()
    util.write_text(text[:-2] + mark + "\n")
    stamp = time.time() + 100 + ord(mark)
    os.utime(util, (stamp, stamp))


def restamp(project: Path, n: int) -> None:
    """util.py's time changed, its bytes not: git status refreshes its index entry and writes the index back.

    A time in the past, older than the index: a newer one would leave the entry racily clean,
    to be read again on every status, never refreshed.
    """
    stamp = time.time() - 1000 + n
    os.utime(project / "util.py", (stamp, stamp))


def test_the_repositorys_fsmonitor_never_runs(
    project: Path, start: str, git_env: dict, environ: dict, evil: tuple
) -> None:
    script, marker = evil
    replay(project, git_env)
    git(project, git_env, "config", "core.fsmonitor", str(script))
    git(project, git_env, "status", "--porcelain")
    assert marker.exists()  # armed: a plain git status runs it
    marker.unlink()
    found = changes.since(str(project), start, STARTED, environ)
    assert not marker.exists()
    assert (found.uncommitted, found.problem) == (0, None)


def test_a_signature_check_never_runs_the_repositorys_gpg(
    project: Path, start: str, git_env: dict, environ: dict, evil: tuple
) -> None:
    script, marker = evil
    replay(project, git_env)
    tree, parent = git(project, git_env, "rev-parse", "HEAD^{tree}", "HEAD").split()
    signed = (
        f"tree {tree}\nparent {parent}\n"
        "author Tester <tester@example.invalid> 1700000000 +0000\n"
        "committer Tester <tester@example.invalid> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n fake\n -----END PGP SIGNATURE-----\n\nA signed commit\n"
    )
    sha = subprocess.run(
        ["git", "-C", str(project), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=signed,
        env=git_env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    git(project, git_env, "update-ref", "refs/heads/main", sha)
    git(project, git_env, "config", "log.showSignature", "true")
    git(project, git_env, "config", "gpg.program", str(script))
    git(project, git_env, "--no-pager", "log", "-1", "--format=%s")
    assert marker.exists()  # armed: a plain git log runs it
    marker.unlink()
    found = changes.since(str(project), start, STARTED, environ)
    assert not marker.exists()
    assert [subject for _, subject in found.commits] == ["A signed commit", "Add escape() helper"]


HOOKS = ("post-index-change", "post-checkout", "post-commit", "reference-transaction", "fsmonitor-watchman")


@pytest.mark.parametrize("where", ["hooks-folder", "core-hookspath"])
def test_the_repositorys_hooks_never_run(
    project: Path, start: str, tmp_path: Path, git_env: dict, environ: dict, evil: tuple, where: str
) -> None:
    script, marker = evil
    replay(project, git_env)
    folder = project / ".git" / "hooks" if where == "hooks-folder" else tmp_path / "hostile-hooks"
    folder.mkdir(exist_ok=True)
    for name in HOOKS:
        (folder / name).write_text(script.read_text())
        (folder / name).chmod(0o755)
    if where == "core-hookspath":
        git(project, git_env, "config", "core.hooksPath", str(folder))
    dirty(project, "A")
    git(project, git_env, "add", "util.py")  # staged: uncommitted, and the index holds what util.py holds
    restamp(project, 1)
    marker.unlink(missing_ok=True)
    git(project, git_env, "status", "--porcelain")
    assert marker.exists()  # armed: a plain git status that refreshes the index runs post-index-change
    marker.unlink()
    restamp(project, 2)
    found = changes.since(str(project), start, STARTED, environ)
    assert not marker.exists()
    assert (found.uncommitted, found.problem) == (1, None)


@pytest.mark.parametrize(
    ("key", "required"),
    [
        pytest.param("clean", False, id="clean"),
        pytest.param("clean", True, id="clean-required"),
        pytest.param("process", False, id="process"),
    ],
)
def test_the_repositorys_filter_drivers_never_run(
    project: Path, start: str, git_env: dict, environ: dict, evil: tuple, key: str, required: bool
) -> None:
    """`git status` runs the filter a repository's config names on every file whose stat data changed."""
    script, marker = evil
    filter_script = script.with_name("evil-filter.sh")
    filter_script.write_text(f'#!/bin/sh\necho ran >> "{marker}"\n' + ("cat\n" if key == "clean" else "exit 0\n"))
    filter_script.chmod(0o755)
    replay(project, git_env)
    (project / ".gitattributes").write_text("*.py filter=evil\n")
    git(project, git_env, "add", ".gitattributes")
    git(project, git_env, "commit", "-q", "-m", "attributes")
    git(project, git_env, "config", f"filter.evil.{key}", str(filter_script))
    if required:
        git(project, git_env, "config", "filter.evil.required", "true")
    dirty(project, "A")
    subprocess.run(["git", "-C", str(project), "status", "--porcelain"], env=git_env, capture_output=True, timeout=60)
    assert marker.exists()  # armed: a plain git status runs it
    marker.unlink()
    dirty(project, "B")
    found = changes.since(str(project), start, STARTED, environ)
    assert not marker.exists()
    assert (found.uncommitted, found.problem) == (1, None)  # counted, the filter turned off


def test_the_callers_git_variables_are_ignored(
    project: Path, start: str, tmp_path: Path, git_env: dict, environ: dict, evil: tuple
) -> None:
    script, marker = evil
    replay(project, git_env)
    other = tmp_path / "other"
    git(tmp_path, git_env, "init", "-q", "-b", "main", str(other))
    git(other, git_env, "commit", "-q", "--allow-empty", "-m", "another repository's commit")
    trace = tmp_path / "git-trace"
    hostile = {
        **environ,
        "GIT_DIR": str(other / ".git"),
        "GIT_WORK_TREE": str(other),
        "GIT_INDEX_FILE": str(tmp_path / "index"),
        "GIT_TRACE": str(trace),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{script}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": str(script),
        "GIT_EXTERNAL_DIFF": str(script),
        "GIT_PAGER": str(script),
        "PAGER": str(script),
    }
    found = changes.since(str(project), start, STARTED, hostile)
    assert [subject for _, subject in found.commits] == ["Add escape() helper"]
    assert (found.uncommitted, found.problem) == (0, None)
    assert not marker.exists()
    assert not trace.exists()


@pytest.mark.parametrize(
    "name",
    [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "GIT_EXEC_PATH",
        "GIT_TRACE",
        "GIT_PAGER",
        "GIT_EXTERNAL_DIFF",
        "GIT_CEILING_DIRECTORIES",
        "LD_PRELOAD",
        "PAGER",
        "SSH_ASKPASS",
        "EDITOR",
        "PYTHONPATH",
    ],
)
def test_git_environment_drops_what_could_steer_git(name: str) -> None:
    env = changes.git_environment({"PATH": "/usr/bin", "HOME": "/h", name: "/hostile"})
    assert name not in env
    assert "/hostile" not in env.values()


def test_the_persons_own_global_config_is_read_yet_names_no_program_that_runs(
    project: Path, start: str, git_env: dict, environ: dict, tmp_path: Path
) -> None:
    """GIT_CONFIG_GLOBAL and XDG_CONFIG_HOME are kept (a person's global excludes live there), never obeyed blindly."""
    marker = tmp_path / "ran"
    script = tmp_path / "run.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text(f'[core]\n\tfsmonitor = {script}\n[filter "g"]\n\tclean = {script}\n')
    (project / ".gitattributes").write_text("* filter=g\n")
    replay(project, git_env)
    os.utime(project / "util.py", (1, 1))
    found = changes.since(str(project), start, STARTED, {**environ, "GIT_CONFIG_GLOBAL": str(global_config)})
    assert not marker.exists()
    assert found.uncommitted is not None


def test_git_environment_keeps_the_basics_and_never_prompts() -> None:
    given = {"PATH": "/opt/bin:/usr/bin", "HOME": "/h", "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8", "TMPDIR": "/t"}
    env = changes.git_environment({**given, "GIT_TERMINAL_PROMPT": "1", "GIT_OPTIONAL_LOCKS": "1", "USER": "me"})
    expected = {
        "PATH": "/opt/bin:/usr/bin",
        "HOME": "/h",
        "LANG": "de_DE.UTF-8",
        "LC_ALL": "C",
        "TMPDIR": "/t",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }
    assert {name: env.get(name) for name in expected} == expected
    assert "USER" not in env
    assert changes.git_environment({})["PATH"] == os.defpath


# --- broken repositories and a broken git: a problem, never an exception ----------------------------------------


def _fifo_head(project: Path) -> None:
    (project / ".git" / "HEAD").unlink()
    os.mkfifo(project / ".git" / "HEAD")  # git would wait on it: the time limit ends that


def _fifo_dot_git(project: Path) -> None:
    os.rename(project / ".git", project.parent / "moved-git")
    os.mkfifo(project / ".git")


def _garbage_dot_git(project: Path) -> None:
    os.rename(project / ".git", project.parent / "moved-git")
    (project / ".git").write_bytes(b"\xff\xfe garbage\n")


def _dangling_gitdir(project: Path) -> None:
    os.rename(project / ".git", project.parent / "moved-git")
    (project / ".git").write_text("gitdir: /nowhere/at/all\n")


def _no_objects(project: Path) -> None:
    for path in sorted((project / ".git" / "objects").rglob("*"), reverse=True):
        if path.is_dir():
            path.rmdir()
        else:
            path.unlink()


BROKEN = [
    pytest.param(lambda p: (p / ".git" / "HEAD").write_text("garbage\n"), id="head-garbage"),
    pytest.param(lambda p: (p / ".git" / "HEAD").write_bytes(b""), id="head-empty"),
    pytest.param(lambda p: (p / ".git" / "HEAD").write_text("ref: /etc/passwd\n"), id="head-naming-no-ref"),
    pytest.param(_fifo_head, id="head-a-fifo"),
    pytest.param(_fifo_dot_git, id="dot-git-a-fifo"),
    pytest.param(_garbage_dot_git, id="dot-git-garbage"),
    pytest.param(_dangling_gitdir, id="dot-git-pointing-nowhere"),
    pytest.param(_no_objects, id="no-objects"),
    pytest.param(lambda p: (p / ".git" / "index").write_bytes(b"DIRC garbage"), id="index-garbage"),
]


@pytest.mark.parametrize("start_known", [True, False], ids=["with-start", "without-start"])
@pytest.mark.parametrize("breaks", BROKEN)
def test_a_broken_repository_is_a_problem_not_an_exception(
    project: Path, start: str, git_env: dict, environ: dict, monkeypatch: pytest.MonkeyPatch, breaks, start_known: bool
) -> None:
    monkeypatch.setattr(changes, "GIT_SECONDS", REAL_GIT_SECONDS)
    replay(project, git_env)
    breaks(project)
    began = time.monotonic()
    found = changes.since(str(project), start if start_known else None, STARTED, environ)
    assert time.monotonic() - began < 5
    assert found.problem is not None
    assert found.uncommitted is None


# Once a bug (changes.py, `run_git`): git runs with `cwd=toplevel` and nothing stops its search for a
# repository there. When toplevel's `.git` is no valid repository (a HEAD that is garbage, a `.git` FIFO), git
# walks up and answers for the repository around it: the handoff reports the outer repository's uncommitted
# files (here 4: its a.txt, b.txt, c.txt and the checkout) as this session's, with no problem at all when there
# is no start commit. It should pin the repository (--git-dir and --work-tree, or GIT_CEILING_DIRECTORIES).
@pytest.mark.parametrize("start_known", [True, False], ids=["with-start", "without-start"])
def test_a_broken_repository_inside_another_never_reports_the_outer_one(
    tmp_path: Path, git_env: dict, environ: dict, start_known: bool
) -> None:
    outer = tmp_path / "outer"
    git(tmp_path, git_env, "init", "-q", "-b", "main", str(outer))
    for name in ("a.txt", "b.txt", "c.txt"):
        (outer / name).write_text("the outer repository's own work\n")
    project = outer / "widget"
    git(outer, git_env, "init", "-q", "-b", "main", str(project))
    git(project, git_env, "commit", "-q", "--allow-empty", "-m", "start")
    start = resolve_head(str(project))
    replay(project, git_env)
    (project / ".git" / "HEAD").write_text("garbage\n")
    found = changes.since(str(project), start if start_known else None, STARTED, environ)
    assert found.problem is not None
    assert found.uncommitted is None


def test_no_repository_is_a_problem(tmp_path: Path, environ: dict) -> None:
    assert changes.since(None, None, STARTED, environ).problem == "not a git repository"
    gone = changes.since(str(tmp_path / "deleted-checkout"), None, STARTED, environ)
    assert gone.problem is not None
    assert (gone.commits, gone.uncommitted) == ([], None)


def _fake_git(folder: Path, body: str) -> dict:
    folder.mkdir()
    fake = folder / "git"
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(0o755)
    return {"PATH": str(folder), "HOME": os.environ["HOME"]}


def test_git_missing_from_path_is_a_problem(project: Path, start: str, tmp_path: Path) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    found = changes.since(str(project), start, STARTED, {"PATH": str(empty)})
    assert found.problem is not None and "could not run" in found.problem
    assert (found.commits, found.uncommitted) == ([], None)


def test_a_git_that_fails_is_a_problem(project: Path, start: str, tmp_path: Path) -> None:
    found = changes.since(str(project), start, STARTED, _fake_git(tmp_path / "bin", "exit 3"))
    assert found.problem == "git log failed (exit status 3)"
    assert found.uncommitted is None


def test_a_git_that_hangs_costs_at_most_its_time_limit(
    project: Path, start: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "GIT_SECONDS", REAL_GIT_SECONDS)
    environ = _fake_git(tmp_path / "bin", f"exec {shutil.which('sleep')} 60")
    began = time.monotonic()
    found = changes.since(str(project), start, STARTED, environ)
    assert time.monotonic() - began < 5
    assert found.problem is not None and found.problem.startswith("git log took over")
    assert (found.commits, found.uncommitted) == ([], None)


def test_a_git_that_floods_its_output_is_cut(project: Path, start: str, tmp_path: Path) -> None:
    line = "a" * 40 + "\\000" + "subject"
    environ = _fake_git(tmp_path / "bin", f"i=0; while [ $i -lt 20000 ]; do printf '{line}\\n'; i=$((i+1)); done")
    found = changes.since(str(project), start, STARTED, environ)
    assert len(found.commits) == changes.MAX_COMMITS and found.more_commits
    assert found.uncommitted is not None and found.uncommitted <= changes.MAX_OUTPUT


# --- resolve_head: HEAD's sha from .git's files -----------------------------------------------------------------


def test_resolve_head_of_a_repository_without_commits_is_none(project: Path) -> None:
    assert resolve_head(str(project)) is None


def test_resolve_head_reads_a_loose_ref(project: Path, start: str, git_env: dict) -> None:
    assert (project / ".git" / "refs" / "heads" / "main").is_file()
    assert start == git(project, git_env, "rev-parse", "HEAD")
    assert re.fullmatch(SHA, start)


def test_resolve_head_reads_packed_refs(project: Path, start: str, git_env: dict) -> None:
    git(project, git_env, "pack-refs", "--all")
    assert not (project / ".git" / "refs" / "heads" / "main").exists()
    assert resolve_head(str(project)) == start
    replay(project, git_env)  # a new commit: a loose ref again, newer than the packed one
    assert resolve_head(str(project)) == git(project, git_env, "rev-parse", "HEAD") != start


def test_resolve_head_of_a_detached_head(project: Path, start: str, git_env: dict) -> None:
    replay(project, git_env)
    git(project, git_env, "checkout", "-q", "--detach", start)
    assert (project / ".git" / "HEAD").read_text().strip() == start
    assert resolve_head(str(project)) == start


def test_resolve_head_of_a_branch_with_slashes(project: Path, start: str, git_env: dict) -> None:
    git(project, git_env, "checkout", "-q", "-b", "feature/escape-quotes_v2.1+fix")
    replay(project, git_env)
    assert resolve_head(str(project)) == git(project, git_env, "rev-parse", "HEAD") != start


@pytest.mark.parametrize("detached", [False, True], ids=["on-a-branch", "detached"])
@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_resolve_head_of_a_worktree(project: Path, start: str, git_env: dict, detached: bool, packed: bool) -> None:
    worktree = project.parent / "widget-topic"
    git(project, git_env, "worktree", "add", "-q", *(["--detach"] if detached else ["-b", "topic"]), str(worktree))
    assert (worktree / ".git").is_file()
    if packed:
        git(project, git_env, "pack-refs", "--all")
    assert resolve_head(str(worktree)) == start
    git(worktree, git_env, "commit", "-q", "--allow-empty", "-m", "in the worktree")
    assert resolve_head(str(worktree)) == git(worktree, git_env, "rev-parse", "HEAD") != start
    assert resolve_head(str(project)) == start


def test_resolve_head_of_a_sha256_repository(tmp_path: Path, git_env: dict) -> None:
    repo = tmp_path / "sha256"
    git(tmp_path, git_env, "init", "-q", "--object-format=sha256", "-b", "main", str(repo))
    git(repo, git_env, "commit", "-q", "--allow-empty", "-m", "start")
    head = resolve_head(str(repo))
    assert head is not None and len(head) == 64
    assert head == git(repo, git_env, "rev-parse", "HEAD")


PLANTED = "c0ffee" * 6 + "c0ff"  # a sha planted where a traversal would read it


@pytest.mark.parametrize(
    "head",
    [
        pytest.param("ref: refs/heads/../../planted", id="dot-dot-out-of-refs"),
        pytest.param("ref: refs/heads/main/../../../planted", id="dot-dot-after-the-branch"),
        pytest.param("ref: refs/../planted", id="dot-dot-to-the-git-dir"),
        pytest.param("ref: refs/heads/..", id="dot-dot-at-the-end"),
        pytest.param("ref: {git_dir}/planted", id="absolute"),
        pytest.param("ref: planted", id="not-under-refs"),
        pytest.param("ref:refs/heads/main", id="no-space"),
        pytest.param("ref: refs/heads/ma in", id="a-space"),
        pytest.param("ref: refs/heads/main\x00", id="nul"),
        pytest.param("ref: refs/heads/missing", id="a-branch-with-no-commit"),
        pytest.param("garbage", id="garbage"),
        pytest.param("", id="empty"),
        pytest.param(PLANTED.upper(), id="upper-case-sha"),
        pytest.param(PLANTED[:-1], id="thirty-nine-digits"),
        pytest.param(PLANTED + " extra", id="sha-and-more"),
    ],
)
def test_resolve_head_refuses_a_hostile_head(project: Path, start: str, head: str) -> None:
    git_dir = project / ".git"
    (git_dir / "planted").write_text(PLANTED + "\n")
    (git_dir / "refs" / "planted").write_text(PLANTED + "\n")
    (git_dir / "HEAD").write_text(head.format(git_dir=git_dir) + "\n")
    assert resolve_head(str(project)) is None


@pytest.mark.parametrize(
    "breaks",
    [
        pytest.param(_fifo_head, id="head-a-fifo"),
        pytest.param(_fifo_dot_git, id="dot-git-a-fifo"),
        pytest.param(_garbage_dot_git, id="dot-git-garbage"),
        pytest.param(_dangling_gitdir, id="dot-git-pointing-nowhere"),
        pytest.param(lambda p: (p / ".git" / "refs" / "heads" / "main").write_text("garbage\n"), id="ref-garbage"),
        pytest.param(lambda p: _fifo_ref(p), id="ref-a-fifo"),
        pytest.param(lambda p: (p / ".git" / "refs" / "heads" / "main").unlink(), id="ref-missing"),
    ],
)
def test_resolve_head_of_a_broken_repository_is_none_and_never_waits(project: Path, start: str, breaks) -> None:
    breaks(project)
    assert resolve_head(str(project)) is None


def _fifo_ref(project: Path) -> None:
    ref = project / ".git" / "refs" / "heads" / "main"
    ref.unlink()
    os.mkfifo(ref)


def test_packed_ref_reads_only_the_named_ref() -> None:
    sha, other, peeled = "1" * 40, "2" * 40, "3" * 40
    text = (
        "# pack-refs with: peeled fully-peeled sorted \n"
        f"{other} refs/heads/main2\n"
        f"{sha} refs/heads/main\n"
        f"{other} refs/tags/v1\n"
        f"^{peeled}\n"
        f"{'4' * 64} refs/heads/sha256\n"
        f"garbage refs/heads/broken\n"
    )
    assert packed_ref(text, "refs/heads/main") == sha
    assert packed_ref(text, "refs/tags/v1") == other
    assert packed_ref(text, "refs/heads/sha256") == "4" * 64
    assert packed_ref(text, "refs/heads/broken") is None
    assert packed_ref(text, "refs/heads/mai") is None
    assert packed_ref(text, "refs/heads/missing") is None
    assert packed_ref("", "refs/heads/main") is None


# --- git_tracks: which files a repository brought (ADR 24) ------------------------------------------------------


def _ship(project: Path, env: dict, files: dict) -> None:
    """Commit ``files`` ({path in the checkout: text}) as a repository's author would."""
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(project, env, "add", "--", *files)
    git(project, env, "commit", "-q", "-m", "ship")


def _tracks(paths: list, environ: dict, seconds: float = 30.0):
    return changes.git_tracks([str(p) for p in paths], environ, time.monotonic() + seconds)


def test_git_tracks_names_the_tracked_files_and_the_folders_holding_one(
    project: Path, git_env: dict, environ: dict
) -> None:
    board = project / ".blackboard"
    _ship(project, git_env, {".blackboard/handoff/latest-handoff.md": "x\n", ".blackboard/sessions/a/_meta.json": "{}"})
    (board / "handoff" / "handoff-mine.md").write_text("the user's own\n")
    (project / ".gitignore").write_text("ignored.md\n")
    (board / "ignored.md").write_text("ignored, so untracked\n")
    asked = [
        board / "handoff" / "latest-handoff.md",
        board / "sessions" / "a",
        board / "sessions" / "b",
        board / "handoff" / "handoff-mine.md",
        board / "ignored.md",
        board / "no-such-file.md",
    ]
    assert _tracks(asked, environ) == {str(asked[0]), str(asked[1])}
    assert _tracks([board / "sessions"], environ) == {str(board / "sessions")}
    assert _tracks([], environ) == set()


def test_git_tracks_matches_names_ignoring_ascii_case(project: Path, git_env: dict, environ: dict) -> None:
    """A case-insensitive disk opens the repository's `.Blackboard/Handoff/` for our `.blackboard/handoff/`."""
    _ship(project, git_env, {".Blackboard/Handoff/latest-handoff.md": "x\n"})
    asked = project / ".blackboard" / "handoff" / "latest-handoff.md"
    assert _tracks([asked], environ) == {str(asked)}


@pytest.mark.parametrize("name", ["a*.md", "a?c.md", "[a]bc.md", ":(glob)abc.md", "*"])
def test_git_tracks_takes_every_name_literally(project: Path, git_env: dict, environ: dict, name: str) -> None:
    _ship(project, git_env, {"abc.md": "x\n"})
    assert _tracks([project / name], environ) == set()


def test_git_tracks_a_name_with_glob_characters_literally(project: Path, git_env: dict, environ: dict) -> None:
    _ship(project, git_env, {"[x] *.md": "x\n"})
    assert _tracks([project / "[x] *.md"], environ) == {str(project / "[x] *.md")}


def test_git_tracks_outside_any_checkout_is_nothing_and_runs_no_git(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    assert _tracks([folder / "session-notes.md"], {"PATH": str(tmp_path / "no-git-here")}) == set()


@pytest.mark.parametrize(
    "breaks",
    [
        pytest.param(_fifo_dot_git, id="dot-git-a-fifo"),
        pytest.param(_garbage_dot_git, id="dot-git-garbage"),
        pytest.param(_dangling_gitdir, id="dot-git-pointing-nowhere"),
        pytest.param(lambda p: (p / ".git" / "index").write_bytes(b"DIRC garbage"), id="index-garbage"),
    ],
)
def test_git_tracks_cannot_say_in_a_broken_repository(project: Path, git_env: dict, environ: dict, breaks) -> None:
    _ship(project, git_env, {"session-notes.md": "x\n"})
    breaks(project)
    assert _tracks([project / "session-notes.md"], environ) is None


def test_git_tracks_cannot_say_without_git(project: Path, git_env: dict, tmp_path: Path) -> None:
    _ship(project, git_env, {"session-notes.md": "x\n"})
    assert _tracks([project / "session-notes.md"], {"PATH": str(tmp_path / "no-git-here")}) is None


def test_git_tracks_cannot_say_when_git_fails(project: Path, tmp_path: Path) -> None:
    assert _tracks([project / "session-notes.md"], _fake_git(tmp_path / "bin", "exit 128")) is None


def test_git_tracks_cannot_say_past_its_deadline(project: Path, tmp_path: Path) -> None:
    environ = _fake_git(tmp_path / "bin", f"exec {shutil.which('sleep')} 60")
    began = time.monotonic()
    assert _tracks([project / "session-notes.md"], environ, seconds=0.5) is None
    assert time.monotonic() - began < 5


def test_git_tracks_cannot_say_when_the_listing_is_too_long_to_read_whole(project: Path, tmp_path: Path) -> None:
    """Cut, it could leave out the one file that matters: a repository shipping thousands of files says nothing."""
    flood = f"{shutil.which('head')} -c {changes.MAX_OUTPUT + 1} /dev/zero"
    environ = _fake_git(tmp_path / "bin", flood)
    assert _tracks([project / "session-notes.md"], environ) is None


def test_git_tracks_never_runs_the_repositorys_fsmonitor(
    project: Path, git_env: dict, environ: dict, evil: tuple
) -> None:
    script, marker = evil
    _ship(project, git_env, {"session-notes.md": "x\n"})
    git(project, git_env, "config", "core.fsmonitor", str(script))
    git(project, git_env, "ls-files")
    assert marker.exists()  # armed: a plain git ls-files runs it
    marker.unlink()
    assert _tracks([project / "session-notes.md"], environ) == {str(project / "session-notes.md")}
    assert not marker.exists()


@pytest.mark.parametrize("key", ["clean", "smudge", "process"])
def test_git_tracks_never_runs_the_repositorys_filter_drivers(
    project: Path, git_env: dict, environ: dict, evil: tuple, key: str
) -> None:
    script, marker = evil
    _ship(project, git_env, {".gitattributes": "*.md filter=evil\n", "session-notes.md": "x\n"})
    git(project, git_env, "config", f"filter.evil.{key}", str(script))
    notes = project / "session-notes.md"
    notes.write_text("y\n")
    armed = ["checkout", "--", "session-notes.md"] if key == "smudge" else ["status", "--porcelain"]
    subprocess.run(["git", "-C", str(project), *armed], env=git_env, capture_output=True, timeout=60)
    assert marker.exists()  # armed: a plain git status (clean) or checkout (smudge) runs it
    marker.unlink()
    notes.write_text("y\n")
    os.utime(notes, (1, 1))
    assert _tracks([notes, project / "new.md"], environ) == {str(notes)}
    assert not marker.exists()


def test_a_repositorys_own_protocol_settings_never_allow_a_transport(project: Path, git_env: dict) -> None:
    """Issue 32, point 16: `protocol.allow=never` alone loses to a repository's `protocol.ext.allow=always`."""
    for name in ("ext", "fd", "file", "git", "ssh", "http", "https"):
        git(project, git_env, "config", f"protocol.{name}.allow", "always")
    for name in ("ext", "fd", "file", "git", "ssh", "http", "https"):
        command = changes.git_command(["config", "--get", f"protocol.{name}.allow"], [])
        said = subprocess.run(command, cwd=project, env=git_env, capture_output=True, text=True, check=True)
        assert said.stdout.strip() == "never", name


# --- which files are still uncommitted (the holds of live sessions) ------------------------------------------


@pytest.mark.parametrize("many", [False, True], ids=["named-to-git", "past-the-pathspec-bound"])
def test_uncommitted_among_names_changed_staged_and_untracked_files_of_nested_repositories_too(
    project: Path, start: str, git_env: dict, environ: dict, many: bool
) -> None:
    for name in ("kept.py", "changed.py", "staged.py"):
        (project / name).write_text("x = 1\n")
    git(project, git_env, "add", ".")
    git(project, git_env, "commit", "-q", "-m", "files")
    (project / "changed.py").write_text("x = 2\n")
    (project / "staged.py").write_text("x = 3\n")
    git(project, git_env, "add", "staged.py")
    (project / "new dir").mkdir()
    (project / "new dir" / "fresh\nname.py").write_text("new\n")
    nested = project / "vendor" / "hal"
    nested.mkdir(parents=True)
    git(nested, git_env, "init", "-q")
    (nested / "gpio.c").write_text("int x;\n")
    (project / ".gitignore").write_text(".env\n")
    (project / ".env").write_text("TOKEN=x\n")
    asked = ["kept.py", "changed.py", "staged.py", "new dir/fresh\nname.py", "vendor/hal/gpio.c", "gone.py", ".env"]
    asked += [f"never/{n}.py" for n in range(changes.MAX_PATHSPECS if many else 0)]

    found = changes.uncommitted_among(str(project), asked, environ, time.monotonic() + 10)

    expected = {"changed.py", "staged.py", "new dir/fresh\nname.py", "vendor/hal/gpio.c"}
    assert found == expected | (set() if many else {".env"})  # an ignored file is held when it is named


def test_uncommitted_among_gives_none_when_git_cannot_answer(project: Path, environ: dict) -> None:
    (project / ".git" / "HEAD").write_text("not a ref\n")  # git refuses the repository
    assert changes.uncommitted_among(str(project), ["a.py"], environ, time.monotonic() + 10) is None


# --- whose uncommitted files are whose (issue 38, point 5) -------------------------------------------------------


def test_status_paths_names_each_file_once_from_the_top() -> None:
    output = " M src/auth.py\0R  new.md\0old.md\0?? scratch/\0A  a b.txt\0"
    assert changes.status_paths(output) == ["src/auth.py", "new.md", "scratch/", "a b.txt"]


@pytest.mark.parametrize(
    ("own", "others", "theirs"),
    [
        pytest.param(set(), {}, {}, id="no-one-else"),
        pytest.param({"util.py"}, {"a1": {"util.py": 5.0}}, {}, id="its-own-edit-wins"),
        pytest.param(set(), {"a1": {"util.py": 5.0}}, {"a1": ["util.py"]}, id="another-sessions"),
        pytest.param(set(), {"a1": {"util.py": 5.0}, "c3": {"util.py": 9.0}}, {"c3": ["util.py"]}, id="edited-last"),
        pytest.param(set(), {"a1": {"scratch/new.py": 5.0}}, {"a1": ["scratch/"]}, id="a-new-folder"),
        pytest.param(set(), {"a1": {"scratch": 5.0, "util.pyc": 5.0}}, {}, id="no-prefix-match"),
    ],
)
def test_uncommitted_files_are_this_sessions_unless_another_live_session_edited_them(
    own: set, others: dict, theirs: dict
) -> None:
    found = changes.Changes(uncommitted_paths=["util.py", "scratch/", "notes.txt"])
    found.split(own, others)
    assert found.others == theirs
    assert found.uncommitted == 3 - sum(len(paths) for paths in theirs.values())


def test_git_unable_to_tell_leaves_nothing_to_split() -> None:
    found = changes.Changes(problem="git status took over 0.20s")
    found.split(set(), {"a1": {"util.py": 5.0}})
    assert (found.uncommitted, found.others) == (None, {})
