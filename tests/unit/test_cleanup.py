import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from blackboard import cleanup, cli, session
from blackboard.meta import update_meta
from blackboard.paths import PathResolver

DAY = 86400


def _iso(days_ago: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _session(resolver: PathResolver, session_id: str, status: str, days_ago: float) -> None:
    session.start(resolver, session_id, "startup", {})
    if status != "active":
        session.end(resolver, session_id, "other")
    update_meta(
        resolver.meta_path(session_id),
        lambda m: m.update(status=status, ended=_iso(days_ago), last_activity=_iso(days_ago)),
    )


def _ids(candidates) -> list:
    return sorted(c.session_id for c in candidates)


def test_age_and_status_rules(resolver: PathResolver) -> None:
    _session(resolver, "old-ended", "ended", 40)
    _session(resolver, "old-abandoned", "abandoned", 40)
    _session(resolver, "young-ended", "ended", 5)
    _session(resolver, "old-active", "active", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == ["old-abandoned", "old-ended"]


def test_keep_the_newest_n_finished_sessions(resolver: PathResolver) -> None:
    for i in range(6):
        _session(resolver, f"s{i}", "ended", 40 + i)  # s0 is the newest
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=2)
    assert _ids(doomed) == ["s2", "s3", "s4", "s5"]


def test_remove_deletes_sessions_and_their_handoffs_but_not_the_latest(resolver: PathResolver) -> None:
    _session(resolver, "gone", "ended", 40)
    _session(resolver, "kept", "ended", 1)
    latest_before = Path(resolver.latest_handoff_path()).read_text()
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(cleanup.remove(doomed)) == ["gone"]
    assert not os.path.exists(resolver.get_session_blackboard_dir("gone"))
    assert not os.path.exists(resolver.handoff_path("gone"))
    assert os.path.exists(resolver.handoff_path("kept"))
    assert Path(resolver.latest_handoff_path()).read_text() == latest_before
    assert [n for n in os.listdir(resolver.sessions_dir) if n.startswith(".")] == []


def test_a_session_resumed_after_the_plan_is_not_removed(resolver: PathResolver) -> None:
    _session(resolver, "s1", "ended", 40)
    doomed, _ = cleanup.plan([resolver], 30 * DAY, keep=0)
    session.start(resolver, "s1", "resume", {})
    assert cleanup.remove(doomed) == []
    assert os.path.exists(resolver.meta_path("s1"))


def test_symlinks_are_never_followed(resolver: PathResolver, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    _session(resolver, "old", "ended", 40)
    os.symlink(outside, Path(resolver.get_session_blackboard_dir("old")) / "link-out")
    os.symlink(outside / "precious.txt", Path(resolver.get_session_blackboard_dir("old")) / "file-link")
    # a whole session directory that is a symlink to somewhere else
    (outside / "fake").mkdir()
    (outside / "fake" / "_meta.json").write_text(Path(resolver.meta_path("old")).read_text().replace('"old"', '"fake"'))
    os.symlink(outside / "fake", resolver.get_session_blackboard_dir("fake"))
    doomed, skipped = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == ["old"] and any("symlink" in s for s in skipped)
    cleanup.remove(doomed)
    assert (outside / "precious.txt").read_text() == "keep me"
    assert (outside / "fake" / "_meta.json").exists()


def test_corrupt_sessions_are_reported_not_removed(resolver: PathResolver) -> None:
    _session(resolver, "ok", "ended", 40)
    broken = Path(resolver.get_session_blackboard_dir("broken"))
    broken.mkdir()
    (broken / "_meta.json").write_text("{")
    doomed, skipped = cleanup.plan([resolver], 30 * DAY, keep=0)
    assert _ids(doomed) == ["ok"] and any("broken" in s for s in skipped)


@pytest.fixture
def in_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(project)
    return project


def _cli(*args: str, stdin: str = ""):
    result = CliRunner(mix_stderr=False).invoke(cli.cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_cli_dry_run_lists_and_removes_nothing(resolver: PathResolver, in_project: Path) -> None:
    _session(resolver, "old", "ended", 40)
    code, out, _ = _cli("cleanup", "--dry-run", "--keep", "0")
    assert code == 0 and "would remove acme/widget old" in out and "would remove 1 sessions" in out
    assert os.path.exists(resolver.meta_path("old"))
    data = json.loads(_cli("cleanup", "--dry-run", "--keep", "0", "--json")[1])
    assert data["dry_run"] and data["sessions"][0]["session_id"] == "old" and data["bytes"] > 0


def test_cli_without_yes_and_without_a_terminal_only_previews(resolver: PathResolver, in_project: Path) -> None:
    _session(resolver, "old", "ended", 40)
    code, out, err = _cli("cleanup", "--keep", "0")
    assert code == 0 and "would remove" in out and "--yes" in err
    assert os.path.exists(resolver.meta_path("old"))


def test_cli_yes_removes(resolver: PathResolver, in_project: Path) -> None:
    _session(resolver, "old", "ended", 40)
    code, out, _ = _cli("cleanup", "--keep", "0", "--yes")
    assert code == 0 and "removed 1 sessions" in out
    assert not os.path.exists(resolver.get_session_blackboard_dir("old"))


@pytest.mark.parametrize(("age", "expected"), [("30d", []), ("12h", ["old"]), ("2w", [])])
def test_cli_older_than(resolver: PathResolver, in_project: Path, age: str, expected: list) -> None:
    _session(resolver, "old", "ended", 1)
    data = json.loads(_cli("cleanup", "--older-than", age, "--keep", "0", "--dry-run", "--json")[1])
    assert [s["session_id"] for s in data["sessions"]] == expected


def test_cli_bad_age_is_one_line(in_project: Path) -> None:
    code, out, err = _cli("cleanup", "--older-than", "soon")
    assert code == 1 and "is not an age" in err and err.count("\n") == 1


def test_cli_all_projects(resolver: PathResolver, root: Path, in_project: Path) -> None:
    from blackboard.paths import Project

    other = PathResolver(str(root), Project("acme", "gadget", None, "test"))
    _session(resolver, "w-old", "ended", 40)
    _session(other, "g-old", "ended", 40)
    mine = json.loads(_cli("cleanup", "--keep", "0", "--dry-run", "--json")[1])
    every = json.loads(_cli("cleanup", "--keep", "0", "--dry-run", "--json", "--all-projects")[1])
    assert [s["session_id"] for s in mine["sessions"]] == ["w-old"]
    assert sorted(s["session_id"] for s in every["sessions"]) == ["g-old", "w-old"]
