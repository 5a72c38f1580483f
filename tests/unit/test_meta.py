import json
import multiprocessing
import os
from pathlib import Path

import pytest

from blackboard.errors import BlackboardError
from blackboard.meta import SCHEMA_VERSION, new_meta, read_meta, update_meta, write_meta

FIELDS = {
    "schema_version",
    "session_id",
    "project",
    "org",
    "status",
    "started",
    "ended",
    "end_reason",
    "last_activity",
    "cwd",
    "git_branch",
    "parent_session_id",
    "resumed_at",
    "source",
}


def test_new_meta_has_every_field(tmp_path: Path) -> None:
    meta = new_meta("s1", "acme", "widget", "2026-11-22T10:00:00Z", cwd="/w", git_branch="main", source="startup")
    assert set(meta) >= FIELDS
    assert meta["status"] == "active"
    assert meta["resumed_at"] == []
    assert meta["ended"] is None
    path = tmp_path / "_meta.json"
    write_meta(str(path), meta)
    assert json.loads(path.read_text()) == meta
    assert read_meta(str(path)) == meta


def test_unknown_fields_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "_meta.json"
    meta = new_meta("s1", "acme", "widget", "2026-11-22T10:00:00Z")
    meta["added_by_someone_else"] = {"keep": [1, 2]}
    write_meta(str(path), meta)
    update_meta(str(path), lambda m: m.update(status="ended"))
    data = json.loads(path.read_text())
    assert data["added_by_someone_else"] == {"keep": [1, 2]}
    assert data["status"] == "ended"


def test_older_schema_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "_meta.json"
    path.write_text(json.dumps({"session_id": "s0", "project": "p", "org": "o", "started": "2025-01-01T00:00:00Z"}))
    meta = read_meta(str(path))
    assert meta is not None
    assert meta["schema_version"] == SCHEMA_VERSION
    assert meta["status"] == "active"
    assert meta["resumed_at"] == []


def test_newer_schema_is_refused_with_a_fix(tmp_path: Path) -> None:
    path = tmp_path / "_meta.json"
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1, "session_id": "s"}))
    with pytest.raises(BlackboardError, match="update the blackboard plugin"):
        read_meta(str(path))


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("{truncated", id="invalid-json"),
        pytest.param("[1, 2]", id="not-an-object"),
        pytest.param("", id="empty"),
        pytest.param("\xff\xfe", id="bad-utf8"),
    ],
)
def test_corrupt_meta_is_a_clear_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "_meta.json"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(BlackboardError, match="corrupt .*blackboard doctor"):
        read_meta(str(path))


def test_missing_meta_reads_as_none(tmp_path: Path) -> None:
    assert read_meta(str(tmp_path / "nope.json")) is None


@pytest.mark.parametrize("field", ["session_id", "started", "status", "resumed_at"])
def test_write_refuses_bad_metadata_and_keeps_the_old_file(tmp_path: Path, field: str) -> None:
    (tmp_path / "s1").mkdir()
    path = tmp_path / "s1" / "_meta.json"
    good = new_meta("s1", "acme", "widget", "2026-11-22T10:00:00Z")
    write_meta(str(path), good)
    bad = dict(good, **{field: 42})
    with pytest.raises(BlackboardError, match=field):
        write_meta(str(path), bad)
    assert json.loads(path.read_text()) == good
    assert [p.name for p in path.parent.iterdir()] == ["_meta.json"]  # no temp file left behind


def _append_resume(path: str, n: int) -> None:
    for i in range(n):
        update_meta(path, lambda m, i=i: m["resumed_at"].append(f"{os.getpid()}-{i}"))


def test_read_modify_write_loses_nothing_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "_meta.json")
    write_meta(path, new_meta("s1", "acme", "widget", "2026-11-22T10:00:00Z"))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_resume, args=(path, 25)) for _ in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    meta = read_meta(path)
    assert meta is not None
    assert len(meta["resumed_at"]) == 150
    assert len(set(meta["resumed_at"])) == 150
