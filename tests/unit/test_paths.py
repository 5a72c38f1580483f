from pathlib import Path

import pytest

from blackboard.errors import BlackboardError
from blackboard.paths import PathResolver


def test_resolver_paths(resolver: PathResolver, root: Path) -> None:
    board = root / "acme" / "widget" / ".blackboard"
    assert resolver.get_session_blackboard_dir("abc") == str(board / "sessions" / "abc")
    assert resolver.get_handoff_dir() == str(board / "handoff")
    assert resolver.get_legacy_dir() == str(board / "_legacy")
    assert resolver.latest_handoff_path() == str(board / "handoff" / "latest-handoff.md")


@pytest.mark.parametrize("bad", ["..", "../x", "/etc", "a/b", "", "x" * 10_000, "a\x00b"])
def test_resolver_refuses_hostile_ids(resolver: PathResolver, bad: str) -> None:
    with pytest.raises(BlackboardError):
        resolver.get_session_blackboard_dir(bad)
