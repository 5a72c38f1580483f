"""The module map of docs/architecture.md holds: no module imports one from a higher layer."""

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib" / "blackboard"

# Lowest first. A module may import modules of its own layer or of lower ones, never higher.
LAYERS = [
    {"errors", "environment", "clock", "fsutil", "redact"},
    {"settings", "ids", "approve", "gitstore", "locks"},
    {"gitinfo", "project", "mnemonic", "digest", "claude_tasks", "ledger"},
    {"paths", "changes", "transcript"},
    {"meta"},
    {"entries", "registry", "render", "handoff"},
    {"summary"},
    {"session", "recovery", "migrate", "context", "board", "sync"},
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


def _environment_reads(path: Path) -> list:
    """Where a file reads the process's environment: ``os.environ``, ``os.getenv``, ``os.path.expanduser``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        of_os = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
        if of_os and node.attr in ("environ", "environb", "getenv") or getattr(node, "attr", "") == "expanduser":
            found.append(f"{node.attr} at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(LIB)))
def test_only_the_entry_points_read_the_environment(path: Path) -> None:
    """Settings are read once, where the plugin starts, and passed down: no module reads them behind its caller."""
    name = str(path.relative_to(LIB))
    reads = _environment_reads(path)
    if name in READS_THE_ENVIRONMENT:
        assert reads, f"{name} builds the run's settings from os.environ"
    elif name == "settings.py":  # builds from the environment it is handed; ``~user`` is the system's to expand
        assert all("expanduser" in read for read in reads), reads
    else:
        assert not reads, f"{name} reads the environment itself: take settings from the caller instead"
