"""The stdio transport of ``citeseal serve``: every request received before EOF is answered.

The SDK's stdio loop (``MCPServer.run("stdio")``) ends at EOF on stdin and *cancels* the
requests still running (``JSONRPCDispatcher.run``: "Cancel in-flight handlers"): a host that
writes six ``audit_answer`` requests and closes stdin gets two answers and exit 0 — requests
dropped without a word. That is a silent drop, so :func:`serve_stdio` runs the same SDK loop
over the same SDK streams (``mcp.server.stdio.stdio_server``) with two thin wrappers:

* :class:`_Answered` (write side) notes each response or error the server writes, by id;
* :class:`_DrainAtEof` (read side) notes each request read, by id, and holds the EOF back
  until every noted request has been answered (or cancelled by the client with
  ``notifications/cancelled``, after which the SDK sends no answer); only then does the loop
  see EOF and exit cleanly.

Requests are answered in whatever order they finish (as before); nothing else changes. The one
SDK name used that is not public is ``MCPServer._lowlevel_server``, exactly as the SDK's own
``run_stdio_async`` uses it.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.message import SessionMessage


class _Pending:
    """Ids of requests read and not yet answered; :meth:`drained` waits until there are none."""

    def __init__(self) -> None:
        self._ids: set[str | int] = set()
        self._empty = anyio.Event()
        self._empty.set()

    def add(self, request_id: str | int) -> None:
        if not self._ids:
            self._empty = anyio.Event()
        self._ids.add(request_id)

    def discard(self, request_id: str | int) -> None:
        self._ids.discard(request_id)
        if not self._ids:
            self._empty.set()

    async def drained(self) -> None:
        while self._ids:
            await self._empty.wait()


def _cancelled_id(message: Any) -> str | int | None:
    from mcp.types import JSONRPCNotification

    if isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
        request_id = (message.params or {}).get("requestId")
        return request_id if isinstance(request_id, str | int) else None
    return None


class _Wrapped:
    """One of the SDK's streams with :class:`_Pending` beside it; closing closes the stream."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _DrainAtEof(_Wrapped):
    """The SDK's read stream, noting requests and holding EOF until they are all answered."""

    @property
    def last_context(self) -> Any:  # the SDK reads the sender's context duck-typed
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        from mcp.shared.message import SessionMessage
        from mcp.types import JSONRPCRequest

        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._pending.drained()
            raise
        if isinstance(item, SessionMessage):
            if isinstance(item.message, JSONRPCRequest):
                self._pending.add(item.message.id)
            elif (cancelled := _cancelled_id(item.message)) is not None:
                self._pending.discard(cancelled)
        return item

    def __aiter__(self) -> _DrainAtEof:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _Answered(_Wrapped):
    """The SDK's write stream, noting each answer (a response or an error) by its id."""

    async def send(self, item: SessionMessage, /) -> None:
        from mcp.types import JSONRPCError, JSONRPCResponse

        await self._inner.send(item)
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self._pending.discard(message.id)


async def _serve(server: MCPServer) -> None:
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    pending = _Pending()
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(
            _DrainAtEof(read_stream, pending),
            _Answered(write_stream, pending),
            lowlevel.create_initialization_options(),
        )


def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdin/stdout until EOF, answering every request read before it."""
    anyio.run(_serve, server)
