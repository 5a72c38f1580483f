"""filelock is imported where a lock is taken (ADR 26): the hooks after every turn, and a
SessionStart that finds nothing new on the sync remote, take none and never pay for it."""

import json
import os
import shutil
import subprocess
from pathlib import Path

from helpers import FIXTURES, REPO, end_payload, hook_argv, start_payload

# added to the copied environment's filelock/__init__.py: who imported it, as one line
RECORD = (
    "import os as _os, sys as _sys\n"
    "if 'BLACKBOARD_TEST_IMPORTS' in _os.environ:\n"
    "    with open(_os.environ['BLACKBOARD_TEST_IMPORTS'], 'a') as _f:\n"
    "        _f.write(' '.join(_sys.argv[1:]) + '\\n')\n"
)


def _recording_venv(hook_venv: Path, tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    shutil.copytree(hook_venv, venv, symlinks=True)
    (init,) = venv.glob("lib/python*/site-packages/filelock/__init__.py")
    init.write_text(init.read_text() + "\n" + RECORD)
    return venv


def _recorded(name: str, project: Path, session_id: str) -> dict:
    payload = json.loads((FIXTURES / name).read_text().replace("/SCRATCH/widget", str(project)))
    return {**payload, "session_id": session_id}


def test_the_hooks_after_every_turn_and_a_quiet_sync_start_never_import_filelock(
    hook_venv: Path, tmp_path: Path, project: Path, root: Path, isolated_home: Path
) -> None:
    venv, imports = _recording_venv(hook_venv, tmp_path), tmp_path / "imports.txt"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")},
        "CLAUDE_PLUGIN_ROOT": str(REPO),
        "BLACKBOARD_VENV": str(venv),
        "BLACKBOARD_ROOT": str(root),
        "BLACKBOARD_TEST_IMPORTS": str(imports),
        "HOME": str(isolated_home),
    }

    def hook(event: str, payload: dict) -> None:
        done = subprocess.run(hook_argv(event), input=json.dumps(payload).encode(), env=env, timeout=60)
        assert done.returncode == 0

    def blackboard(*args: str) -> None:
        subprocess.run([str(REPO / "bin" / "blackboard"), *args], cwd=project, env=env, check=True, timeout=120)

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "set-url", "origin", f"file://{remote}"], check=True)
    hook("SessionStart", start_payload("s0", project))
    hook("SessionEnd", end_payload("s0", project))  # writes: it takes locks, and may import filelock
    blackboard("sync", "enable", "--yes")
    blackboard("sync")  # the remote holds s0, and this machine knows it
    imports.write_text("")

    hook("SessionStart", start_payload("s1", project))  # the remote has nothing new
    hook("SessionStart", start_payload("s2", project))  # another session, live in the same checkout
    for name in ("01-UserPromptSubmit.json", "03-PostToolUse.json", "10-Stop.json"):
        event = name.split("-", 1)[1][: -len(".json")]
        hook(event, _recorded(name, project, "s1"))
    edit = {**_recorded("03-PostToolUse.json", project, "s2"), "hook_event_name": "PreToolUse"}
    hook("PreToolUse", edit)  # whose file is it: s1 edited it (ADR 29)
    hook("UserPromptSubmit", _recorded("01-UserPromptSubmit.json", project, "s2"))  # did the branch move

    quiet = [line for line in imports.read_text().splitlines() if line != "sync"]  # the detached round locks
    hook("SessionEnd", end_payload("s1", project))
    ending = [line for line in imports.read_text().splitlines() if line != "sync"]

    assert quiet == []
    assert ending == ["session-end"]  # a hook that takes a lock does import it: the record works
