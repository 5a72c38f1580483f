import pytest

from blackboard.hook import main, read_payload


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(b'{"session_id": "a"}', {"session_id": "a"}, id="object"),
        pytest.param(b"", {}, id="empty"),
        pytest.param(b"[1]", {}, id="array"),
        pytest.param(b"nope", {}, id="invalid"),
        pytest.param(b"\xff\xfe", {}, id="binary"),
        pytest.param(b'{"a": "' + b"x" * (2 << 20) + b'"}', {}, id="too-large"),
    ],
)
def test_read_payload(raw: bytes, expected: dict) -> None:
    assert read_payload(raw) == expected


def test_main_returns_zero_for_an_unknown_event(capsys) -> None:
    assert main(["bogus"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert "unknown hook event" in captured.err
