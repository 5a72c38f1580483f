"""The transcript fallback (``transcript``): driven by the transcript recorded from Claude Code 2.1.332."""

import json
import os
import time
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blackboard import transcript
from blackboard.digest import LATEST_PROMPTS, MAX_MESSAGE_CHARS, MAX_PROMPT_CHARS, shorten
from blackboard.settings import Settings
from helpers import FIXTURES, SCRATCH, recorded_constant

PROMPT = recorded_constant("PROMPT")
LAST_MESSAGE = recorded_constant("LAST_MESSAGE")
RECORDED_LINES = (FIXTURES / "transcript.jsonl").read_bytes().split(b"\n")[:-1]
RECORDS = [json.loads(line) for line in RECORDED_LINES]


def record_of(kind: str, predicate=lambda record: True) -> dict:
    """A copy of the first recorded record of type ``kind`` that ``predicate`` accepts."""
    return json.loads(json.dumps(next(r for r in RECORDS if r.get("type") == kind and predicate(r))))


def typed_record() -> dict:
    return record_of("user", lambda r: isinstance(r["message"]["content"], str))


@pytest.fixture
def config_dir(isolated_home: Path) -> Path:
    """Claude Code's folder as the plugin finds it: ``~/.claude``, HOME being the test's."""
    return Path(Settings(os.environ).claude_dir)


@pytest.fixture
def transcript_file(tmp_path: Path, config_dir: Path) -> Path:
    """The recorded transcript where the recorded SessionStart said it was, ``/SCRATCH`` standing for tmp_path."""
    start = json.loads((FIXTURES / "00-SessionStart.json").read_text().replace(SCRATCH, str(tmp_path)))
    path = Path(start["transcript_path"])
    assert config_dir in path.parents  # the recording's HOME was /SCRATCH/home, as this test's is tmp_path/home
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(RECORDED_LINES) + b"\n")
    return path


def write_lines(path: Path, lines: list) -> None:
    path.write_bytes(
        b"\n".join(line if isinstance(line, bytes) else json.dumps(line).encode() for line in lines) + b"\n"
    )


# --- what the recorded transcript gives -------------------------------------------------------------


def test_the_recorded_transcript_gives_the_typed_prompt_and_the_last_message(
    config_dir: Path, transcript_file: Path
) -> None:
    assert transcript.inside_claude_dir(str(config_dir), str(transcript_file))
    found = transcript.read_transcript(str(transcript_file))
    assert found.first_prompt == PROMPT
    assert found.latest_prompts == []
    assert found.prompt_count == 1
    assert found.last_message == LAST_MESSAGE
    assert found.edits == {}
    assert found.source == "transcript"


def test_tool_results_are_no_prompts_and_tool_calls_no_messages() -> None:
    users = [r for r in RECORDS if r.get("type") == "user"]
    assistants = [r for r in RECORDS if r.get("type") == "assistant"]
    assert len(users) > 1 and len(assistants) > 1  # the recording holds both kinds
    assert [transcript.typed_prompt(r) for r in users] == [PROMPT] + [None] * (len(users) - 1)
    assert [transcript.assistant_text(r) for r in assistants] == [None] * (len(assistants) - 1) + [LAST_MESSAGE]
    assert all(transcript.typed_prompt(r) is None for r in assistants)
    assert all(transcript.assistant_text(r) is None for r in users)


def _changed(record: dict, **fields: object) -> dict:
    return {**record, **fields}


def _with_content(record: dict, content: object) -> dict:
    return {**record, "message": {**record["message"], "content": content}}


NOT_PROMPTS = [
    pytest.param(lambda r: _changed(r, isSidechain=True), id="sidechain"),
    pytest.param(lambda r: _changed(r, isMeta=True), id="meta"),
    pytest.param(lambda r: _changed(r, type="system"), id="system-type"),
    pytest.param(lambda r: _changed(r, type="attachment"), id="attachment-type"),
    pytest.param(lambda r: _changed(r, type=None), id="no-type"),
    pytest.param(lambda r: _with_content(r, "<command-name>/clear</command-name>"), id="slash-command"),
    pytest.param(lambda r: _with_content(r, "  <local-command-stdout>ok</local-command-stdout>"), id="command-output"),
    pytest.param(lambda r: _with_content(r, "   \n "), id="blank"),
    pytest.param(lambda r: _with_content(r, None), id="no-content"),
    pytest.param(lambda r: _with_content(r, 42), id="number-content"),
    pytest.param(
        lambda r: _with_content(r, [{"tool_use_id": "toolu_x", "type": "tool_result", "content": PROMPT}]),
        id="tool-result",
    ),
    pytest.param(lambda r: _changed(r, message=PROMPT), id="message-a-string"),
    pytest.param(lambda r: _changed(r, message=None), id="message-null"),
    pytest.param(lambda r: {k: v for k, v in r.items() if k != "message"}, id="no-message"),
]


@pytest.mark.parametrize("change", NOT_PROMPTS)
def test_records_that_are_not_typed_prompts_are_not_taken_for_one(change) -> None:
    line = json.dumps(change(typed_record()))
    assert transcript.summarize([line]).prompt_count == 0
    assert transcript.summarize([line]).first_prompt is None


NOT_MESSAGES = [
    pytest.param(lambda r: _changed(r, isSidechain=True), id="sidechain"),
    pytest.param(lambda r: _changed(r, type="user"), id="user-type"),
    pytest.param(lambda r: _with_content(r, LAST_MESSAGE), id="string-content"),
    pytest.param(lambda r: _with_content(r, [{"type": "text", "text": 42}]), id="text-not-a-string"),
    pytest.param(lambda r: _with_content(r, [{"type": "thinking", "thinking": LAST_MESSAGE}]), id="thinking"),
    pytest.param(lambda r: _with_content(r, [{"type": "text", "text": "  "}]), id="blank-text"),
    pytest.param(lambda r: _with_content(r, ["text", LAST_MESSAGE]), id="blocks-not-objects"),
    pytest.param(lambda r: _with_content(r, {"type": "text", "text": LAST_MESSAGE}), id="content-an-object"),
]


@pytest.mark.parametrize("change", NOT_MESSAGES)
def test_records_that_say_nothing_are_not_the_last_message(change) -> None:
    said = record_of("assistant", lambda r: transcript.assistant_text(r) == LAST_MESSAGE)
    assert transcript.summarize([json.dumps(change(said))]).last_message is None


# --- hostile transcripts ------------------------------------------------------------------------------

# Each line is made when its test runs (a ten-megabyte one held at collection makes every process
# the suite starts cost more on Python 3.9, whose subprocess copies the whole parent).
HOSTILE_LINES = [
    pytest.param(lambda: b"not json", id="not-json"),
    pytest.param(lambda: b'{"type": "user", "message": {"content": "cut', id="cut-json"),
    pytest.param(lambda: b"[1, 2, 3]", id="json-array"),
    pytest.param(lambda: b"null", id="json-null"),
    pytest.param(lambda: b'"user"', id="json-string"),
    pytest.param(lambda: b"[" * 100_000 + b"]" * 100_000, id="deep-nesting"),
    pytest.param(
        lambda: b'{"type": "user", "uuid": "deep", "message": {"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
        id="deep-nesting-in-a-record",
    ),
    pytest.param(lambda: b"\xff\xfe\x80\xc3\x28 not utf-8", id="not-utf-8"),
    pytest.param(lambda: b"\x00" * 100, id="nul-bytes"),
    pytest.param(
        lambda: b'{"type": "compaction-boundary-v9", "uuid": "x1", "message": {"content": "hi"}}', id="unknown-type"
    ),
    pytest.param(lambda: b'{"type": "user", "uuid": "x2", "message": ["content"]}', id="message-a-list"),
    pytest.param(
        lambda: b'{"type": "assistant", "uuid": "x3", "message": {"content": 7}}', id="assistant-content-a-number"
    ),
    pytest.param(lambda: b'{"type": "user", "uuid": {"a": "b"}, "message": {"content": 3}}', id="uuid-an-object"),
    pytest.param(lambda: b"1" * 50_000, id="a-huge-integer"),
    pytest.param(lambda: b"x" * (10 << 20), id="a-ten-megabyte-line"),
]


@pytest.mark.parametrize("hostile", HOSTILE_LINES)
@pytest.mark.parametrize("where", ["first", "after-the-prompt", "last"])
def test_hostile_lines_are_skipped(transcript_file: Path, hostile: Callable[[], bytes], where: str) -> None:
    lines = list(RECORDED_LINES)
    prompt_at = next(i for i, r in enumerate(RECORDS) if r.get("type") == "user")
    position = {"first": 0, "after-the-prompt": prompt_at + 1, "last": len(lines)}[where]
    lines.insert(position, hostile())
    write_lines(transcript_file, lines)
    found = transcript.read_transcript(str(transcript_file))
    assert (found.first_prompt, found.last_message) == (PROMPT, LAST_MESSAGE)


def test_a_fifty_megabyte_transcript_is_read_bounded(transcript_file: Path) -> None:
    """Records of a type not known here fill the middle (Claude Code writes many); head and tail hold the rest."""
    prompt_at = next(i for i, r in enumerate(RECORDS) if r.get("type") == "user")
    filler = json.dumps({"type": "progress", "uuid": "p", "data": "x" * 1000}).encode() + b"\n"
    with transcript_file.open("wb") as handle:
        handle.write(b"\n".join(RECORDED_LINES[: prompt_at + 1]) + b"\n")
        handle.write(filler * ((50 << 20) // len(filler)))
        handle.write(b"\n".join(RECORDED_LINES[prompt_at + 1 :]) + b"\n")
    assert transcript_file.stat().st_size > 50 << 20
    began = time.monotonic()
    found = transcript.read_transcript(str(transcript_file))
    assert time.monotonic() - began < 5
    assert (found.first_prompt, found.last_message, found.prompt_count) == (PROMPT, LAST_MESSAGE, 1)
    assert not found.complete  # its middle was not read: a count of requests "at least"


def test_a_record_where_head_and_tail_meet_counts_once(transcript_file: Path) -> None:
    second = json.dumps({**_with_content(typed_record(), "a second request"), "uuid": "second"}).encode()
    filler = [json.dumps({"type": "attachment", "uuid": f"a{i}", "data": "x" * 1000}).encode() for i in range(950)]
    write_lines(transcript_file, [*RECORDED_LINES, second, *filler])
    second_at = transcript_file.read_bytes().index(second)
    tail_starts = transcript_file.stat().st_size - transcript.TAIL_BYTES
    assert 0 < tail_starts < second_at < transcript.HEAD_BYTES  # the second request is in both head and tail
    found = transcript.read_transcript(str(transcript_file))
    assert (found.first_prompt, found.latest_prompts, found.prompt_count) == (PROMPT, ["a second request"], 2)
    assert found.complete  # head and tail met: nothing was left unread


def test_the_latest_prompts_are_the_last_typed(transcript_file: Path) -> None:
    typed = typed_record()
    later = [json.dumps({**_with_content(typed, f"request {i}"), "uuid": f"u{i}"}).encode() for i in range(6)]
    write_lines(transcript_file, [*RECORDED_LINES, *later])
    found = transcript.read_transcript(str(transcript_file))
    assert found.first_prompt == PROMPT
    assert found.latest_prompts == [f"request {i}" for i in range(6)][-LATEST_PROMPTS:]
    assert found.prompt_count == 7


def test_a_secret_in_the_transcript_is_redacted(transcript_file: Path) -> None:
    token = "ghp_" + "Z9y8X7w6V5" * 4
    write_lines(transcript_file, [_with_content(typed_record(), f"{PROMPT} with {token}")])
    found = transcript.read_transcript(str(transcript_file))
    assert found.first_prompt is not None and token[4:] not in found.first_prompt
    assert found.first_prompt.startswith(PROMPT)


# Once a bug (transcript.py:45-47, `summarize`): records are de-duplicated by `str(record.get("uuid"))`,
# so every record without a uuid shares the key "None": after the first one (here an `api-request-blob`
# record of the recording, which has a message and no uuid), no user or assistant record without a uuid is
# read, and the last message is lost. Only records that have a uuid can be the same record twice.
def test_records_without_a_uuid_are_all_read() -> None:
    lines = [json.dumps({k: v for k, v in r.items() if k != "uuid"}) for r in RECORDS]
    found = transcript.summarize(lines)
    assert (found.first_prompt, found.last_message) == (PROMPT, LAST_MESSAGE)


# Once a bug (transcript.py:38-52, `summarize`, and digest.shorten): a lone surrogate in the JSON
# ("\ud83d": an emoji cut in half, which JavaScript strings can hold and JSON.stringify writes escaped)
# comes back in the Digest's strings; SessionEnd then fails in summary.bounded (`body.encode()`:
# UnicodeEncodeError) and the session gets no handoff. Every string the reader returns should be valid
# Unicode (the half character replaced).
@pytest.mark.parametrize("kind", ["user", "assistant"])
def test_a_half_emoji_in_the_transcript_gives_text_that_can_be_written(transcript_file: Path, kind: str) -> None:
    lines = [
        json.dumps(r).replace(PROMPT, PROMPT + " \\ud83d").replace(LAST_MESSAGE, LAST_MESSAGE + " \\ude00")
        for r in RECORDS
    ]
    transcript_file.write_text("\n".join(lines) + "\n")
    found = transcript.read_transcript(str(transcript_file))
    said = found.first_prompt if kind == "user" else found.last_message
    assert said is not None
    said.encode("utf-8")


@pytest.mark.parametrize("kind", ["missing", "empty", "symlink", "fifo", "folder", "binary"])
def test_a_transcript_that_is_no_readable_file_gives_nothing(tmp_path: Path, transcript_file: Path, kind: str) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    transcript_file.rename(elsewhere)
    if kind == "empty":
        transcript_file.write_bytes(b"")
    elif kind == "symlink":
        transcript_file.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(transcript_file)  # must not block: nothing writes to it
    elif kind == "folder":
        transcript_file.mkdir()
    elif kind == "binary":
        transcript_file.write_bytes(os.urandom(4096).replace(b"\n", b"") + b"\n" + bytes(range(256)))
    found = transcript.read_transcript(str(transcript_file))
    assert (found.first_prompt, found.last_message, found.prompt_count) == (None, None, 0)
    assert found.source == "transcript"


# --- where a transcript may be read from -------------------------------------------------------------------


def test_a_transcript_below_the_config_dir_is_accepted_even_when_the_config_dir_is_a_link(
    tmp_path: Path, config_dir: Path, transcript_file: Path
) -> None:
    link = tmp_path / "claude-link"
    link.symlink_to(config_dir)
    moved = str(transcript_file).replace(str(config_dir), str(link))
    assert transcript.inside_claude_dir(str(link), moved)


def _links(config: Path, path: Path, tmp_path: Path) -> str:
    """The transcript replaced by a link to a copy elsewhere."""
    copy = tmp_path / "copy.jsonl"
    path.rename(copy)
    path.symlink_to(copy)
    return str(path)


def _linked_folder(config: Path, path: Path, tmp_path: Path) -> str:
    """The project folder under ``projects`` replaced by a link to a folder elsewhere."""
    real = tmp_path / "real-project-folder"
    path.parent.rename(real)
    path.parent.symlink_to(real)
    return str(path)


def _linked_projects(config: Path, path: Path, tmp_path: Path) -> str:
    real = tmp_path / "real-projects"
    (config / "projects").rename(real)
    (config / "projects").symlink_to(real)
    return str(path)


def _outside(config: Path, path: Path, tmp_path: Path) -> str:
    other = tmp_path / "elsewhere" / path.name
    other.parent.mkdir()
    other.write_bytes(path.read_bytes())
    return str(other)


def _dot_dot_out(config: Path, path: Path, tmp_path: Path) -> str:
    (config / "settings.json").write_text("{}")
    return str(config / "projects" / ".." / "settings.json")


def _sibling(config: Path, path: Path, tmp_path: Path) -> str:
    other = config / "projects-evil" / path.name
    other.parent.mkdir()
    other.write_bytes(path.read_bytes())
    return str(other)


def _relative(config: Path, path: Path, tmp_path: Path) -> str:
    return os.path.relpath(path)


REFUSED = [
    pytest.param(_links, id="a-link"),
    pytest.param(_linked_folder, id="a-linked-folder-on-the-way"),
    pytest.param(_linked_projects, id="projects-a-link"),
    pytest.param(_outside, id="outside-the-config-dir"),
    pytest.param(_dot_dot_out, id="dot-dot-out-of-projects"),
    pytest.param(_sibling, id="a-sibling-with-the-same-prefix"),
    pytest.param(_relative, id="relative"),
    pytest.param(lambda config, path, tmp: str(path) + "\x00", id="nul"),
    pytest.param(lambda config, path, tmp: str(path.parent / "missing.jsonl"), id="missing"),
    pytest.param(lambda config, path, tmp: "", id="empty"),
    pytest.param(lambda config, path, tmp: None, id="none"),
    pytest.param(lambda config, path, tmp: 42, id="number"),
    pytest.param(lambda config, path, tmp: str(path).encode(), id="bytes"),
    pytest.param(lambda config, path, tmp: [str(path)], id="list"),
    pytest.param(lambda config, path, tmp: str(config), id="the-config-dir"),
]


@pytest.mark.parametrize("make", REFUSED)
def test_a_transcript_anywhere_else_is_refused(tmp_path: Path, config_dir: Path, transcript_file: Path, make) -> None:
    assert transcript.inside_claude_dir(str(config_dir), make(config_dir, transcript_file, tmp_path)) is False


# Once a bug (transcript.py:90-108, `inside_claude_dir`): the check walks `os.path.normpath(path)`,
# which drops `link/..` without looking, while the caller (summary.session_digest) then reads the path as
# given, where the kernel follows the link first. `{config}/projects/link/../t.jsonl`, with `link` pointing
# to a folder elsewhere, passes the check and reads the `t.jsonl` beside that folder, outside the config dir.
# A path with `..` components should be refused (or the checked, normalised path be what is read).
def test_dot_dot_after_a_link_cannot_lead_a_read_outside(
    tmp_path: Path, config_dir: Path, transcript_file: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    secret = _with_content(typed_record(), "a file outside the config dir")
    write_lines(outside / transcript_file.name, [secret])
    link = transcript_file.parent / "link"
    link.symlink_to(outside / "folder")
    path = str(link / ".." / transcript_file.name)
    assert transcript.read_transcript(path).first_prompt == "a file outside the config dir"  # what a read would see
    assert transcript.inside_claude_dir(str(config_dir), path) is False


# --- properties ---------------------------------------------------------------------------------------------

LINE_KINDS = st.one_of(
    st.tuples(st.just("typed"), st.text(max_size=40)),
    st.tuples(st.just("result"), st.text(max_size=40)),
    st.tuples(st.just("said"), st.text(max_size=40)),
    st.tuples(st.just("garbage"), st.text(max_size=40)),
)


def _line(index: int, kind: str, text: str) -> str:
    if kind == "typed":
        return json.dumps({**_with_content(typed_record(), text), "uuid": f"u{index}"})
    if kind == "result":
        block = {"tool_use_id": "t", "type": "tool_result", "content": text}
        return json.dumps({**_with_content(typed_record(), [block]), "uuid": f"u{index}"})
    if kind == "said":
        said = record_of("assistant", lambda r: transcript.assistant_text(r) == LAST_MESSAGE)
        return json.dumps({**_with_content(said, [{"type": "text", "text": text}]), "uuid": f"u{index}"})
    return text


@given(st.lists(LINE_KINDS, max_size=15))
def test_summarize_never_raises_and_takes_the_first_typed_prompt_first(kinds: list) -> None:
    lines = [_line(i, kind, text) for i, (kind, text) in enumerate(kinds)]
    found = transcript.summarize(lines)
    typed = [t for k, t in kinds if k == "typed" and t.strip() and not t.lstrip().startswith("<")]
    said = [t for k, t in kinds if k == "said" and t.strip()]
    assert found.first_prompt == (shorten(typed[0], MAX_PROMPT_CHARS) if typed else None)
    assert found.prompt_count == len(typed)
    assert found.last_message == (shorten(said[-1], MAX_MESSAGE_CHARS) if said else None)
    assert all(isinstance(p, str) for p in found.latest_prompts)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.sampled_from(["type", "message", "content", "text", "uuid", "isMeta"]) | st.text(max_size=5),
        inner,
        max_size=4,
    ),
    max_leaves=25,
)


@given(st.lists(st.one_of(st.text(), JSON_VALUES.map(json.dumps)), max_size=15))
def test_summarize_of_anything_gives_only_strings(lines: list) -> None:
    found = transcript.summarize(lines)
    assert found.first_prompt is None or isinstance(found.first_prompt, str)
    assert found.last_message is None or isinstance(found.last_message, str)
    assert all(isinstance(p, str) for p in found.latest_prompts)
    assert found.prompt_count >= len(found.latest_prompts)
