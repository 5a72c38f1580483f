from pathlib import Path

from blackboard.gitinfo import find_git, parse_config


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
