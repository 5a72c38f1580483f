"""The scripted model server on its own (no Claude Code needed): the API shapes the CLI relies on."""

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, Optional

import pytest
from model_server import FALLBACK_TEXT, SIDE_TEXT, ModelServer, bash, text

MAIN_TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def call(server: ModelServer, path: str, body: Optional[dict[str, Any]] = None, method: str = "POST") -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read().decode()
        if response.headers["Content-Type"] == "text/event-stream":
            return [json.loads(line[len("data: ") :]) for line in raw.splitlines() if line.startswith("data: ")]
        return json.loads(raw) if raw else None


def conversation(stream: bool, tools: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 100,
        "stream": stream,
        "system": [{"type": "text", "text": "You are a test."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            {"role": "system", "content": "[blackboard] context"},
        ],
        "tools": MAIN_TOOLS if tools is None else tools,
    }


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


def test_non_streaming_replies_follow_the_script(server: ModelServer) -> None:
    server.add(bash("echo hi"), text("done"))

    first = call(server, "/v1/messages?beta=true", conversation(stream=False))
    (block,) = first["content"]
    assert first["stop_reason"] == "tool_use"
    assert block["type"] == "tool_use"
    assert block["name"] == "Bash"
    assert block["input"]["command"] == "echo hi"

    side = call(server, "/v1/messages", conversation(stream=False, tools=[]))
    assert side["content"] == [{"type": "text", "text": SIDE_TEXT}]  # a side request leaves the script alone

    second = call(server, "/v1/messages", conversation(stream=False))
    assert second["content"] == [{"type": "text", "text": "done"}]
    assert second["stop_reason"] == "end_turn"
    third = call(server, "/v1/messages", conversation(stream=False))
    assert third["content"] == [{"type": "text", "text": FALLBACK_TEXT}]

    assert [r.main for r in server.requests] == [True, False, True, True]
    assert "[blackboard] context" in server.main_requests[0].all_text()
    assert server.main_requests[0].last_user_message() == conversation(stream=False)["messages"][0]


def test_streaming_events_have_the_api_shape(server: ModelServer) -> None:
    server.add(bash("echo a", "echo b"))

    events = call(server, "/v1/messages", conversation(stream=True))

    types = [e["type"] for e in events]
    assert types[0] == "message_start"
    assert types[-2:] == ["message_delta", "message_stop"]
    assert types.count("content_block_start") == types.count("content_block_stop") == 2
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    assert [s["name"] for s in starts] == ["Bash", "Bash"]
    assert all(s["input"] == {} for s in starts)
    assert [json.loads(d["partial_json"])["command"] for d in deltas] == ["echo a", "echo b"]
    assert all(d["type"] == "input_json_delta" for d in deltas)
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_tool_results_are_read_from_the_conversation(server: ModelServer) -> None:
    body = conversation(stream=True)
    body["messages"] += [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "t1\nn1"}]},
        {"role": "system", "content": "a reminder after the user turn"},
    ]
    call(server, "/v1/messages", body)

    (result,) = server.main_requests[0].tool_results()
    assert result["text"] == "t1\nn1"
    assert [r["tool_use_id"] for r in server.tool_results()] == ["toolu_1"]


def test_other_endpoints_answer_without_touching_the_script(server: ModelServer) -> None:
    server.add(text("kept"))

    assert call(server, "/v1/messages/count_tokens", conversation(stream=False))["input_tokens"] > 0
    assert call(server, "/api/hello", method="HEAD") is None
    with pytest.raises(urllib.error.HTTPError) as error:
        call(server, "/api/claude_code/settings", method="GET")
    error.value.close()
    assert error.value.code == 404
    assert server.script == [text("kept")]
    assert not server.main_requests
