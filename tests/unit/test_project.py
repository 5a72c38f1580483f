import os
import subprocess
import zlib
from pathlib import Path

import pytest

from blackboard.project import former_local_name, former_name, identify_project, parse_remote, safe_segment
from helpers import make_git_project

GIT_IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("git@github.com:acme/widget.git", ("acme", "widget"), id="scp-like"),
        pytest.param("https://user@github.com/acme/widget.git", ("acme", "widget"), id="https-with-user"),
        pytest.param("https://github.com/acme/widget", ("acme", "widget"), id="https-no-suffix"),
        pytest.param("https://GitHub.com/acme/widget", ("acme", "widget"), id="host-case-ignored"),
        pytest.param("ssh://git@ssh.github.com:443/acme/widget.git", ("acme", "widget"), id="github-ssh-over-443"),
        pytest.param("https://www.github.com/acme/widget", ("acme", "widget"), id="github-www"),
        pytest.param("ssh://git@host:2222/acme/widget", ("host+acme", "widget"), id="ssh-with-port"),
        pytest.param("ssh://git@host:2222/acme/widget.git/", ("host+acme", "widget"), id="trailing-slash"),
        pytest.param("https://gitlab.com/a/b/widget.git", ("gitlab.com+a+b", "widget"), id="nested-groups-https"),
        pytest.param("gitlab.com/a/b/widget", ("gitlab.com+a+b", "widget"), id="nested-groups-no-scheme"),
        pytest.param("git@gitlab.com:a/b/c/widget.git", ("gitlab.com+a+b+c", "widget"), id="nested-groups-scp"),
        pytest.param("https://github.com/acme/digit", ("acme", "digit"), id="git-is-a-suffix-not-characters"),
        pytest.param("https://github.com/acme/widget.github.io.git", ("acme", "widget.github.io"), id="dots-kept"),
        pytest.param("https://dev.azure.com/org/proj/_git/repo", ("dev.azure.com+org+proj", "repo"), id="azure-devops"),
        pytest.param("https://evil.example/../../etc/passwd", ("evil.example+etc", "passwd"), id="dot-dot-dropped"),
        pytest.param("https://host/a b/wid get.git", ("host+a_b", "wid_get"), id="spaces-sanitised"),
        pytest.param("https://u:p@[::1]:8080/acme/widget", ("_1+acme", "widget"), id="ipv6-host"),
    ],
)
def test_parse_remote(url: str, expected: tuple) -> None:
    assert parse_remote(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/widget.git",
        "https://github.com/acme/widget",
        "https://gitlab.com/acme/widget.git",
        "git@bitbucket.org:acme/widget.git",
        "/srv/mirrors/acme/widget.git",
        "file:///srv/mirrors/acme/widget.git",
    ],
)
def test_hosts_never_share_a_board(url: str) -> None:
    """One ``acme/widget`` on GitHub, GitLab, Bitbucket and a mirror path: the same name only within a host."""
    others = {
        "github": parse_remote("git@github.com:acme/widget.git"),
        "gitlab": parse_remote("https://gitlab.com/acme/widget.git"),
        "bitbucket": parse_remote("git@bitbucket.org:acme/widget.git"),
        "mirror": parse_remote("/srv/mirrors/acme/widget.git"),
    }
    assert len(set(others.values())) == 4
    assert parse_remote(url) in others.values()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("/srv/git/widget.git", "/srv/git/widget.git", id="local-path"),
        pytest.param("file:///srv/git/widget.git", "/srv/git/widget.git", id="file-url"),
        pytest.param("../widget", "../widget", id="relative-path"),
    ],
)
def test_a_path_remote_is_named_after_the_path(url: str, expected: str) -> None:
    assert parse_remote(url) == ("local", f"widget-{zlib.crc32(expected.encode()):08x}")


@pytest.mark.parametrize(
    ("url", "former"),
    [
        pytest.param("git@github.com:acme/widget.git", None, id="github-kept"),
        pytest.param("https://gitlab.com/a/b/widget.git", ("a+b", "widget"), id="gitlab"),
        pytest.param("ssh://git@host:2222/acme/widget", ("acme", "widget"), id="ssh-port"),
        pytest.param("/srv/git/widget.git", ("git", "widget"), id="local-path"),
        pytest.param("", None, id="nothing"),
    ],
)
def test_former_name(url: str, former: tuple) -> None:
    assert former_name(url) == former


@pytest.mark.parametrize("url", ["", "git@github.com:", "https://github.com/", "git@github.com:acme/.git"])
def test_parse_remote_without_a_repository(url: str) -> None:
    assert parse_remote(url) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("widget", "widget"), ("..", "_"), ("a/b", "a_b"), (".hidden", "hidden"), ("", "_"), ("x\x00y", "x_y")],
)
def test_safe_segment(text: str, expected: str) -> None:
    assert safe_segment(text) == expected


def test_safe_segment_bounds_length_and_keeps_long_names_apart() -> None:
    a, b = safe_segment("x" * 300 + "a"), safe_segment("x" * 300 + "b")
    assert len(a) <= 80
    assert a != b


def test_identify_git_project_with_remote(project: Path) -> None:
    found = identify_project(str(project))
    assert (found.org, found.name, found.git_branch) == ("acme", "widget", "main")


def test_identify_from_a_subdirectory(project: Path) -> None:
    (project / "src" / "deep").mkdir(parents=True)
    assert identify_project(str(project / "src" / "deep")).name == "widget"


def test_identify_worktree(project: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", "-C", str(project), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(project), "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt")], check=True, env=env
    )
    found = identify_project(str(tmp_path / "wt"))
    assert (found.org, found.name, found.git_branch) == ("acme", "widget", "feature")


def test_two_unrelated_folders_with_one_name_never_share_a_board(tmp_path: Path) -> None:
    (tmp_path / "one" / "app").mkdir(parents=True)
    (tmp_path / "two" / "app").mkdir(parents=True)
    first, second = identify_project(str(tmp_path / "one" / "app")), identify_project(str(tmp_path / "two" / "app"))
    assert first.org == second.org == "local"
    assert first.name.startswith("app-")
    assert second.name.startswith("app-")
    assert first.name != second.name
    assert identify_project(str(tmp_path / "one" / "app")) == first  # stable


def test_git_repository_without_remote_is_local(tmp_path: Path) -> None:
    repo = make_git_project(tmp_path / "norem", remote=None)
    found = identify_project(str(repo))
    assert found.org == "local"
    assert found.name.startswith("norem-")
    assert found.git_branch == "main"


TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param(f"https://github.com/acme/widget.git#{TOKEN}", ("acme", "widget"), id="token-fragment"),
        pytest.param(f"https://x:{TOKEN}@github.com/acme/widget.git", ("acme", "widget"), id="token-as-password"),
        pytest.param(f"https://github.com/acme/{TOKEN}.git", ("acme", "_REDACTED_"), id="token-as-name"),
        pytest.param(f"https://{TOKEN}@gitlab.com/acme/widget.git", ("gitlab.com+acme", "widget"), id="token-as-user"),
    ],
)
def test_a_token_in_a_remote_never_becomes_a_folder_name(url: str, expected: tuple) -> None:
    assert parse_remote(url) == expected


def test_a_folder_named_like_a_token_keeps_its_name(tmp_path: Path) -> None:
    folder = tmp_path / "xoxb-slack-notifier-service"
    folder.mkdir()
    assert identify_project(str(folder)).name.startswith("xoxb-slack-notifier-service-")


def test_where_shows_a_remote_without_its_user_and_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import run_cli

    repo = make_git_project(tmp_path / "w", remote="https://alice:s3cretPassw0rd@git.example.com/acme/widget.git")
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("where")
    assert code == 0
    assert "s3cretPassw0rd" not in out
    assert "https://[REDACTED]@git.example.com" in out  # the user part of a remote is never shown


# --- one project, every way in (issue 37, points 5 and 6; docs/adr/0031-one-project-every-way-in.md) -------------


def _git(*args: str) -> None:
    subprocess.run(["git", *GIT_IDENTITY, *args], check=True, capture_output=True)


def _widget_and_review(tmp_path: Path) -> tuple[Path, Path]:
    """``git init``, a commit, ``git worktree add ../widget-review``: no origin remote."""
    repo = make_git_project(tmp_path / "widget", remote=None)
    _git("-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x")
    _git("-C", str(repo), "worktree", "add", "-q", "-b", "review", str(tmp_path / "widget-review"))
    return repo, tmp_path / "widget-review"


def test_every_worktree_of_a_repository_without_a_remote_is_one_project(tmp_path: Path) -> None:
    repo, review = _widget_and_review(tmp_path)
    main, other = identify_project(str(repo)), identify_project(str(review / "src"))
    assert (other.org, other.name) == (main.org, main.name)
    assert main.name == f"widget-{zlib.crc32(str(repo.resolve()).encode()):08x}"
    assert (main.git_branch, other.git_branch) == ("main", "review")
    assert (main.toplevel, other.toplevel) == (str(repo), str(review))  # each its own checkout still


def test_a_main_checkout_keeps_the_board_it_had(tmp_path: Path) -> None:
    """No board moves for the usual case: the repository's own folder, reached as it is."""
    repo = make_git_project(tmp_path / "widget", remote=None)
    assert identify_project(str(repo)).name == former_local_name(str(repo))


def test_a_link_to_a_repository_without_a_remote_is_the_same_project(tmp_path: Path) -> None:
    repo, review = _widget_and_review(tmp_path)
    (tmp_path / "current").symlink_to(repo)
    (tmp_path / "current-review").symlink_to(review)
    expected = identify_project(str(repo))
    for way_in in ("current", "current-review", "current/src"):
        found = identify_project(str(tmp_path / way_in))
        assert (found.org, found.name) == (expected.org, expected.name), way_in
        assert found.name.startswith("widget-")


def test_a_folder_outside_git_reached_through_a_link_is_named_after_the_real_folder(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "current").symlink_to(tmp_path / "notes")
    real, linked = identify_project(str(tmp_path / "notes")), identify_project(str(tmp_path / "current"))
    assert linked == real
    assert linked.name == f"notes-{zlib.crc32(str((tmp_path / 'notes').resolve()).encode()):08x}"
    assert linked.name == former_local_name(str(tmp_path / "notes"))  # unchanged for the folder itself


def test_a_bare_repository_and_its_worktrees_are_named_after_it(tmp_path: Path) -> None:
    bare = tmp_path / "widget.git"
    _git("init", "-q", "--bare", "--template=", "-b", "main", str(bare))
    scratch = make_git_project(tmp_path / "scratch", remote=str(bare))
    _git("-C", str(scratch), "commit", "-q", "--allow-empty", "-m", "x")
    _git("-C", str(scratch), "push", "-q", str(bare), "main")
    _git("-C", str(bare), "worktree", "add", "-q", str(tmp_path / "one"), "main")
    _git("-C", str(bare), "worktree", "add", "-q", "-b", "two", str(tmp_path / "two"))
    one, two = identify_project(str(tmp_path / "one")), identify_project(str(tmp_path / "two"))
    assert one == two
    assert one.name == f"widget-{zlib.crc32(str(bare.resolve()).encode()):08x}"


@pytest.mark.parametrize(
    "dot_git",
    [
        pytest.param("gitdir: /nonexistent/anywhere\n", id="gitdir-to-nowhere"),
        pytest.param("gitdir: {tmp}\n", id="gitdir-to-a-plain-folder"),
        pytest.param("gitdir: {tmp}/loop\n", id="gitdir-to-a-link-loop"),
        pytest.param("gitdir: {tmp}/repo/.git\n\x00garbage" + "x" * 2_000_000, id="huge-garbage"),
    ],
)
def test_a_dot_git_leading_nowhere_falls_back_on_the_folders_real_path(tmp_path: Path, dot_git: str) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(dot_git.format(tmp=tmp_path))
    (tmp_path / "via").symlink_to(checkout)
    found = identify_project(str(tmp_path / "via"))
    assert found.org == "local"
    assert found.name == f"checkout-{zlib.crc32(str(checkout.resolve()).encode()):08x}"
    assert "leads to no repository" in found.reason


def test_a_commondir_of_garbage_falls_back_on_the_checkouts_real_path(tmp_path: Path) -> None:
    _, review = _widget_and_review(tmp_path)
    git_dir = Path((review / ".git").read_text().split(":", 1)[1].strip())
    (git_dir / "commondir").write_bytes(b"\x00\xff" * 1000 + b"\n../..\n")
    found = identify_project(str(review))
    assert found.name == f"widget-review-{zlib.crc32(str(review.resolve()).encode()):08x}"


def test_where_explains_a_shared_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers import run_cli

    repo, review = _widget_and_review(tmp_path)
    monkeypatch.chdir(review)
    code, out, _ = run_cli("where")
    assert code == 0
    assert f"project       widget-{zlib.crc32(str(repo.resolve()).encode()):08x}" in out
    assert f"the repository {repo.resolve() / '.git'}, shared by every checkout, worktree and link of it" in out
