"""MCP: the tools an MCP server lists become whileai tools whose calls pass through the rollout's world.

``wai.mcp_tools(command, *args)`` starts the server over stdio (``mcp``'s ``stdio_client``), or
``wai.mcp_tools("http://127.0.0.1:8000/mcp")`` connects to a server already listening over streamable HTTP
(``streamable_http_client``), on a helper thread's event loop, lists its tools and gives them back as
``wai.Tool`` s (name, description and input schema as the server declares them). Called outside a rollout, a tool calls the server. Inside a rollout the world answers it
first: its scheduled fault, then the mock world's record, or, with ``simulate(..., execute=tools.execute)``,
the server's own answer. Any agent can use them: a model agent (``simulate("openai:...", tools=tools)``), your
own code calling ``tool(order_id=...)``, or a framework agent given ``tools``.

A server's answer is read as the tool result: its structured content when it sends one, else its text (JSON text
decoded); an answer flagged ``isError`` becomes ``{"status": "error", "error": <text>}``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from whileai_core.adapters.base import NOT_ROUTED, as_text, require, schema_tool, world_answer
from whileai_core.defaults import MCP_CALL_TIMEOUT_S
from whileai_core.errors import BackendError, InvalidArgument
from whileai_core.tools import Tool


def _signature(parameters: Mapping[str, Any]) -> inspect.Signature:
    """Keyword-only parameters from a JSON schema (required ones without a default)."""
    required = set(parameters.get("required") or ())
    params = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                default=inspect.Parameter.empty if name in required else None)
              for name in sorted(parameters.get("properties") or {}, key=lambda n: n not in required)]
    return inspect.Signature(params)


def _first_error(exc: BaseException) -> str:
    """The innermost first error of an exception group (anyio's task groups wrap a transport's error)."""
    while isinstance(getattr(exc, "exceptions", None), (list, tuple)) and exc.exceptions:  # type: ignore[attr-defined]
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return f"{type(exc).__name__}: {exc}"


def _result(answer: Any) -> Any:
    """A ``CallToolResult`` as a tool result."""
    structured = getattr(answer, "structured_content", None)
    if structured is None:
        structured = getattr(answer, "structuredContent", None)
    text = "".join(getattr(c, "text", "") or "" for c in getattr(answer, "content", ()) or ())
    if getattr(answer, "is_error", None) or getattr(answer, "isError", None):
        return {"status": "error", "error": text}
    if structured is not None:
        return structured.get("result", structured) if set(structured) == {"result"} else structured
    try:
        return json.loads(text)
    except ValueError:
        return text


_hooked = threading.Lock()
_installed = False
_server_call: Any = None  # ``ClientSession.call_tool`` as the SDK defines it (before the hook)


def install_client_hook() -> None:
    """Route an agent's own MCP client calls through the rollout's world (once per process; ``mcp_tools``
    installs it).

    ``mcp.ClientSession.call_tool`` (what ``mcp.Client`` and the frameworks' MCP integrations call) is answered,
    inside a rollout, by the world for a tool it knows (its fault first, then its record or ``execute=``'s
    answer), as a ``CallToolResult`` whose text is the answer's JSON (and its structured content, a dict
    answer); the call is recorded as a step. Outside a rollout, or for a tool the world does not know, the
    server answers. ``MCPTools``' own calls (a tool called outside a rollout, ``execute``) always reach the
    server."""
    global _installed, _server_call
    with _hooked:
        if _installed:
            return
        mcp = require("mcp", "mcp")
        session = mcp.ClientSession
        call_tool = _server_call = session.call_tool

        async def routed(self: Any, name: str, arguments: dict[str, Any] | None = None, *args: Any,
                         **kwargs: Any) -> Any:
            answer = world_answer(name, dict(arguments or {}))
            if answer is NOT_ROUTED:
                return await call_tool(self, name, arguments, *args, **kwargs)
            return _answer_result(answer)

        session.call_tool = routed
        _installed = True


def _answer_result(answer: Any) -> Any:
    """A world answer as the ``CallToolResult`` a server would send."""
    types = require("mcp.types", "mcp")
    return types.CallToolResult(content=[types.TextContent(type="text", text=as_text(answer))],
                                structured_content=answer if isinstance(answer, dict) else None, is_error=False)


def is_url(command: str) -> bool:
    """Whether ``mcp_tools``' first argument is a streamable-HTTP endpoint rather than a command."""
    return command.startswith(("http://", "https://"))


class MCPTools:
    """The tools of one MCP server, started over stdio or reached over streamable HTTP (see the module
    docstring); a list of ``wai.Tool`` s (iterate, index, ``len``), a context manager, and ``execute`` for
    ``simulate(execute=...)``.

    Args:
        command: the server's executable (e.g. ``sys.executable``), or its streamable-HTTP URL
            (``http://127.0.0.1:8000/mcp``).
        *args: its arguments (e.g. the server script's path); none with a URL.
        env: its environment (default: the MCP SDK's safe default); not with a URL.
        timeout_s: the longest a call may take.
    """

    def __init__(self, command: str, *args: str, env: Mapping[str, str] | None = None,
                 timeout_s: float = MCP_CALL_TIMEOUT_S) -> None:
        self.mcp = require("mcp", "mcp")
        self.url = command if is_url(command) else None
        if self.url is not None and (args or env is not None):
            raise InvalidArgument("mcp_tools(url) connects to a server already listening: no arguments or env")
        self.params = None if self.url is not None else self.mcp.StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None)
        self.where = self.url or command
        self.timeout_s = timeout_s
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="whileai-mcp", daemon=True)
        self.thread.start()
        self._stop: asyncio.Event | None = None
        self.session: Any = None
        self._listed: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._serving = asyncio.run_coroutine_threadsafe(self._serve(), self.loop)
        try:
            listed = self._wait(self._listed)
        except Exception as exc:
            self.close()
            if isinstance(exc, BackendError):
                raise
            raise BackendError(f"the MCP server {self.where} did not start or list its tools: "
                               f"{_first_error(exc)}") from exc
        except BaseException:
            self.close()
            raise
        self.tools = [self._tool(t) for t in listed]
        install_client_hook()

    async def _serve(self) -> None:
        """Hold the session open on the helper loop until ``close``."""
        self._stop = asyncio.Event()
        try:
            async with self._transport() as streams, self.mcp.ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                self.session = session
                self._listed.set_result((await session.list_tools()).tools)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller waiting on the listing
            if not self._listed.done():
                self._listed.set_exception(exc)

    def _transport(self) -> Any:
        """The client transport: stdio to the started server, or streamable HTTP to the URL."""
        if self.url is None:
            return self.mcp.stdio_client(self.params)
        http = require("mcp.client.streamable_http", "mcp")
        return http.streamable_http_client(self.url)

    def _wait(self, future: Any) -> Any:
        try:
            return future.result(timeout=self.timeout_s)
        except (TimeoutError, concurrent.futures.TimeoutError):
            raise BackendError(f"the MCP server {self.where} did not answer in {self.timeout_s} s") from None

    def _tool(self, listed: Any) -> Tool:
        schema = getattr(listed, "input_schema", None) or getattr(listed, "inputSchema", None) or {}
        made = schema_tool(listed.name, listed.description, {k: v for k, v in schema.items() if k != "title"})
        name = listed.name

        def call(**arguments: Any) -> Any:
            return self.call(name, arguments)

        call.__signature__ = _signature(made.parameters)  # type: ignore[attr-defined]
        call.__name__ = name
        return Tool(made.name, made.description, made.parameters, call, None, made.original_name)

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> Any:
        """Call a tool on the server (blocks until it answers)."""
        if self.session is None:
            raise BackendError("the MCP server is closed")
        call_tool = _server_call or self.mcp.ClientSession.call_tool  # the server's answer, never the world's:
        answer = self._wait(asyncio.run_coroutine_threadsafe(  # the task would inherit the caller's rollout
            call_tool(self.session, name, dict(arguments or {})), self.loop))
        return _result(answer)

    def execute(self, name: str, arguments: Any = None) -> Any:
        """``simulate(execute=...)``: the server answers the calls the fault schedule lets through."""
        if isinstance(arguments, str):
            arguments = json.loads(arguments) if arguments.strip() else {}
        return self.call(name, arguments)

    def close(self) -> None:
        """Stop the server and the helper thread."""
        if self._stop is not None and self.loop.is_running():
            self.loop.call_soon_threadsafe(self._stop.set)
            with contextlib.suppress(Exception):  # a server that dies on the way out is closed all the same
                self._serving.result(timeout=self.timeout_s)
        self.session = None
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=self.timeout_s)

    def __enter__(self) -> MCPTools:  # noqa: PYI034 - typing.Self is Python 3.11+
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)

    def __getitem__(self, i: int) -> Tool:
        return self.tools[i]


def mcp_tools(command: str, *args: str, env: Mapping[str, str] | None = None,
              timeout_s: float = MCP_CALL_TIMEOUT_S) -> MCPTools:
    """Start an MCP server over stdio (or connect to one over streamable HTTP) and give back its tools as
    whileai tools (see ``MCPTools``).

    Args:
        command: the server's executable, or the URL of a server listening over streamable HTTP
            (``http://127.0.0.1:8000/mcp``).
        *args: its arguments (none with a URL).
        env: its environment (not with a URL).
        timeout_s: the longest a call may take (default ``MCP_CALL_TIMEOUT_S``).

    Returns:
        An ``MCPTools``: use it as ``tools=`` and close it (or use ``with``) when done.

    Raises:
        MissingExtra: the ``mcp`` package is not installed.
        BackendError: the server did not start (or answer at the URL) or list its tools in time.
        InvalidArgument: a URL with arguments or ``env``.

    Example:
        ```python
        with wai.mcp_tools(sys.executable, "shop_server.py") as tools:
            data = wai.simulate(agent, tools=tools, execute=tools.execute, simulator=False, budget=40)
        ```
    """
    return MCPTools(command, *args, env=env, timeout_s=timeout_s)
