"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI in tests.

Stdlib only. ``ModelServer`` listens on 127.0.0.1 (a free port) and answers ``POST /v1/messages``
both as one JSON body and as a server-sent event stream, exactly in the shapes the real API uses.
The replies of the *main conversation* come from a script (``text(...)``, ``bash(...)``,
``tool_use(...)``) consumed in order; when it runs out the model says ``FALLBACK_TEXT``. Side requests
Claude Code makes on its own (session titles, quota probes, token counts, settings fetches) get a
sensible answer without touching the script. Every request is recorded for the test to inspect.
"""

import itertools
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

FALLBACK_TEXT = "Nothing more to do."
SIDE_TEXT = "Scripted session"
REQUEST_TIMEOUT = 30.0  # seconds a connection may sit idle before the handler gives up on it

Json = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: Json


@dataclass(frozen=True)
class Reply:
    """One assistant turn: either text, or one or more tool calls (optionally preceded by text).

    With ``hold``, the answer waits until the event is set (at most ``HOLD_SECONDS``): the
    Claude Code process asking stays alive meanwhile, as a session whose model is thinking.
    """

    text: str = ""
    tool_calls: Sequence[ToolCall] = ()
    hold: Optional[threading.Event] = field(default=None, compare=False)

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_calls else "end_turn"


HOLD_SECONDS = 120.0


def held(until: threading.Event, reply: Reply) -> Reply:
    """``reply``, answered only once ``until`` is set."""
    return Reply(reply.text, reply.tool_calls, until)


def text(message: str) -> Reply:
    return Reply(text=message)


def tool_use(name: str, input: Json, *more: ToolCall) -> Reply:
    return Reply(tool_calls=(ToolCall(name, input), *more))


def bash(*commands: str) -> Reply:
    """A turn that runs each command through Claude Code's Bash tool (several commands: parallel calls)."""
    return Reply(tool_calls=tuple(ToolCall("Bash", {"command": c, "description": "scripted"}) for c in commands))


@dataclass
class Request:
    """One HTTP request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Optional[Json]
    main: bool = False  # part of the scripted main conversation

    @property
    def messages(self) -> list[Json]:
        return list((self.body or {}).get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in (self.body or {}).get("tools") or []]

    def texts(self) -> list[str]:
        """Every piece of text in the request: system prompt, messages, tool results."""
        body = self.body or {}
        return list(texts_of(body.get("system"))) + list(texts_of(self.messages))

    def all_text(self) -> str:
        return "\n".join(self.texts())

    def last_user_message(self) -> Optional[Json]:
        """The last ``user`` message (the very last message may be some other role, e.g. ``system``)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message
        return None

    def tool_results(self) -> list[Json]:
        """The ``tool_result`` blocks of the last user message, each with its content flattened to ``text``."""
        message = self.last_user_message() or {}
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        return [
            {**block, "text": "\n".join(texts_of(block.get("content")))}
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]


def texts_of(value: Any) -> Iterator[str]:
    """Yield the text found anywhere in a system prompt, message list or content block."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item)
    elif isinstance(value, dict):
        if isinstance(value.get("text"), str):
            yield value["text"]
        if "content" in value:
            yield from texts_of(value["content"])
        if value.get("type") == "tool_use":
            yield json.dumps(value.get("input"))


def is_main_conversation(body: Json) -> bool:
    """Whether a /v1/messages body belongs to the agent loop rather than a side request.

    Claude Code's agent loop (and a subagent's) always offers its tools, Bash among them; the side
    requests it makes on its own (title and topic generation, quota probes) offer none. Observed with
    2.1.330 under ``-p``: every POST /v1/messages?beta=true was the main loop (stream=true, 12 tools,
    model claude-opus-5-5), plus one ``HEAD /api/hello`` probe. Pass ``is_main=`` to classify otherwise.
    """
    return any(t.get("name") == "Bash" for t in body.get("tools") or [])


@dataclass
class ModelServer:
    """Start with ``start()`` (or as a context manager); ``url`` goes into ANTHROPIC_BASE_URL."""

    script: list[Reply] = field(default_factory=list)
    fallback: str = FALLBACK_TEXT
    is_main: Callable[[Json], bool] = is_main_conversation
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> "ModelServer":
        server = self

        class Handler(_Handler):
            model_server = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "ModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the model server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    # -- scripting and inspection ----------------------------------------------------------------

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    @property
    def main_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.main]

    @property
    def side_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if not r.main]

    def all_text(self) -> str:
        """All text of all main-conversation requests (what the model was shown)."""
        return "\n".join(r.all_text() for r in self.main_requests)

    def tool_results(self) -> list[Json]:
        """Every tool_result the model received, in order (each with its content flattened to ``text``)."""
        seen: dict[str, Json] = {}
        for request in self.main_requests:
            for message in request.messages:
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        seen.setdefault(block["tool_use_id"], {**block, "text": "\n".join(texts_of(block["content"]))})
        return list(seen.values())

    def summary(self) -> str:
        """One line per request, for assertion messages."""
        with self._lock:
            lines = []
            for r in self.requests:
                body = r.body or {}
                kind = "main" if r.main else "side"
                lines.append(f"{r.method} {r.path} {kind} model={body.get('model')} tools={len(r.tool_names)}")
            return "\n".join(lines)

    # -- answering -------------------------------------------------------------------------------

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, body: Json, main: bool) -> Reply:
        if not main:
            return text(SIDE_TEXT)
        with self._lock:
            return self.script.pop(0) if self.script else text(self.fallback)

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}_scripted{next(self._ids):06d}"

    def message(self, reply: Reply, model: str) -> Json:
        """The non-streaming /v1/messages response body for a reply."""
        content: list[Json] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            content.append({"type": "tool_use", "id": self._new_id("toolu"), "name": call.name, "input": call.input})
        return {
            "id": self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def events(self, reply: Reply, model: str) -> Iterator[Json]:
        """The server-sent events streaming the same message."""
        full = self.message(reply, model)
        yield {"type": "message_start", "message": {**full, "content": [], "stop_reason": None}}
        for index, block in enumerate(full["content"]):
            if block["type"] == "text":
                yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]},
                }
            else:
                start = {**block, "input": {}}
                yield {"type": "content_block_start", "index": index, "content_block": start}
                partial = json.dumps(block["input"])
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": partial},
                }
            yield {"type": "content_block_stop", "index": index}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": full["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": full["usage"]["output_tokens"]},
        }
        yield {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # keep pytest output clean; the server records requests instead

    def _read_body(self) -> Optional[Json]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}
        return parsed if isinstance(parsed, dict) else {"_json": parsed}

    def _handle(self) -> None:
        body = self._read_body()
        path = self.path.split("?", 1)[0]
        server = self.model_server
        main = self.command == "POST" and path == "/v1/messages" and server.is_main(body or {})
        request = Request(self.command, self.path, dict(self.headers.items()), body, main)
        server._record(request)
        if self.command == "HEAD":  # Claude Code's connectivity probe: HEAD /api/hello
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.command == "POST" and path == "/v1/messages":
            body = body or {}
            reply = server._next_reply(body, main)
            if reply.hold is not None:
                reply.hold.wait(HOLD_SECONDS)
            model = str(body.get("model") or "claude-scripted")
            if body.get("stream"):
                self._send_events(server.events(reply, model))
            else:
                self._send_json(200, server.message(reply, model))
        elif self.command == "POST" and path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": max(1, len(request.all_text()) // 4)})
        else:
            error = {"type": "not_found_error", "message": f"the scripted model does not serve {path}"}
            self._send_json(404, {"type": "error", "error": error})

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def _send_json(self, status: int, payload: Json) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_scripted")
        self.end_headers()
        self.wfile.write(data)

    def _send_events(self, events: Iterator[Json]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_scripted")
        self.end_headers()
        self.close_connection = True
        for event in events:
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
