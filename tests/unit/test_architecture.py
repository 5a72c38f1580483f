"""The module map of docs/architecture.md holds: no module imports one from a higher layer."""

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib" / "blackboard"

# Lowest first. A module may import modules of its own layer or of lower ones, never higher.
LAYERS = [
    {"errors", "environment", "clock", "fsutil", "secret_shapes", "redact", "writes", "shell"},
    {"settings", "ids", "approve", "gitstore", "locks"},
    {"gitinfo", "project", "mnemonic", "digest", "claude_tasks", "ledger"},
    {"paths", "changes", "transcript"},
    {"meta"},
    {"entries", "registry", "render", "handoff", "machines"},
    {"summary", "live", "holds"},
    {"session", "recovery", "migrate", "context", "board", "sync", "branch", "guard", "claims", "who"},
    {"cleanup", "doctor", "failures"},
    {"hook", "events", "cli", "__main__"},
]
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}
# The one import upward, made inside the method: mnemonic's ADR-011 puts the session listing on
# PathResolver (``list_session_blackboards``), and it delegates to the registry's.
UPWARD = {("paths", "registry")}


def _module(path: Path) -> str:
    """A file's module as the layers name it: ``sync`` for every file of the sync package."""
    return path.relative_to(LIB).parts[0].removesuffix(".py")


def _imports(path: Path) -> set:
    """The blackboard modules a file imports, at its top or inside functions (a package's own files excepted)."""
    depth = len(path.relative_to(LIB).parts)  # 1 for lib/blackboard/x.py, 2 for lib/blackboard/sync/x.py
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == depth:  # relative to the blackboard package
            found.update([node.module.split(".")[0]] if node.module else [alias.name for alias in node.names])
        elif (node.module or "").startswith("blackboard"):
            parts = (node.module or "").split(".")
            found.update(parts[1:2] or [alias.name for alias in node.names])
    return found - {_module(path)}


def _sources() -> list:
    return sorted(p for p in LIB.rglob("*.py") if p.name != "__init__.py" or p.parent != LIB)


def test_every_module_has_a_layer() -> None:
    assert {_module(path) for path in _sources()} == set(LAYER_OF)


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(LIB)))
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    module = _module(path)
    higher = {name for name in _imports(path) if LAYER_OF.get(name, -1) > LAYER_OF[module]}
    higher -= {name for lower, name in UPWARD if lower == module}
    assert higher == set(), f"{module} (layer {LAYER_OF[module]}) imports {higher}"


def test_no_library_module_is_over_700_lines() -> None:
    lengths = {str(p.relative_to(LIB)): len(p.read_text().splitlines()) for p in _sources()}
    assert {name: n for name, n in lengths.items() if n > 700} == {}


# The two entry points, which build the run's ``Settings`` from the process's environment (ADR 28).
READS_THE_ENVIRONMENT = {"hook.py", "cli/__init__.py"}
ENVIRONMENT_NAMES = {"environ", "environb", "getenv", "putenv", "expanduser", "expandvars"}
STARTS_A_PROCESS = {"run", "Popen", "call", "check_call", "check_output"}


def _environment_reads(path: Path) -> list:
    """Where a file reads the process's environment, or starts a process that inherits it (no ``env=``).

    ``os.environ``, ``os.getenv``, ``os.path.expanduser`` and ``expandvars`` (they read ``HOME``
    and the rest), and the same names imported from ``os`` or ``os.path``; ``subprocess`` calls
    without ``env=``. In ``settings.py``, ``expand_user`` may leave ``~user`` to the system.
    """
    found = []
    tree = ast.parse(path.read_text())
    allowed = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef) and function.name == "expand_user" and path.name == "settings.py"
        for node in ast.walk(function)
    }
    for node in ast.walk(tree):
        if id(node) in allowed:
            continue
        if isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT_NAMES:
            of_os = isinstance(node.value, ast.Name) and node.value.id == "os"
            if of_os or node.attr.startswith("expand"):  # ``settings.environ`` is the run's own copy
                found.append(f"{node.attr} at line {node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "os.path"):
            found += [f"{a.name} at line {node.lineno}" for a in node.names if a.name in ENVIRONMENT_NAMES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STARTS_A_PROCESS:
            of_subprocess = isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess"
            if of_subprocess and not any(keyword.arg == "env" for keyword in node.keywords):
                found.append(f"subprocess.{node.func.attr} without env= at line {node.lineno}")
    return found


def _every_source() -> list:
    return sorted(LIB.rglob("*.py"))


@pytest.mark.parametrize("path", _every_source(), ids=lambda p: str(p.relative_to(LIB)))
def test_only_the_entry_points_read_the_environment(path: Path) -> None:
    """Settings are read once, where the plugin starts, and passed down: no module reads them behind its caller."""
    name = str(path.relative_to(LIB))
    reads = _environment_reads(path)
    if name in READS_THE_ENVIRONMENT:
        assert reads, f"{name} builds the run's settings from os.environ"
    else:
        assert not reads, f"{name} reads the environment itself: take settings from the caller instead"


@pytest.mark.parametrize(
    "source",
    [
        "from os import environ",
        "from os.path import expanduser",
        "import os\nos.path.expandvars('$HOME')",
        "import os\nos.getenv('X')",
        "import subprocess\nsubprocess.run(['git'])",
    ],
)
def test_the_environment_check_sees_each_way_in(tmp_path: Path, source: str) -> None:
    (tmp_path / "m.py").write_text(source + "\n")
    assert _environment_reads(tmp_path / "m.py")
