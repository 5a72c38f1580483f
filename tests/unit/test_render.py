"""Text made safe inside the plugin's own lines (``render``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from blackboard import render
from blackboard.redact import redact


@given(st.text(max_size=200), st.integers(min_value=2, max_value=300))
def test_quoted_writes_every_character_as_a_json_string_would(text: str, limit: int) -> None:
    """Whatever the text, one quotation: nothing in it closes the quotes, starts a line or is unprintable."""
    shown = render.quoted(text, limit)
    cut = redact(text)
    cut = cut if len(cut) <= limit else cut[: limit - 1] + "…"
    assert shown == '"' + "".join(render._escaped(c) for c in cut) + '"'
    inside = shown[1:-1].replace("\\\\", "").replace('\\"', "")
    assert '"' not in inside and shown.isprintable()
