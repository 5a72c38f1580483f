"""The module map of docs/architecture.md holds: no module imports one from a higher layer."""

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib" / "blackboard"

# Lowest first. A module may import modules of its own layer or of lower ones, never higher.
LAYERS = [
    {"errors", "environment", "clock", "fsutil", "redact"},
    {"settings", "ids", "approve", "gitstore"},
    {"gitinfo", "project", "mnemonic", "digest", "claude_tasks", "ledger"},
    {"paths", "changes", "transcript"},
    {"meta"},
    {"entries", "registry", "render", "handoff"},
    {"summary"},
    {"session", "recovery", "migrate", "context", "board", "sync"},
    {"cleanup", "doctor", "failures"},
    {"hook", "cli", "__main__"},
]
LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}
# The one import upward, made inside the method: mnemonic's ADR-011 puts the session listing on
# PathResolver (``list_session_blackboards``), and it delegates to the registry's.
UPWARD = {("paths", "registry")}


def _imports(path: Path) -> set:
    """The blackboard modules a file imports, at its top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 1:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("blackboard"):
            parts = (node.module or "").split(".")
            found.update(parts[1:2] or [alias.name for alias in node.names])
    return found


def test_every_module_has_a_layer() -> None:
    modules = {path.stem for path in LIB.glob("*.py")} - {"__init__"}
    assert modules == set(LAYER_OF)


@pytest.mark.parametrize("path", sorted(LIB.glob("*.py")), ids=lambda p: p.stem)
def test_no_module_imports_a_higher_layer(path: Path) -> None:
    if path.stem == "__init__":
        return
    higher = {name for name in _imports(path) if LAYER_OF.get(name, -1) > LAYER_OF[path.stem]}
    higher -= {name for module, name in UPWARD if module == path.stem}
    assert higher == set(), f"{path.stem} (layer {LAYER_OF[path.stem]}) imports {higher}"
