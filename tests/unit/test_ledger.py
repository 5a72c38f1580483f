"""The open-work ledger: keys, what a handoff carries, folding a session in, merging two handoffs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blackboard import ledger
from blackboard.ledger import Item, Ledger, merge

A = "5f1c8a2e-0000-4000-8000-000000000001"
B = "9b0d3e4f-0000-4000-8000-000000000002"


def _keys(book: Ledger) -> list:
    return [item.key for item in book.open]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param(f"{A}/t3", True, id="board-task"),
        pytest.param(f"{A}/cc12", True, id="claude-code-task"),
        pytest.param("t3", False, id="no-session"),
        pytest.param(f"{A}/x3", False, id="unknown-kind"),
        pytest.param(f"../{A}/t3", False, id="dot-dot"),
        pytest.param(f"{A}/t3/t4", False, id="nested"),
        pytest.param(f"{A}/t3\n", False, id="newline"),
        pytest.param(3, False, id="not-a-string"),
    ],
)
def test_a_key_names_a_session_and_a_task(value: object, ok: bool) -> None:
    assert ledger.is_key(value) is ok


def test_a_carried_task_keeps_the_key_of_where_it_was_born() -> None:
    assert ledger.board_key(B, {"origin": f"{A}/t3"}, "t1") == f"{A}/t3"
    assert ledger.board_key(B, {}, "t1") == f"{B}/t1"
    assert ledger.board_key(B, {"origin": "../../etc"}, "t1") == f"{B}/t1"


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(None, id="none"),
        pytest.param("text", id="a-string"),
        pytest.param([1, "x", None], id="not-objects"),
        pytest.param([{"key": "nope", "text": "x"}], id="bad-key"),
        pytest.param([{"key": f"{A}/t1", "text": ""}], id="empty-text"),
        pytest.param([{"key": f"{A}/t1", "text": ["x"]}], id="text-not-a-string"),
    ],
)
def test_malformed_open_work_is_skipped(raw: object) -> None:
    assert ledger.items_from(raw) == []


def test_open_work_read_back_is_one_line_and_bounded() -> None:
    (item,) = ledger.items_from(
        [{"key": f"{A}/t1", "text": "two\nlines " + "x" * 500, "status": "claimed", "by": "w1"}]
    )
    assert "\n" not in item.text and len(item.text) <= ledger.MAX_TEXT
    assert (item.status, item.by) == ("claimed", "w1")


def test_a_duplicate_key_counts_once() -> None:
    raw = [{"key": f"{A}/t1", "text": "first"}, {"key": f"{A}/t1", "text": "second"}]
    assert [i.text for i in ledger.items_from(raw)] == ["first"]


def test_folding_keeps_what_an_idle_session_carries() -> None:
    carried = Ledger([Item(f"{A}/t1", "write the lexer"), Item(f"{A}/t2", "write the parser")], [])
    folded = merge(Ledger([], [], speaks_for=B), carried)
    assert _keys(folded) == [f"{A}/t1", f"{A}/t2"]


def test_a_task_closed_anywhere_leaves_the_ledger() -> None:
    carried = Ledger([Item(f"{A}/t1", "lexer"), Item(f"{A}/t2", "parser")], [])
    own = Ledger([Item(f"{B}/t1", "tests")], [f"{A}/t1"], speaks_for=B)
    folded = merge(own, carried)
    assert _keys(folded) == [f"{B}/t1", f"{A}/t2"]
    assert folded.closed == [f"{A}/t1"]


def test_a_sessions_own_word_on_its_items_wins_over_what_was_carried() -> None:
    """Resumed: its earlier handoff carried cc1 open; Claude Code has deleted the task since."""
    carried = Ledger([Item(f"{B}/cc1", "quotes"), Item(f"{A}/t1", "lexer")], [])
    folded = merge(Ledger([], [], speaks_for=B), carried)
    assert _keys(folded) == [f"{A}/t1"]
    assert folded.closed == [f"{B}/cc1"]  # closed for every later handoff, not only this one


def test_a_board_read_in_part_closes_nothing_it_does_not_list() -> None:
    carried = Ledger([Item(f"{B}/t1", "before the tail")], [])
    assert _keys(merge(Ledger([], []), carried)) == [f"{B}/t1"]


def test_merging_two_parallel_handoffs_keeps_both_sides_open_work_and_every_closing() -> None:
    newer = Ledger([Item(f"{B}/t1", "new in B"), Item(f"{A}/t2", "parser")], [f"{A}/t1"])
    older = Ledger([Item(f"{A}/t1", "lexer"), Item(f"{A}/t2", "parser"), Item(f"{A}/t3", "docs")], [f"{A}/t9"])
    merged = merge(newer, older)
    assert _keys(merged) == [f"{B}/t1", f"{A}/t2", f"{A}/t3"]
    assert merged.closed == [f"{A}/t1", f"{A}/t9"]
    assert _keys(merge(older, newer)) == [f"{A}/t2", f"{A}/t3", f"{B}/t1"]  # the same set either way


def test_merging_keeps_every_open_item_however_many() -> None:
    """Issue 32, point 9: past 100 items the newest were cut, and each later task pushed a carried one out."""
    carried = Ledger([Item(f"{A}/t{i}", f"task {i}") for i in range(150, 0, -1)], [])  # newest first
    merged = merge(Ledger([Item(f"{B}/t{i}", f"new {i}") for i in (3, 2, 1)], [], speaks_for=B), carried)
    assert _keys(merged) == [f"{B}/t3", f"{B}/t2", f"{B}/t1"] + [f"{A}/t{i}" for i in range(150, 0, -1)]
    assert merged.cut == 0


def test_what_a_handoff_left_out_is_counted_once() -> None:
    book = Ledger([Item(f"{A}/t1", "kept")], [], cut=7)
    merged = merge(Ledger([], [], cut=7), book)  # a session's handoff, built over the latest, published on it
    assert merged.cut == 7
    assert merge(Ledger([], []), merged).cut == 7  # merging again counts nothing twice
    assert Ledger.from_fields(merged.to_fields()).cut == 7


def test_a_short_key_finds_one_item_and_an_ambiguous_one_none() -> None:
    items = [Item(f"{A}/t1", "a"), Item(f"{B}/t1", "b"), Item("5f1c0000-x/t1", "c")]
    assert ledger.find(items, f"{A}/t1") is items[0]
    assert ledger.find(items, "9b0d3e4f/t1") is items[1]
    assert ledger.find(items, "5f1c/t1") is None  # two sessions start so
    assert ledger.find(items, "t1") is None


@given(st.lists(st.dictionaries(st.sampled_from(["key", "text", "status", "by"]), st.one_of(st.text(), st.integers()))))
def test_reading_any_open_work_never_fails_and_gives_valid_items(raw: list) -> None:
    for item in ledger.items_from(raw):
        assert ledger.is_key(item.key) and item.status in ("open", "claimed") and "\n" not in item.text


@given(st.lists(st.sampled_from([f"{A}/t{i}" for i in range(6)]), unique=True), st.lists(st.integers(0, 5)))
def test_merge_never_keeps_a_closed_key(open_keys: list, closed: list) -> None:
    closed_keys = [f"{A}/t{i}" for i in closed]
    merged = merge(Ledger([Item(k, "x") for k in open_keys], []), Ledger([], closed_keys))
    assert not set(_keys(merged)) & set(closed_keys)
    assert set(_keys(merged)) == set(open_keys) - set(closed_keys)


def test_a_hostile_cut_count_is_bounded() -> None:
    huge = int("9" * 4300)
    book = Ledger.from_fields({"open_work_cut": huge, "open_work": []})
    assert book.cut == ledger.MAX_CUT
    merged = merge(Ledger([Item(f"{A}/t{i}", "x") for i in range(3)], [], cut=5), book)
    assert merged.cut == ledger.MAX_CUT


def test_a_closing_outlives_hundreds_of_later_ones() -> None:
    closed = Ledger([], [f"{A}/t1"])
    for i in range(300):
        closed = merge(Ledger([], [f"{B}/t{i}"]), closed)
    assert f"{A}/t1" in closed.closed
    assert merge(Ledger([Item(f"{A}/t1", "stale copy on a resumed board")], [], speaks_for=A), closed).open == []


def test_claude_code_task_files_left_unread_are_counted_and_carried_by_session() -> None:
    """Issue 39, point 7: what a bound leaves unread of a session's Claude Code list is said, and stays said."""
    ended = Ledger([Item(f"{A}/cc2001", "the newest")], [], speaks_for=A, unread=("cc",), unread_files={A: 40})
    fields = ended.to_fields()
    assert fields["claude_tasks_unread"] == [f"{A}:40"]
    idle = Ledger([], [], speaks_for=B)  # a later session with no list of its own
    merged = merge(idle, Ledger.from_fields(fields))
    assert merged.unread_files == {A: 40}
    assert merge(Ledger([], [], speaks_for=B, unread_files={B: 3}), merged).unread_files == {B: 3, A: 40}


def test_a_session_that_read_its_whole_list_since_is_no_longer_counted_unread() -> None:
    carried = Ledger([], [], unread_files={A: 40, B: 7})
    assert merge(Ledger([], [], speaks_for=A), carried).unread_files == {B: 7}
    assert merge(Ledger([], [], speaks_for=A, unread=("cc",)), carried).unread_files == {A: 40, B: 7}  # not read
    assert merge(Ledger([], [], speaks_for=A, unread=("cc",), unread_files={A: 2}), carried).unread_files[A] == 2


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("not a list", id="not-a-list"),
        pytest.param([f"{A}:0"], id="zero"),
        pytest.param([f"{A}:-3"], id="negative"),
        pytest.param([f"{A}:1e9"], id="not-a-number"),
        pytest.param([f"{A}:1234567890"], id="too-many-digits"),
        pytest.param([f"../{A}:3"], id="a-path"),
        pytest.param([f"{A}:3\n"], id="newline"),
        pytest.param([[A, 3]], id="a-pair"),
        pytest.param([{A: 3}], id="an-object"),
    ],
)
def test_a_malformed_unread_count_is_skipped(raw: object) -> None:
    assert Ledger.from_fields({"claude_tasks_unread": raw}).unread_files == {}


def test_unread_counts_are_bounded_in_sessions() -> None:
    many = [f"s{n}:{n + 1}" for n in range(ledger.MAX_UNREAD_SESSIONS + 5)]
    assert len(Ledger.from_fields({"claude_tasks_unread": many}).unread_files) == ledger.MAX_UNREAD_SESSIONS
