"""The screen emulator the interactive tests read Claude Code through (``terminal.Screen``)."""

from terminal import Screen


def test_columns_set_by_position_keep_the_spaces_a_person_sees() -> None:
    screen = Screen(3, 20)
    screen.feed("\x1b[3GDo\x1b[6Gyou\x1b[10Gwant?\r\n")
    assert screen.text().splitlines()[0] == "  Do you want?"


def test_a_line_redrawn_in_place_shows_only_the_new_text() -> None:
    screen = Screen(3, 20)
    screen.feed("thinking...\r\n\x1b[1A\x1b[2K\x1b[1Gdone")
    assert screen.text().splitlines()[0] == "done"


def test_moves_and_erasures_of_a_region() -> None:
    screen = Screen(4, 10)
    screen.feed("aaaa\r\nbbbb\r\ncccc\x1b[2;1H\x1b[J\x1b[1Cz")
    assert screen.text() == "aaaa\n z\n\n"


def test_output_past_the_last_row_scrolls_and_long_lines_wrap() -> None:
    screen = Screen(2, 4)
    screen.feed("one\r\ntwo\r\nthree")
    assert screen.text() == "thre\ne"


def test_an_escape_cut_by_a_read_is_finished_by_the_next() -> None:
    screen = Screen(1, 20)
    screen.feed("a\x1b[1")
    screen.feed("0Gb\x1b]0;title\x07")
    assert screen.text() == "a        b"


def test_colours_and_private_modes_take_no_cell() -> None:
    screen = Screen(1, 20)
    screen.feed("\x1b[?25l\x1b[38;5;246mgrey\x1b[39m \x1b[1mbold\x1b[22m\x1b[>4m")
    assert screen.text() == "grey bold"
