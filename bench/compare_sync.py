"""`python bench/compare_sync.py REV`: this checkout's sync round against revision REV's, in one run.

A change to sync is "unchanged or better" when its round, measured in turns with the same
round of an older revision and a plain `git fetch` of the same increment, is no slower. As
in `make bench`: machine A pushes 10 000 ended sessions, B (this checkout) and C (REV)
import them; then, each turn, A pushes 10 more and B's round, C's round and the plain fetch
take them, in rotating order. Rounds run as the hooks start them (`launch.py sync`).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # noqa: E402


def main(revision: str) -> None:
    venv = Path(os.environ.get("BLACKBOARD_VENV", bench.REPO / ".cache" / "bench-venv"))
    subprocess.run(
        [sys.executable, str(bench.REPO / "hooks" / "bootstrap.py"), str(venv), str(bench.REPO / "requirements.txt")],
        check=True,
    )
    python = str(venv / "bin" / "python")
    work = Path(tempfile.mkdtemp(prefix="blackboard-compare-"))
    try:
        older = work / "older"
        older.mkdir()
        archive = subprocess.run(["git", "-C", str(bench.REPO), "archive", revision], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(older)], input=archive.stdout, check=True)
        compare(python, older, revision, work, dict(os.environ, BLACKBOARD_VENV=str(venv)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compare(python: str, older: Path, revision: str, work: Path, env: dict[str, str]) -> None:
    remote = work / "sync-remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    url = f"file://{remote}"
    env.pop("CLAUDE_CONFIG_DIR", None)
    plugins = {"A": bench.REPO, "B": bench.REPO, "C": older}
    machines = {name: bench.machine(work, f"bench-{name.lower()}", url, env) for name in plugins}
    env_a, clone_a = machines["A"]
    resolver_a = bench.PathResolver(env_a["BLACKBOARD_ROOT"], bench.identify_project(str(clone_a)))
    bench.fill(resolver_a, 10_000, host="bench-a")
    for name, (machine_env, clone) in machines.items():  # A pushes 10 000 sessions, B and C import them
        blackboard = [str(plugins[name] / "bin" / "blackboard")]
        try:
            bench.run_cli(blackboard, machine_env, clone, "sync", "enable", "--yes")
        except RuntimeError:  # a revision from before `sync enable` asked
            bench.run_cli(blackboard, machine_env, clone, "sync", "enable")
        bench.run_cli(blackboard, machine_env, clone, "sync")
    project = json.dumps({"org": resolver_a.project.org, "project": resolver_a.project.name})
    ref = f"+refs/blackboard/{resolver_a.project.org}/{resolver_a.project.name}:refs/fetched"
    mirror = work / "sync-mirror.git"
    subprocess.run(["git", "init", "-q", "--bare", str(mirror)], check=True)
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
        subprocess.run(["git", f"--git-dir={mirror}", "config", key, value], check=True)
    fetch = ["git", f"--git-dir={mirror}", "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", url, ref]
    bench.run_bounded(fetch, work, machines["B"][0], bench.SYNC_SETUP_SECONDS)
    steps = [
        ("this checkout", [python, "-I", str(bench.REPO / "hooks" / "launch.py"), "sync"], *machines["B"]),
        (revision, [python, "-I", str(older / "hooks" / "launch.py"), "sync"], *machines["C"]),
        ("git fetch", fetch, machines["B"][0], work),
    ]
    times: dict[str, list[float]] = {step[0]: [] for step in steps}
    a_cli = [str(bench.REPO / "bin" / "blackboard")]
    for i in range(2 * bench.SYNC_ROUNDS):
        bench.fill(resolver_a, 10, start=10_000 + 10 * i, host="bench-a")
        bench.run_cli(a_cli, env_a, clone_a, "sync")
        os.sync()
        for name, argv, machine_env, cwd in steps[i % 3 :] + steps[: i % 3]:
            stdin = project if name != "git fetch" else ""
            times[name].append(bench.run_bounded(argv, cwd, machine_env, 60, stdin))
    expected = 10_000 + 10 * 2 * bench.SYNC_ROUNDS
    for name in ("B", "C"):
        board = Path(bench.sync_board(machines[name][0], machines[name][1]))
        held = len(os.listdir(board / "sessions"))
        if held != expected:
            print(f"      machine {name} holds {held} sessions, not {expected}", flush=True)
    fetched = statistics.median(times["git fetch"])
    for name in ("this checkout", revision):
        ours = statistics.median(times[name])
        print(f"{name:<14} round {ours * 1000:.0f} / git fetch {fetched * 1000:.0f} ms = {ours / fetched:.2f}x")
    ratio = statistics.median(times["this checkout"]) / statistics.median(times[revision])
    print(f"this checkout / {revision}: {ratio:.2f}x (medians of {2 * bench.SYNC_ROUNDS} interleaved rounds)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python bench/compare_sync.py REVISION   (e.g. a commit before a change to sync)")
    main(sys.argv[1])
