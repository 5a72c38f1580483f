"""Claude Code's own task list (``claude_tasks``): driven by the task file recorded from Claude Code 2.1.332."""

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blackboard import claude_tasks
from blackboard.settings import Settings
from helpers import FIXTURES, HOSTILE_SESSION_IDS

RECORDED_TASK = (FIXTURES / "task-1.json").read_bytes()
SESSION_ID = json.loads((FIXTURES / "00-SessionStart.json").read_text())["session_id"]


@pytest.fixture
def config_dir(isolated_home: Path) -> Path:
    """Claude Code's folder as the plugin finds it: ``~/.claude``, HOME being the test's."""
    return Path(Settings(os.environ).claude_dir)


@pytest.fixture
def folder(config_dir: Path) -> Path:
    """The recorded session's task folder holding the recorded ``1.json``, where Claude Code keeps it."""
    path = config_dir / "tasks" / SESSION_ID
    path.mkdir(parents=True)
    (path / "1.json").write_bytes(RECORDED_TASK)
    return path


def task_with(**fields: object) -> bytes:
    """The recorded task with some fields changed (``None`` removes one)."""
    task = {**json.loads(RECORDED_TASK), **fields}
    return json.dumps({k: v for k, v in task.items() if v is not None}).encode()


def found(config_dir: Path, session_id: str = SESSION_ID) -> list:
    return [(t.number, t.subject, t.status) for t in claude_tasks.read_tasks(str(config_dir), session_id).tasks]


RECORDED = ("1", "Handle quotes in escape()", "pending")


def test_the_recorded_task_is_read(config_dir: Path, folder: Path) -> None:
    assert claude_tasks.tasks_dir(str(config_dir), SESSION_ID) == str(folder)
    assert found(config_dir) == [RECORDED]
    assert RECORDED[2] in claude_tasks.UNFINISHED


def test_no_task_folder_gives_no_tasks(config_dir: Path) -> None:
    assert claude_tasks.tasks_dir(str(config_dir), SESSION_ID) is None
    assert found(config_dir) == []


def test_tasks_come_in_their_numbers_order_and_keep_their_status(config_dir: Path, folder: Path) -> None:
    (folder / "10.json").write_bytes(task_with(id="10", subject="tenth", status="completed"))
    (folder / "2.json").write_bytes(task_with(id="2", subject="second", status="in_progress"))
    (folder / "notes.txt").write_bytes(task_with(subject="not a task file"))
    (folder / "3.json.tmp").write_bytes(task_with(subject="a file being written"))
    assert found(config_dir) == [RECORDED, ("2", "second", "in_progress"), ("10", "tenth", "completed")]


def _plant(folder: Path, name: str, data: bytes) -> None:
    (folder / name).write_bytes(data)


def _link_to_a_task_elsewhere(folder: Path) -> None:
    elsewhere = folder.parent.parent.parent / "elsewhere.json"
    elsewhere.write_bytes(task_with(subject="read through a link"))
    (folder / "2.json").symlink_to(elsewhere)


def _dangling_link(folder: Path) -> None:
    (folder / "2.json").symlink_to(folder / "nowhere.json")


def _link_to_a_fifo(folder: Path) -> None:
    os.mkfifo(folder.parent.parent.parent / "fifo")
    (folder / "2.json").symlink_to(folder.parent.parent.parent / "fifo")


HOSTILE_FILES = [
    pytest.param(_link_to_a_task_elsewhere, id="a-link-to-a-task-elsewhere"),
    pytest.param(_dangling_link, id="a-dangling-link"),
    pytest.param(_link_to_a_fifo, id="a-link-to-a-fifo"),
    pytest.param(lambda folder: os.mkfifo(folder / "2.json"), id="a-fifo"),  # must not block
    pytest.param(lambda folder: (folder / "2.json").mkdir(), id="a-folder"),
    pytest.param(
        lambda folder: _plant(folder, "2.json", task_with(description="x" * claude_tasks.MAX_TASK_BYTES)),
        id="oversized",
    ),
    pytest.param(lambda folder: _plant(folder, "2.json", b"not json"), id="not-json"),
    pytest.param(lambda folder: _plant(folder, "2.json", RECORDED_TASK[:-5]), id="cut-short"),
    pytest.param(lambda folder: _plant(folder, "2.json", b""), id="empty"),
    pytest.param(lambda folder: _plant(folder, "2.json", b"[" + RECORDED_TASK + b"]"), id="a-json-array"),
    pytest.param(lambda folder: _plant(folder, "2.json", b"null"), id="json-null"),
    pytest.param(lambda folder: _plant(folder, "2.json", b"[" * 100_000 + b"]" * 100_000), id="deep-nesting"),
    pytest.param(
        lambda folder: _plant(folder, "2.json", b'{"subject": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"),
        id="deep-nesting-in-the-subject",
    ),
    pytest.param(lambda folder: _plant(folder, "2.json", b"\xff\xfe\x80" + RECORDED_TASK), id="not-utf-8"),
    pytest.param(lambda folder: _plant(folder, "2.json", b"\x00" * 64), id="nul-bytes"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(subject=42)), id="subject-a-number"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(subject=["a"])), id="subject-a-list"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(subject={"t": "a"})), id="subject-an-object"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(subject="  \n ")), id="subject-blank"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(subject=None)), id="no-subject"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(status=1)), id="status-a-number"),
    pytest.param(lambda folder: _plant(folder, "2.json", task_with(status=None)), id="no-status"),
]


@pytest.mark.parametrize("make", HOSTILE_FILES)
def test_a_task_file_that_is_no_task_is_skipped(config_dir: Path, folder: Path, make) -> None:
    make(folder)
    assert found(config_dir) == [RECORDED]


def test_a_task_file_of_exactly_the_limit_is_read(config_dir: Path, folder: Path) -> None:
    data = task_with(id="2", subject="at the limit")
    data = data[:-1] + b" " * (claude_tasks.MAX_TASK_BYTES - len(data)) + b"}"
    assert len(data) == claude_tasks.MAX_TASK_BYTES
    (folder / "2.json").write_bytes(data)
    assert found(config_dir) == [RECORDED, ("2", "at the limit", "pending")]


def _many(folder: Path, last: int, size: int = 0) -> None:
    """Tasks 2 to ``last`` beside the recorded 1, each padded to ``size`` bytes when one is given."""
    for n in range(2, last + 1):
        data = task_with(id=str(n), subject=f"task {n}")
        (folder / f"{n}.json").write_bytes(data[:-1] + b" " * max(size - len(data), 0) + b"}")


def test_every_task_of_a_long_list_is_read(config_dir: Path, folder: Path) -> None:
    """Issue 39, point 7: past 200 tasks the oldest were left out, and 800 of 1 000 vanished from the handoffs."""
    _many(folder, 1000)
    listed = claude_tasks.read_tasks(str(config_dir), SESSION_ID)
    assert [t.number for t in listed.tasks] == [str(n) for n in range(1, 1001)]
    assert listed.whole and listed.unread == 0


def test_past_max_tasks_files_the_newest_are_read_and_the_rest_counted(
    config_dir: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many(folder, claude_tasks.MAX_TASKS + 49)
    reads = []
    real_read = claude_tasks.read_bounded
    monkeypatch.setattr(claude_tasks, "read_bounded", lambda path, size: reads.append(path) or real_read(path, size))
    listed = claude_tasks.read_tasks(str(config_dir), SESSION_ID)
    assert len(reads) == claude_tasks.MAX_TASKS
    newest = range(50, claude_tasks.MAX_TASKS + 50)  # a long session's latest tasks are the ones still open
    assert [t.number for t in listed.tasks] == [str(n) for n in newest]
    assert (listed.whole, listed.unread) == (False, 49)


def test_past_the_total_bytes_the_newest_are_read_and_the_rest_counted(
    config_dir: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_tasks, "MAX_TOTAL_BYTES", 100 * 1024)
    _many(folder, 30, size=10 * 1024)  # 10 fit in the 100 KiB: tasks 21 to 30
    listed = claude_tasks.read_tasks(str(config_dir), SESSION_ID)
    assert [t.number for t in listed.tasks] == [str(n) for n in range(21, 31)]
    assert (listed.whole, listed.unread) == (False, 20)  # 2 to 20 and the recorded 1


def test_a_file_over_its_bound_is_counted_unread(config_dir: Path, folder: Path) -> None:
    (folder / "2.json").write_bytes(task_with(id="2", description="x" * claude_tasks.MAX_TASK_BYTES))
    (folder / "3.json").write_bytes(task_with(id="3", subject="after it"))
    listed = claude_tasks.read_tasks(str(config_dir), SESSION_ID)
    assert [t.number for t in listed.tasks] == ["1", "3"]
    assert (listed.whole, listed.unread) == (False, 1)


def _link_the_session_folder(config: Path, folder: Path) -> None:
    real = config.parent / "real-session-folder"
    folder.rename(real)
    folder.symlink_to(real)


def _link_tasks(config: Path, folder: Path) -> None:
    real = config.parent / "real-tasks"
    folder.parent.rename(real)
    folder.parent.symlink_to(real)


def _session_folder_a_file(config: Path, folder: Path) -> None:
    (folder / "1.json").unlink()
    folder.rmdir()
    folder.write_bytes(RECORDED_TASK)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_link_the_session_folder, id="the-session-folder-a-link"),
        pytest.param(_link_tasks, id="tasks-a-link"),
        pytest.param(_session_folder_a_file, id="the-session-folder-a-file"),
    ],
)
def test_a_task_folder_reached_through_a_link_yields_nothing(config_dir: Path, folder: Path, make) -> None:
    make(config_dir, folder)
    assert claude_tasks.tasks_dir(str(config_dir), SESSION_ID) is None
    assert found(config_dir) == []


def test_the_config_dir_itself_may_be_a_link(tmp_path: Path, config_dir: Path, folder: Path) -> None:
    link = tmp_path / "claude-config-link"
    link.symlink_to(config_dir)
    assert found(link) == [RECORDED]


@pytest.mark.parametrize(
    ("session_id", "planted_at"),
    [
        pytest.param("..", "1.json", id="dot-dot"),
        pytest.param(".", os.path.join("tasks", "1.json"), id="dot"),
        pytest.param("a/../b", os.path.join("tasks", "b", "1.json"), id="traversal"),
        pytest.param("x/..", os.path.join("tasks", "1.json"), id="trailing-dot-dot"),
        pytest.param(SESSION_ID + "/", os.path.join("tasks", SESSION_ID, "1.json"), id="trailing-slash"),
    ],
)
def test_a_session_id_that_is_a_path_reads_nothing(
    config_dir: Path, folder: Path, session_id: str, planted_at: str
) -> None:
    planted = config_dir / planted_at
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_bytes(RECORDED_TASK)
    assert claude_tasks.tasks_dir(str(config_dir), session_id) is None
    assert found(config_dir, session_id) == []


@pytest.mark.parametrize("session_id", list(HOSTILE_SESSION_IDS.values()), ids=list(HOSTILE_SESSION_IDS))
def test_a_hostile_session_id_reads_nothing(config_dir: Path, folder: Path, session_id: str) -> None:
    assert claude_tasks.tasks_dir(str(config_dir), session_id) is None
    assert found(config_dir, session_id) == []


# --- properties ----------------------------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=15,
)


@given(st.binary(max_size=300))
def test_parse_task_of_any_bytes_never_raises(data: bytes) -> None:
    task = claude_tasks.parse_task("1", data)
    assert task is None or (isinstance(task.subject, str) and task.subject.strip() and isinstance(task.status, str))


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "subject": st.one_of(st.text(), JSON_VALUES),
            "status": st.one_of(st.sampled_from(["pending", "in_progress", "completed"]), JSON_VALUES),
            "id": JSON_VALUES,
            "blocks": JSON_VALUES,
        },
    )
)
def test_parse_task_takes_a_subject_and_a_status_only_when_both_are_strings(fields: dict) -> None:
    task = claude_tasks.parse_task("7", json.dumps({**json.loads(RECORDED_TASK), **fields}).encode())
    subject = fields.get("subject", "Handle quotes in escape()")
    status = fields.get("status", "pending")
    if isinstance(subject, str) and subject.strip() and isinstance(status, str):
        assert task is not None
        assert (task.number, task.subject, task.status) == ("7", subject, status)
    else:
        assert task is None


@pytest.mark.parametrize("name", ["².json", "١.json", "1.json.json", "+1.json", " 1.json", "1 .json", "1e3.json"])
def test_a_name_that_is_no_task_number_costs_only_itself(config_dir: Path, folder: Path, name: str) -> None:
    """Issue 32, point 10: `².json` passed `str.isdigit()` but not `int()`, and every handoff failed."""
    (folder / name).write_bytes(RECORDED_TASK)
    listed = claude_tasks.read_tasks(str(config_dir), SESSION_ID)
    assert [t.number for t in listed.tasks] == ["1"] and listed.whole and listed.unread == 0


def test_what_is_known_of_no_list(config_dir: Path, folder: Path) -> None:
    nowhere = claude_tasks.read_tasks("", SESSION_ID)  # no Claude Code folder: nothing is known
    assert (nowhere.tasks, nowhere.whole, nowhere.unread) == ([], False, 0)
    none = claude_tasks.read_tasks(str(config_dir), "another-session")  # it has no list at all
    assert (none.tasks, none.whole, none.unread) == ([], True, 0)
