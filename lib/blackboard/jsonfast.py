"""JSON without importing :mod:`json`, whose import brings in ``re`` and compiles patterns.

``import json`` costs about 10 ms, two thirds of a bare interpreter start, and the SessionStart
hook must stay within 3x of one (docs/adr/0006-dependency-bootstrap.md). CPython's C
accelerator ``_json``, which ``json`` itself calls, parses and escapes strings without any of
that; the rest of encoding is the few lines below. Output and results are the same as
``json.dumps`` and ``json.loads`` for the types used here (tests/unit/test_jsonfast.py). On a
Python without ``_json`` the standard module does the work.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, List, Optional

_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoder:
    """The settings ``_json.make_scanner`` reads, as a default ``json.JSONDecoder`` has them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


try:
    from _json import encode_basestring, encode_basestring_ascii, make_scanner
except ImportError:  # not CPython: fall back to the json module
    _scan = None
else:
    _scan = make_scanner(_Decoder())  # type: ignore[arg-type]  # any object with those attributes


def loads(text: str) -> Any:
    """The value of the JSON document ``text``; ValueError when it is not one."""
    if _scan is None:
        import json

        try:
            return json.loads(text)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"not JSON at character {stop.value}") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except SystemError:
        # CPython 3.10 and 3.11 raise the scanner's errors (an unterminated string, a bad escape)
        # as json.decoder.JSONDecodeError only when json.decoder is already imported; without it
        # they fail this way. Importing it now, on the error path only, keeps the fast path free.
        import json.decoder  # noqa: F401

        raise ValueError(f"not JSON: {text[:40]!r}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def dumps(
    value: Any,
    indent: Optional[int] = None,
    ensure_ascii: bool = True,
    default: Optional[Callable[[Any], Any]] = None,
) -> str:
    """``value`` as JSON text, like ``json.dumps`` with the same arguments."""
    if _scan is None:
        import json

        return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, default=default)
    out: List[str] = []
    quote = encode_basestring_ascii if ensure_ascii else encode_basestring
    _encode(value, out, quote, None if indent is None else " " * indent, 0, default)
    return "".join(out)


def _encode(value: Any, out: List[str], quote: Any, indent: Optional[str], level: int, default: Any) -> None:
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (dict, list, tuple)):
        _container(value, out, quote, indent, level, default)
    elif default is not None:
        _encode(default(value), out, quote, indent, level, default)
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _container(value: Any, out: List[str], quote: Any, indent: Optional[str], level: int, default: Any) -> None:
    is_dict = isinstance(value, dict)
    opening, closing = ("{", "}") if is_dict else ("[", "]")
    if not value:
        out.append(opening + closing)
        return
    if indent is None:
        separator, inner, outer = ", ", "", ""
    else:
        inner = "\n" + indent * (level + 1)
        separator, outer = "," + inner, "\n" + indent * level
    out.append(opening + inner)
    for n, item in enumerate(value.items() if is_dict else value):
        if n:
            out.append(separator)
        if is_dict:
            key, item = item
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            out.append(quote(key) + ": ")
        _encode(item, out, quote, indent, level + 1, default)
    out.append(outer + closing)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)
