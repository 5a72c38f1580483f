"""The session lifecycle across real `claude` runs: next session, --continue, /clear, /compact, subagents.

Each test drives the pinned Claude Code CLI against the scripted model and checks what the plugin left
on disk and what reached the model. What Claude Code itself does (ids, hook ``source`` values, order of
hooks) is recorded in docs/adr/0010-claude-code-resume-clear-compact.md; the assertions that pin those
facts say so in their messages, so a new Claude Code version that changes them fails loudly.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from claude_cli import ClaudeRunner
from model_server import ModelServer, Request, bash, text, texts_of, tool_use

from helpers import make_git_project

pytestmark = pytest.mark.e2e

SESSION_HEADER = "X-Claude-Code-Session-Id"
SUBAGENT_MARKER = "cc_is_subagent=true"  # in the billing line of a subagent request's system prompt (2.1.330, 2.1.332)
COMPACTION_MARKER = "Your task is to create a detailed summary of the conversation so far"
SUMMARY = "<analysis>scripted</analysis>\n<summary>1. Primary Request and Intent: scripted summary</summary>"


def _ok(result: Any, model: ModelServer) -> None:
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{model.summary()}"


def _session_id(request: Request) -> str:
    return request.headers[SESSION_HEADER]


def _sessions(root: Path, project: str = "widget") -> Path:
    return root / "acme" / project / ".blackboard" / "sessions"


def _meta(root: Path, session_id: str) -> dict[str, Any]:
    return json.loads((_sessions(root) / session_id / "_meta.json").read_text())


def _after_last_user_message(request: Request) -> str:
    """The text of the messages after the last ``user`` one: where Claude Code puts fresh hook context."""
    messages = request.messages
    last = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    return "\n".join(texts_of(messages[last + 1 :]))


def _blackboard_contexts(text_: str) -> list[str]:
    """Each piece of context the plugin injected, from its ``[blackboard]`` header to the next one."""
    return text_.split("[blackboard]")[1:]


def _is_subagent(request: Request) -> bool:
    return SUBAGENT_MARKER in "\n".join(texts_of((request.body or {}).get("system")))


def _end_session_with_task(run_claude: ClaudeRunner, model: ModelServer, cwd: Path, task: str) -> str:
    """A whole `claude -p` session that adds ``task`` to its board; returns its session id."""
    first = len(model.main_requests)
    model.add(bash(f'blackboard task add "{task}"'), text("added"))
    result = run_claude(["-p", "add a task"], cwd=cwd, model=model)
    _ok(result, model)
    requests = model.main_requests[first:]
    (tool_result,) = requests[1].tool_results()
    assert tool_result["text"].strip() == "t1", tool_result["text"]
    return _session_id(requests[0])


def test_the_next_session_receives_the_handoff_of_the_last_one(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    earlier = _end_session_with_task(run_claude, model, project, "carry me over")
    model.add(text("hello"))

    result = run_claude(["-p", "hi"], cwd=project, model=model)

    _ok(result, model)
    assert result.stdout.strip() == "hello"
    first = model.main_requests[2]
    assert _session_id(first) != earlier
    shown = first.all_text()
    assert earlier in shown, shown[:3000]
    assert "carry me over" in shown, shown[:3000]
    assert _meta(root, earlier)["status"] == "ended"
    assert _meta(root, _session_id(first))["status"] == "ended"


def test_continue_reopens_the_same_session_and_reinjects_its_board(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    earlier = _end_session_with_task(run_claude, model, project, "carry me over")
    model.add(bash("blackboard show --json"), text("two done"))

    result = run_claude(["-p", "two", "--continue"], cwd=project, model=model)

    _ok(result, model)
    assert result.stdout.strip() == "two done"
    resumed, after_tool = model.main_requests[2:]
    assert _session_id(resumed) == earlier, "the pinned Claude Code keeps the session id on --continue"
    assert [p.name for p in _sessions(root).iterdir()] == [earlier]  # reopened, not a new board

    fresh = _after_last_user_message(resumed)  # the history also holds the `task add` command: look past it
    assert earlier in fresh, fresh[:3000]
    assert "carry me over" in fresh, fresh[:3000]

    (tool_result,) = after_tool.tool_results()
    during = json.loads(tool_result["text"])["meta"]
    assert during["session_id"] == earlier
    assert during["status"] == "active", during
    assert during["ended"] is None, during
    assert len(during["resumed_at"]) == 1, during

    after = _meta(root, earlier)
    assert after["status"] == "ended"
    assert after["resumed_at"] == during["resumed_at"]
    assert after["parent_session_id"] is None


def test_a_forked_continue_is_a_new_session_linked_to_its_parent(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    earlier = _end_session_with_task(run_claude, model, project, "carry me over")
    model.add(text("forked"))

    result = run_claude(["-p", "two", "--continue", "--fork-session"], cwd=project, model=model)

    _ok(result, model)
    forked = _session_id(model.main_requests[2])
    assert forked != earlier, "the pinned Claude Code gives a forked --continue a new session id"
    assert _meta(root, earlier)["resumed_at"] == []  # the parent was not reopened
    assert _meta(root, forked)["parent_session_id"] == earlier


def test_clear_starts_a_new_session_linked_to_the_cleared_one(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    cleared = _end_session_with_task(run_claude, model, project, "carry me over")
    requests_before = len(model.requests)

    result = run_claude(["-p", "/clear", "--continue"], cwd=project, model=model)

    _ok(result, model)
    assert len(model.requests) == requests_before, "/clear under -p makes no model request\n" + model.summary()
    (new,) = [p.name for p in _sessions(root).iterdir() if p.name != cleared]
    old_meta, new_meta = _meta(root, cleared), _meta(root, new)
    assert old_meta["end_reason"] == "clear", old_meta
    assert old_meta["status"] == "ended", old_meta
    assert len(old_meta["resumed_at"]) == 1  # --continue reopened it before /clear ended it
    assert new_meta["source"] == "clear", new_meta
    assert new_meta["parent_session_id"] == cleared, new_meta
    handoff = root / "acme" / "widget" / ".blackboard" / "handoff"
    assert (handoff / f"handoff-{cleared}.md").is_file()
    assert (handoff / f"handoff-{new}.md").is_file()


def test_compact_keeps_the_session_and_reinjects_its_open_tasks(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    session = _end_session_with_task(run_claude, model, project, "survive the summary")
    model.add(text(SUMMARY))  # the compaction request is a main-loop request (it offers the same tools)

    compacted = run_claude(["-p", "/compact", "--continue"], cwd=project, model=model)

    _ok(compacted, model)
    (summary_request,) = model.main_requests[2:]
    assert COMPACTION_MARKER in "\n".join(texts_of([summary_request.last_user_message()]))
    assert _session_id(summary_request) == session, "the pinned Claude Code keeps the session id on /compact"
    model.add(text("after compaction"))

    result = run_claude(["-p", "next", "--continue"], cwd=project, model=model)

    _ok(result, model)
    assert result.stdout.strip() == "after compaction"
    (after,) = model.main_requests[3:]
    assert _session_id(after) == session
    assert "scripted summary" in after.all_text()  # the history now starts from the summary
    fresh = _after_last_user_message(after)
    compaction = [c for c in _blackboard_contexts(fresh) if "compaction" in c.splitlines()[0]]
    assert compaction, f"no context re-injected after compaction in:\n{fresh[:4000]}"
    assert session in compaction[0], compaction[0]
    assert "survive the summary" in compaction[0], compaction[0]
    assert [p.name for p in _sessions(root).iterdir()] == [session]
    meta = _meta(root, session)
    assert meta["status"] == "ended", meta
    assert len(meta["resumed_at"]) == 2, meta  # two --continue; compact is no resume


def test_another_project_sees_nothing_of_the_first(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path, tmp_path: Path
) -> None:
    widget = _end_session_with_task(run_claude, model, project, "widget secret plan")
    gadget = make_git_project(tmp_path / "gadget", remote="git@github.com:acme/gadget.git")
    model.add(text("gadget here"))

    result = run_claude(["-p", "hi"], cwd=gadget, model=model)

    _ok(result, model)
    first = model.main_requests[2]
    shown = first.all_text()
    assert "[blackboard]" in shown, shown[:3000]
    assert "acme/gadget" in shown, shown[:3000]
    for leak in (widget, "widget secret plan", "acme/widget"):
        assert leak not in shown, leak
    gadget_session = _session_id(first)
    assert [p.name for p in _sessions(root, "gadget").iterdir()] == [gadget_session]
    assert [p.name for p in _sessions(root).iterdir()] == [widget]


@pytest.mark.parametrize("broken", ["regular-file", "under-proc"])
def test_a_broken_root_never_breaks_the_session(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, isolated_home: Path, tmp_path: Path, broken: str
) -> None:
    if broken == "regular-file":
        path = tmp_path / "not-a-directory"
        path.write_text("keep me\n")
    else:
        path = Path("/proc/blackboard-e2e-root")  # unwritable even for root
    model.add(text("still answering"))

    result = run_claude(["-p", "hi"], cwd=project, model=model, extra_env={"BLACKBOARD_ROOT": str(path)})

    _ok(result, model)
    assert result.stdout.strip() == "still answering"
    assert len(model.main_requests) == 1, model.summary()
    assert "Traceback" not in model.all_text()
    if broken == "regular-file":
        assert path.read_text() == "keep me\n"
    else:
        assert not path.exists()
    assert not (isolated_home / ".claude" / "blackboard").exists()  # no silent fallback to the default root


def test_a_subagent_writes_to_the_same_sessions_board(
    run_claude: ClaudeRunner, model: ModelServer, project: Path, root: Path
) -> None:
    agent = {
        "description": "leave a note",
        "prompt": "Leave a note on the blackboard.",
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    model.add(
        tool_use("Agent", agent),  # main: start the subagent
        bash('blackboard --author researcher note "from the subagent"'),  # subagent, first turn
        text("noted"),  # subagent, final report
        text("main done"),  # main, after the Agent tool result
    )

    result = run_claude(["-p", "delegate"], cwd=project, model=model)

    _ok(result, model)
    assert result.stdout.strip() == "main done"
    requests = model.main_requests
    assert "Agent" in requests[0].tool_names, requests[0].tool_names
    assert [_is_subagent(r) for r in requests] == [False, True, True, False], model.summary()
    session = _session_id(requests[0])
    assert {_session_id(r) for r in requests} == {session}  # a subagent shares its parent's session id
    (tool_result,) = requests[2].tool_results()
    assert tool_result["text"].strip() == "n1", tool_result["text"]
    notes = (_sessions(root) / session / "session-notes.md").read_text()
    assert "from the subagent" in notes, notes
    assert "- author: researcher" in notes, notes
    assert [p.name for p in _sessions(root).iterdir()] == [session]
