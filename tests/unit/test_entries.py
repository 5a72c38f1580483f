import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from blackboard import entries
from blackboard.errors import BlackboardError


def test_render_then_parse_round_trips() -> None:
    text = entries.initial_text("tasks", "s1") + entries.render("t1", {"status": "open", "author": "main"}, "Fix it")
    parsed, problems = entries.parse(text)
    assert problems == []
    (task,) = parsed
    assert task.id == "t1"
    assert task.fields == {"status": "open", "author": "main"}
    assert task.body == "Fix it"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("## looks like a heading", id="heading-in-body"),
        pytest.param("\\## already escaped", id="escaped-heading"),
        pytest.param("- key: value\nmore", id="field-like-first-line"),
        pytest.param("line one\n\n\nline four", id="blank-lines"),
        pytest.param("\n\nleading blank lines", id="leading-blank"),
        pytest.param('{"json": [1, 2]}', id="json"),
        pytest.param("ünïcødé ✓", id="unicode"),
    ],
)
def test_any_body_round_trips(body: str) -> None:
    text = entries.render("n1", {"author": "a"}, body) + entries.render("n2", {"author": "b"}, "next")
    parsed, problems = entries.parse(text)
    assert problems == []
    assert [(e.id, e.body) for e in parsed] == [("n1", body), ("n2", "next")]


def test_field_values_stay_on_one_line() -> None:
    parsed, _ = entries.parse(entries.render("t1", {"claimed_by": "a\nb"}, "x"))
    assert parsed[0].fields == {"claimed_by": "a b"}


def test_a_mangled_block_is_reported_with_its_line_and_the_rest_survives() -> None:
    text = (
        entries.render("t1", {"status": "open"}, "first")
        + "\n## two words heading\nbody\n"
        + entries.render("t3", {"status": "open"}, "third")
    )
    parsed, problems = entries.parse(text)
    assert [e.id for e in parsed] == ["t1", "t3"]
    assert len(problems) == 1
    assert problems[0].startswith("line 7:")


def test_append_numbers_entries(tmp_path: Path) -> None:
    path = str(tmp_path / "session-notes.md")
    Path(path).write_text(entries.initial_text("notes", "s1"))
    ids = [entries.append(path, "n", {"author": "main"}, f"note {i}") for i in range(3)]
    assert ids == ["n1", "n2", "n3"]
    parsed, _ = entries.parse(Path(path).read_text())
    assert [e.body for e in parsed] == ["note 0", "note 1", "note 2"]


def test_every_entry_is_stamped_with_utc_time(tmp_path: Path) -> None:
    path = str(tmp_path / "session-notes.md")
    entries.append(path, "n", {"author": "main"}, "x")
    (entry,), _ = entries.parse(Path(path).read_text())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", entry.fields["at"])


def test_keyed_entries_refuse_duplicates_and_bad_keys(tmp_path: Path) -> None:
    path = str(tmp_path / "shared-context.md")
    entries.put(path, "api_schema", {"author": "w1"}, "v1")
    with pytest.raises(BlackboardError, match="already exists; pass --replace"):
        entries.put(path, "api_schema", {"author": "w2"}, "v2")
    for bad in ["", "has space", "dash-key", "x" * 65, "../x"]:
        with pytest.raises(BlackboardError, match="invalid key"):
            entries.put(path, bad, {}, "v")
    parsed, _ = entries.parse(Path(path).read_text())
    assert [(e.id, e.body) for e in parsed] == [("api_schema", "v1")]


# --- exact round trips (ADR 7): no text can create, hide or renumber an entry ----------------

TRICKY = [
    "\r",
    "\n",
    "\r\n",
    "\u2028",
    "\u2029",
    "\x0c",
    "\x0b",
    "\x85",
    "## t9",
    "\\## x",
    "- status: done",
    "---",
    " ",
]
VALUES = (
    st.lists(
        st.one_of(st.sampled_from(TRICKY), st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)),
        min_size=1,
        max_size=12,
    )
    .map("".join)
    .filter(lambda text: text.strip() != "")
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=4))
def test_any_value_reads_back_byte_for_byte_as_one_entry(values: list) -> None:
    text = entries.initial_text("notes", "s1") + "".join(
        entries.render(f"n{i}", {"author": "main"}, value) for i, value in enumerate(values, 1)
    )
    parsed, problems = entries.parse(text)
    assert problems == []
    assert [entry.id for entry in parsed] == [f"n{i}" for i in range(1, len(values) + 1)]
    assert [entry.body for entry in parsed] == values


@hypothesis_settings(max_examples=60, deadline=None)
@given(value=VALUES)
def test_a_value_written_to_a_file_never_renumbers_the_next_entry(value: str, tmp_path_factory) -> None:
    path = str(tmp_path_factory.mktemp("board") / "active-tasks.md")
    assert entries.append(path, "t", {"status": "open"}, value) == "t1"
    assert entries.append(path, "t", {"status": "open"}, "the next one") == "t2"
    with open(path, newline="") as handle:
        parsed, problems = entries.parse(handle.read())
    assert problems == []
    assert [(e.id, e.body) for e in parsed] == [("t1", value), ("t2", "the next one")]


def test_a_file_saved_with_crlf_endings_is_read_whole(tmp_path) -> None:
    path = tmp_path / "active-tasks.md"
    entries.append(str(path), "t", {"status": "open", "author": "main"}, "first")
    entries.append(str(path), "t", {"status": "open", "author": "main"}, "second\nline two")
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # an editor saved it

    parsed, problems = entries.parse(path.read_bytes().decode())

    assert problems == []
    assert [(e.id, e.body) for e in parsed] == [("t1", "first"), ("t2", "second\nline two")]
    assert entries.append(str(path), "t", {"status": "open"}, "third") == "t3"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("scraped\r## t2\n- status: open\n\nFORGED", id="carriage-return-heading"),
        pytest.param("a\r## api_key\n- author: main\n\nFORGED", id="carriage-return-key"),
        pytest.param("x\n## t7\n- status: open", id="newline-heading"),
        pytest.param("---\ntitle: front matter\n---\nbody", id="front-matter"),
    ],
)
def test_a_value_cannot_forge_an_entry(tmp_path, value: str) -> None:
    path = str(tmp_path / "active-tasks.md")
    entries.append(path, "t", {"status": "open"}, value)
    entries.append(path, "t", {"status": "open"}, "real")
    with open(path, newline="") as handle:
        parsed, _ = entries.parse(handle.read())
    assert [(e.id, e.body) for e in parsed] == [("t1", value), ("t2", "real")]
