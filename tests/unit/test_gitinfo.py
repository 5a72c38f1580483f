import os
import subprocess
from pathlib import Path

import pytest

from blackboard.gitinfo import checkout_around, common_git_dir, find_git, parse_config, worktree_checkouts
from helpers import make_git_project

GIT_IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


def test_parse_config_sections_quotes_and_comments() -> None:
    config = """
[core]
    bare = false
# a comment
[remote "origin"]
    URL = "git@github.com:acme/widget.git" ; trailing comment
    fetch = +refs/heads/*:refs/remotes/origin/*
[remote "upstream"]
    url = https://github.com/other/widget.git
"""
    values = parse_config(config)
    assert values['remote "origin".url'] == "git@github.com:acme/widget.git"
    assert values['remote "upstream".url'] == "https://github.com/other/widget.git"
    assert values["core.bare"] == "false"


def test_gitdir_file_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real-git-dir"
    real.mkdir()
    (real / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/sub.git\n')
    (real / "HEAD").write_text("ref: refs/heads/topic\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {real}\n")
    found = find_git(str(checkout))
    assert found is not None
    assert (found.toplevel, found.origin_url, found.branch) == (str(checkout), "git@github.com:acme/sub.git", "topic")


def test_detached_head_and_no_repository(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / ".git" / "HEAD").write_text("3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\n")
    found = find_git(str(tmp_path / "repo"))
    assert found is not None
    assert found.branch == "detached@3f9a2c1"
    assert found.origin_url is None
    (tmp_path / "plain").mkdir()
    assert find_git(str(tmp_path / "plain")) is None


def _with_worktree(tmp_path: Path) -> tuple[Path, Path]:
    """``widget`` without a remote, one commit, and its worktree ``widget-review``, made by git."""
    repo = make_git_project(tmp_path / "widget", remote=None)
    subprocess.run(["git", "-C", str(repo), *GIT_IDENTITY, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    review = tmp_path / "widget-review"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(review)], check=True, capture_output=True)
    return repo, review


def test_every_checkout_worktree_and_link_of_a_repository_has_one_common_dir(tmp_path: Path) -> None:
    repo, review = _with_worktree(tmp_path)
    (tmp_path / "current").symlink_to(repo)
    (tmp_path / "current-review").symlink_to(review)
    expected = os.path.realpath(repo / ".git")
    for checkout in (repo, review, tmp_path / "current", tmp_path / "current-review"):
        assert common_git_dir(str(checkout)) == expected, checkout


def test_a_submodules_gitdir_pointer_leads_to_its_own_repository(tmp_path: Path) -> None:
    """An absorbed submodule: ``vendor/hal/.git`` says ``gitdir: ../../.git/modules/hal``."""
    repo = make_git_project(tmp_path / "widget", remote=None)
    (repo / ".git" / "modules").mkdir()
    os.rename(make_git_project(tmp_path / "hal", remote=None) / ".git", repo / ".git" / "modules" / "hal")
    (repo / "vendor" / "hal").mkdir(parents=True)
    (repo / "vendor" / "hal" / ".git").write_text("gitdir: ../../.git/modules/hal\n")
    assert common_git_dir(str(repo / "vendor" / "hal")) == os.path.realpath(repo / ".git" / "modules" / "hal")


@pytest.mark.parametrize(
    ("dot_git", "commondir"),
    [
        pytest.param("gitdir: /nonexistent/anywhere\n", None, id="gitdir-to-nowhere"),
        pytest.param("gitdir: {tmp}\n", None, id="gitdir-to-a-plain-folder"),
        pytest.param("gitdir: {tmp}/loop\n", None, id="gitdir-to-a-link-loop"),
        pytest.param("gitdir: {tmp}/real\x00/x\n", None, id="gitdir-with-a-nul"),
        pytest.param("gitdir: " + "a/" * 5000 + "\n", None, id="gitdir-very-deep"),
        pytest.param("gitdir: {tmp}/real\n", "", id="commondir-empty"),
        pytest.param("gitdir: {tmp}/real\n", "../nowhere\n../..\n", id="commondir-two-lines"),
        pytest.param("gitdir: {tmp}/real\n", "\x00\x01garbage\xff", id="commondir-garbage"),
        pytest.param("gitdir: {tmp}/real\n", "x" * (2 * 1024 * 1024), id="commondir-huge"),
        pytest.param("gitdir: {tmp}/real\n", "{tmp}/loop", id="commondir-a-link-loop"),
        pytest.param("gitdir: {tmp}/real\n", "..", id="commondir-no-repository"),
    ],
)
def test_hostile_git_metadata_leads_to_no_repository(tmp_path: Path, dot_git: str, commondir: str) -> None:
    """A ``.git`` file or a ``commondir`` can say anything: the answer is None, quickly, never an error."""
    real = tmp_path / "real"
    (real / "refs").mkdir(parents=True)
    (real / "HEAD").write_text("ref: refs/heads/main\n")  # a git dir's HEAD, but no objects: not a repository
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    if commondir is not None:
        (real / "objects").mkdir()
        (real / "commondir").write_bytes(commondir.format(tmp=tmp_path).encode("utf-8", "surrogateescape"))
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(dot_git.format(tmp=tmp_path))
    assert common_git_dir(str(checkout)) is None
    assert checkout_around(str(checkout)) == (str(checkout), True)  # what others ask of `.git` is unchanged


@pytest.mark.parametrize("kind", ["fifo", "folder", "link-loop"])
def test_a_commondir_that_is_no_file_leads_to_no_repository(tmp_path: Path, kind: str) -> None:
    repo = make_git_project(tmp_path / "widget", remote=None)
    commondir = repo / ".git" / "commondir"
    if kind == "fifo":
        os.mkfifo(commondir)  # reading it would block the hook forever
    elif kind == "folder":
        commondir.mkdir()
    else:
        commondir.symlink_to(commondir)
    assert common_git_dir(str(repo)) is None


def test_a_repository_without_a_dot_git_has_no_common_dir(tmp_path: Path) -> None:
    assert common_git_dir(str(tmp_path)) is None
    (tmp_path / ".git").write_bytes(b"\xff" * 100)
    assert common_git_dir(str(tmp_path)) is None


def test_a_repository_lists_its_worktrees(tmp_path: Path) -> None:
    repo, review = _with_worktree(tmp_path)
    assert worktree_checkouts(str(repo / ".git")) == [str(review)]
    assert worktree_checkouts(str(review / ".git")) == []  # a worktree's .git file is no common dir


def test_a_repositorys_list_of_worktrees_is_bounded_and_hostile_lines_are_passed_over(tmp_path: Path) -> None:
    worktrees = tmp_path / "common" / "worktrees"
    lines = {
        "relative": "../wt/.git\n",
        "not-a-dot-git": f"{tmp_path}/wt/config\n",
        "empty": "",
        "huge": "/" + "x" * (2 * 1024 * 1024),
        "good": f"{tmp_path}/wt/.git\n",
    }
    for name, line in lines.items():
        (worktrees / name).mkdir(parents=True)
        (worktrees / name / "gitdir").write_text(line)
    (worktrees / "fifo").mkdir()
    os.mkfifo(worktrees / "fifo" / "gitdir")
    assert worktree_checkouts(str(tmp_path / "common")) == [f"{tmp_path}/wt"]
    for n in range(300):
        (worktrees / f"w{n}").mkdir()
        (worktrees / f"w{n}" / "gitdir").write_text(f"/src/w{n}/.git\n")
    assert len(worktree_checkouts(str(tmp_path / "common"))) <= 256
