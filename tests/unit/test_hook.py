import pytest

from blackboard.hook import main, read_payload


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b'{"session_id": "a"}', {"session_id": "a"}, id="object"),
        pytest.param(b"", {}, id="empty"),
        pytest.param(b"\xef\xbb\xbf" + b'{"session_id": "a"}', {"session_id": "a"}, id="utf-8-bom"),
        pytest.param('{"session_id": "a"}'.encode("utf-16"), {"session_id": "a"}, id="utf-16-with-bom"),
        pytest.param(b"\xff\xfe", {}, id="a-bare-utf-16-bom-is-empty"),
    ],
)
def test_read_payload(raw: bytes, expected: dict) -> None:
    assert read_payload(raw) == (expected, None)


def test_main_returns_zero_for_an_unknown_event(capsys) -> None:
    assert main(["bogus"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "unknown hook event" in captured.err


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"[1]", id="array"),
        pytest.param(b"nope", id="invalid"),
        pytest.param(b"\xff\xfe\x00garbage", id="binary"),
        pytest.param(b'{"a": "' + b"x" * (2 << 20) + b'"}', id="too-large"),
    ],
)
def test_unreadable_stdin_is_ignored_with_a_word(raw: bytes) -> None:
    payload, problem = read_payload(raw)
    assert payload == {}
    assert problem is not None
    assert "stdin is not the JSON object" in problem
