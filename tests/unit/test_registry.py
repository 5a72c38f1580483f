import os
from pathlib import Path

from blackboard.paths import PathResolver
from blackboard.registry import list_sessions


def _write_meta(resolver: PathResolver, session_id: str, started: str, status: str = "active") -> None:
    from blackboard.meta import new_meta, write_meta

    directory = resolver.get_session_blackboard_dir(session_id)
    os.makedirs(directory)
    meta = new_meta(session_id, "acme", "widget", started)
    meta["status"] = status
    write_meta(os.path.join(directory, "_meta.json"), meta)


def test_list_sessions_newest_first_and_tolerant_of_corrupt_meta(resolver: PathResolver) -> None:
    _write_meta(resolver, "old", "2026-01-01T00:00:00Z", "ended")
    _write_meta(resolver, "new", "2026-03-01T00:00:00Z")
    _write_meta(resolver, "mid", "2026-02-01T00:00:00Z", "ended")
    broken = Path(resolver.get_session_blackboard_dir("broken"))
    broken.mkdir()
    (broken / "_meta.json").write_text("{not json")

    listed = list_sessions(resolver)
    assert [e.session_id for e in listed if e.meta] == ["new", "mid", "old"]
    (bad,) = [e for e in listed if e.meta is None]
    assert bad.session_id == "broken"
    assert "corrupt" in (bad.error or "")
    assert [e.session_id for e in list_sessions(resolver, status="ended")] == ["mid", "old"]


def test_list_sessions_of_an_empty_project(resolver: PathResolver) -> None:
    assert list_sessions(resolver) == []
