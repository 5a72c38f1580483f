import re
from pathlib import Path

import pytest

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
