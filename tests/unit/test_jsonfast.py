"""jsonfast gives what the json module gives, without importing it."""

import datetime
import json
import math
import subprocess
import sys
from typing import Any

import pytest

from blackboard import jsonfast
from helpers import REPO

VALUES = [
    pytest.param({}, id="empty-object"),
    pytest.param([], id="empty-array"),
    pytest.param("", id="empty-string"),
    pytest.param({"session_id": "abc", "cwd": "/w/p", "source": "startup"}, id="hook-payload"),
    pytest.param({"nested": {"list": [1, 2.5, -3, True, False, None, {"k": []}]}}, id="nested"),
    pytest.param({"unicode": 'é ☃ 𝄞 \u2028 \x00 \x1f "quoted" back\\slash\n'}, id="escapes"),
    pytest.param({"big": 2**80, "neg": -(2**70), "small": 1e-300, "exp": 6.02e23, "third": 1 / 3}, id="numbers"),
    pytest.param(["a", ("t", "u")], id="tuple"),
    pytest.param({"resumed_at": [], "status": "ended", "ended": None, "n": 0}, id="meta"),
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_dumps_matches_json(value: Any, indent: Any, ensure_ascii: bool) -> None:
    assert jsonfast.dumps(value, indent=indent, ensure_ascii=ensure_ascii) == json.dumps(
        value, indent=indent, ensure_ascii=ensure_ascii
    )


@pytest.mark.parametrize("value", VALUES)
def test_loads_round_trips(value: Any) -> None:
    text = json.dumps(value, indent=2)
    assert jsonfast.loads(text) == json.loads(text)
    assert jsonfast.loads(f" \n\t{text}\r\n ") == json.loads(text)


def test_special_floats_match_json() -> None:
    values = [math.inf, -math.inf]
    assert jsonfast.dumps(values) == json.dumps(values) == "[Infinity, -Infinity]"
    assert jsonfast.dumps(math.nan) == "NaN"
    assert math.isnan(jsonfast.loads("NaN")) and jsonfast.loads("[-Infinity]") == [-math.inf]


def test_default_converts_what_json_cannot() -> None:
    when = datetime.date(2026, 11, 22)
    assert jsonfast.dumps(when, default=str) == json.dumps(when, default=str) == '"2026-11-22"'
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonfast.dumps({"when": when})
    with pytest.raises(TypeError, match="keys must be str"):
        jsonfast.dumps({1: "x"})


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("   ", id="blank"),
        pytest.param("{not json", id="invalid"),
        pytest.param('{"a": 1} trailing', id="extra-data"),
        pytest.param('{"a": 1}{"b": 2}', id="two-documents"),
        pytest.param('"unterminated', id="unterminated-string"),
        pytest.param('"bad \\x escape"', id="bad-escape"),
        pytest.param('"raw \n newline"', id="control-character"),
        pytest.param("\ufeff{}", id="byte-order-mark"),
        pytest.param("[" * 200_000 + "]" * 200_000, id="nested-too-deep"),
    ],
)
def test_invalid_documents_raise_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        jsonfast.loads(text)


def test_importing_it_imports_neither_json_nor_re() -> None:
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from blackboard import jsonfast; "
        "jsonfast.loads(jsonfast.dumps({'a': [1, 'b']}, indent=2)); "
        "print(sorted({'json', 're'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(REPO / "lib")], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_without_the_accelerator_the_json_module_does_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonfast, "_scan", None)
    value = {"a": [1, "é"], "b": None}
    assert jsonfast.dumps(value, indent=2, ensure_ascii=False) == json.dumps(value, indent=2, ensure_ascii=False)
    assert jsonfast.loads('{"a": [1, "\\u00e9"]}') == {"a": [1, "é"]}
    with pytest.raises(ValueError):
        jsonfast.loads("[" * 200_000)


def test_invalid_strings_raise_value_error_before_json_is_imported() -> None:
    """CPython 3.10-3.11's scanner needs json.decoder loaded to report these; a hook has not loaded it."""
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from blackboard import jsonfast\n"
        'for text in [\'"unterminated\', \'"bad \\\\x escape"\', \'{"a": "raw \\n newline"}\']:\n'
        "    try: jsonfast.loads(text)\n"
        "    except ValueError: print('ValueError')\n"
    )
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(REPO / "lib")], capture_output=True, text=True)
    assert out.stdout.split() == ["ValueError"] * 3, out.stderr
