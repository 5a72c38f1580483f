import os
from pathlib import Path

from blackboard import settings


def test_root_order(tmp_path: Path) -> None:
    assert settings.root({"BLACKBOARD_ROOT": "/a", "MNEMONIC_ROOT": "/b"}) == "/a"
    assert settings.root({"MNEMONIC_ROOT": "/b"}) == "/b"
    assert settings.root({}) == os.path.join(os.path.expanduser("~"), ".claude", "blackboard")
    assert str(tmp_path) in settings.root({})  # the autouse fixture moved HOME
