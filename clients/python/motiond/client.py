"""The asyncio client: one connection to motiond's Unix socket, kept open across restarts.

A program makes one `Client`, connects it, and then asks (`await client.get("card.position")`)
or listens (`async for event in client.subscribe("card.*")`). The client reconnects by itself
when motiond goes (a restart, a `bye`), waiting longer after each failure up to a cap, and
subscribes again to what its subscriptions hold, so a loop over a subscription carries on
through a restart. It speaks protocol v1 (docs/protocol.md).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import random
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Iterable, Optional

from .errors import MotiondError
from .events import Event, Pose

#: Where motiond listens unless told otherwise (`[daemon] socket`).
DEFAULT_SOCKET = "/run/motiond/motiond.sock"

#: A reply can be long (`devices`, `metrics`); the reader's line limit is well above motiond's.
LINE_LIMIT = 16 * 1024 * 1024

logger = logging.getLogger("motiond")

StateCallback = Callable[[str, dict[str, Any]], None]
EventCallback = Callable[[dict[str, Any]], None]
ErrorCallback = Callable[[Exception], None]


def default_socket() -> str:
    """$MOTIOND_SOCKET, as motionctl reads it, else motiond's default path."""
    return os.environ.get("MOTIOND_SOCKET") or DEFAULT_SOCKET


def glob_matches(pattern: str, name: str) -> bool:
    """Whether a protocol glob matches a stream's name: `*` any characters, dots included,
    `?` any one, nothing else special (unlike fnmatch's brackets)."""
    # Dynamic programming over both, so a long pattern never costs more than lengths multiplied.
    previous = [True] + [False] * len(name)
    for symbol in pattern:
        current = [previous[0] and symbol == "*"] + [False] * len(name)
        for index, character in enumerate(name, start=1):
            if symbol == "*":
                current[index] = previous[index] or current[index - 1]
            else:
                current[index] = previous[index - 1] and (symbol == "?" or symbol == character)
        previous = current
    return previous[-1]


@dataclass
class _Request:
    """A request waiting for its reply: sent on the current connection, or queued for the next."""
    message: dict[str, Any]
    future: asyncio.Future[Any]
    sent: bool = False


class Subscription:
    """The events of the streams matching some patterns, as an async iterator.

    Made by `Client.subscribe`. Subscribing happens on the first step of the iteration (or
    `await subscription.ready()`), which raises `MotiondError` if motiond refuses (a pattern
    matching no stream is `unknown_stream`). Leaving the loop, `close()` or the end of an
    `async with` unsubscribes. Events wait in a buffer of `buffer` events; a consumer that
    falls further behind loses the oldest (counted in `dropped`), as motiond itself keeps
    slow clients current rather than complete.

    Cancelling a step of the loop ends the subscription too: the cancellation goes through
    the iterator, which closes, so `asyncio.wait_for(anext(iterator), 1)` that times out
    unsubscribes. To wait with a timeout and stay subscribed, use `get()`, which is
    cancel-safe: `await asyncio.wait_for(subscription.get(), 1)`."""

    def __init__(self, client: "Client", patterns: list[str], optional: bool, buffer: int) -> None:
        self._client = client
        #: The names or globs, as given.
        self.patterns = patterns
        #: Whether a pattern that matches no stream is no error (as motiond.js's optional).
        self.optional = optional
        #: Events lost because the consumer fell `buffer` events behind.
        self.dropped = 0
        self._buffer: collections.deque[Event] = collections.deque()
        self._limit = max(1, buffer)
        self._arrived = asyncio.Event()
        self._closed = False
        self._subscribing: Optional[asyncio.Future[Any]] = None
        #: Whether motiond has accepted the subscription once: only then is it restored after
        #: a reconnect and unsubscribed at the end.
        self._subscribed = False
        #: Where events go instead of the buffer: `SyncClient` hands them straight to its own
        #: bounded queue, so that they wait in one place, under one limit.
        self._sink: Optional[Callable[[Event], None]] = None

    def matches(self, stream: str) -> bool:
        """Whether an event of `stream` is this subscription's."""
        return any(glob_matches(pattern, stream) for pattern in self.patterns)

    async def ready(self) -> list[str]:
        """Subscribes, once; the names motiond subscribed."""
        if self._subscribing is None:
            self._subscribing = asyncio.ensure_future(self._client._subscribe(self))
        result = await asyncio.shield(self._subscribing)
        return list(result.get("streams", []))

    def _deliver(self, event: Event) -> None:
        if self._closed:
            return
        if self._sink is not None:
            self._sink(event)
            return
        if len(self._buffer) >= self._limit:
            self._buffer.popleft()
            self.dropped += 1
        self._buffer.append(event)
        self._arrived.set()

    async def get(self) -> Event:
        """The next event; raises `StopAsyncIteration` once closed. Cancel-safe: cancelled
        (by a timeout), it takes no event and leaves the subscription as it was."""
        await self.ready()
        while not self._buffer:
            if self._closed:
                raise StopAsyncIteration
            self._arrived.clear()
            await self._arrived.wait()
        return self._buffer.popleft()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        try:
            while True:
                try:
                    event = await self.get()
                except StopAsyncIteration:
                    return
                yield event
        finally:
            # A loop left by break or an exception: its generator is closed, and with it this.
            self.close()

    def close(self) -> None:
        """Stops the events and unsubscribes the patterns no other subscription holds."""
        if self._closed:
            return
        self._closed = True
        self._arrived.set()
        self._client._forget(self)

    async def __aenter__(self) -> "Subscription":
        await self.ready()
        return self

    async def __aexit__(self, *exception: object) -> None:
        self.close()


class Client:
    """A connection to motiond that reconnects by itself; see the module's documentation.

    `path` is the socket (default: $MOTIOND_SOCKET, else /run/motiond/motiond.sock). The
    rest are keywords:

    - `timeout` (5 s) bounds every request, from the call to the reply (a request made while
      disconnected waits for the next connection within it), and `connect()`'s wait.
    - `first_retry` (0.25 s), `max_retry` (10 s): the back-off waits `first_retry` seconds
      after a failure, doubling up to `max_retry`, each time a random point in its upper half
      so that restarted kiosks do not all knock at once.
    - `stable_after` (10 s): a connection counts as a success, and the back-off starts again
      from `first_retry`, only once it has lived this long after its hello; one that ends
      sooner is a failure, so a server that says hello and drops at once is retried ever more
      slowly, not every `first_retry` seconds for ever.
    - `token` is sent with `auth` on each connection, for control over the WebSocket's rules
      (the Unix socket grants control by the peer's user).
    - `on_state(state, detail)` hears each change of `state`; `on_event(line)` every line
      that is neither a reply nor a stream's event (`device`, `bye`, `calibration`);
      `on_error(error)` what failed with no caller to tell, by default a log warning: a
      subscription refused after a reconnect, a callback that raised, and each line from the
      server that the client cannot understand (`MotiondError` `bad_line`; the line is
      skipped and the connection goes on). All three run on the event loop, between lines."""

    def __init__(self, path: Optional[str] = None, *, timeout: float = 5.0,
                 first_retry: float = 0.25, max_retry: float = 10.0, stable_after: float = 10.0,
                 token: Optional[str] = None, on_state: Optional[StateCallback] = None,
                 on_event: Optional[EventCallback] = None,
                 on_error: Optional[ErrorCallback] = None) -> None:
        #: The socket's path.
        self.path = path or default_socket()
        self.timeout = timeout
        self.first_retry = first_retry
        self.max_retry = max_retry
        self.stable_after = stable_after
        self.token = token
        self.on_state = on_state
        self.on_event = on_event
        self.on_error = on_error or (lambda error: logger.warning("motiond: %s", error))
        #: `"connecting"`, `"open"` (hello received, subscriptions restored), `"waiting"` (to
        #: reconnect) or `"closed"` (by `close()`); `"idle"` before `connect()`.
        self.state = "idle"
        #: The current connection's hello (`streams`, `version`, `control`), or None between.
        self.hello: Optional[dict[str, Any]] = None
        #: Whether this connection may use the control operations.
        self.control = False
        #: How many connections said hello: a program can tell a reconnect by it.
        self.connections = 0
        #: How many lines from the server were skipped as not understood (each told to on_error).
        self.lines_skipped = 0
        self._next_id = 1
        self._pending: dict[int, _Request] = {}
        self._subscriptions: list[Subscription] = []
        self._writer: Optional[asyncio.StreamWriter] = None
        self._task: Optional[asyncio.Task[None]] = None
        self._failures = 0
        #: When the current connection said hello (the loop's clock), for `stable_after`.
        self._hello_at: Optional[float] = None
        self._opened: Optional[asyncio.Event] = None
        self._last_reason: Optional[str] = None
        #: Why the last attempt to connect failed, for connect()'s error to carry its errno.
        self._last_error: Optional[OSError] = None

    # The connection

    async def connect(self) -> dict[str, Any]:
        """Starts the connection and waits, within `timeout`, for the first hello. Returns
        the hello.

        If motiond could not be reached by then, it stops trying and raises `MotiondError`
        with code `disconnected`, whose message ends with the last failure's words and whose
        `__cause__` is that failure's `OSError` when there was one: `FileNotFoundError`
        (errno ENOENT) when there is no socket at the path, `ConnectionRefusedError`
        (ECONNREFUSED) when the socket is there but nothing listens on it, `PermissionError`
        (EACCES) when this user may not open it. A server that accepted but never said hello
        leaves `__cause__` None."""
        if self._task is None:
            self._opened = asyncio.Event()
            self._task = asyncio.create_task(self._run())
            self._task.add_done_callback(self._ended)
        assert self._opened is not None
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    await self._opened.wait()
                    if self.hello is not None:
                        return self.hello
                    # That connection went between its opening and now: wait for the next.
                    self._opened.clear()
        except TimeoutError:
            reason, cause = self._last_reason, self._last_error
            await self.close()
            raise MotiondError("disconnected", f"cannot connect to motiond at {self.path}"
                               + (f": {reason}" if reason else "")) from cause

    async def close(self) -> None:
        """Closes the connection for good: no reconnect; waiting requests fail `disconnected`
        and subscriptions end."""
        self._set_state("closed")
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._fail_pending("the client was closed", every=True)
        for subscription in list(self._subscriptions):
            subscription.close()

    async def __aenter__(self) -> "Client":
        await self.connect()
        return self

    async def __aexit__(self, *exception: object) -> None:
        await self.close()

    def _set_state(self, state: str, **detail: Any) -> None:
        if self.state == "closed" and state != "closed":
            return
        self.state = state
        if self.on_state is not None:
            try:
                self.on_state(state, {"control": self.control, **detail})
            except Exception as error:  # noqa: BLE001 — the program's, and no reason to stop reconnecting
                self._report(error)

    def _report(self, error: Exception) -> None:
        """Tells on_error; one that raises itself is logged, never the end of the connection."""
        try:
            self.on_error(error)
        except Exception:  # noqa: BLE001
            logger.exception("motiond: on_error raised when told %s", error)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The connection's task ended. Only close() ends it; should a bug end it otherwise,
        the program is told and the client closes, rather than stay `open` and deaf."""
        if task.cancelled() or task.exception() is None:
            return
        error = task.exception()
        assert error is not None
        self._report(error)
        self._set_state("closed", reason=f"the client failed: {error!r}")
        self._fail_pending(f"the client failed ({error!r})", every=True)
        for subscription in list(self._subscriptions):
            subscription.close()

    def _retry_delay(self) -> float:
        """Doubling from first_retry up to max_retry, then a random point in its upper half."""
        # The exponent is capped: after 1024 failures (three hours at 10 s), 2 ** failures
        # would no longer convert to a float, and the OverflowError would end the reconnecting.
        ceiling = min(self.max_retry, self.first_retry * 2 ** min(self._failures, 64))
        return ceiling / 2 + random.random() * ceiling / 2

    async def _run(self) -> None:
        """Connects, reads until the connection ends, waits, and again, until closed."""
        while self.state != "closed":
            self._set_state("connecting")
            reason: Optional[str] = None
            try:
                reader, writer = await asyncio.open_unix_connection(self.path, limit=LINE_LIMIT)
            except OSError as error:
                self._last_error = error
                reason = error.strerror or str(error)
            else:
                self._last_error = None
                reason = await self._read(reader, writer)
            # Only a connection that lived a while makes the next wait short again: resetting
            # at the hello would let a server that greets and drops at once have a reconnect
            # every first_retry seconds for ever.
            if self._hello_at is not None and asyncio.get_running_loop().time() - self._hello_at >= self.stable_after:
                self._failures = 0
            self._hello_at = None
            self._lost(reason)
            if self.state == "closed":
                return
            delay = self._retry_delay()
            self._failures += 1
            self._set_state("waiting", retry_in=delay, reason=reason)
            await asyncio.sleep(delay)

    async def _read(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Optional[str]:
        """Reads one connection's lines until it ends; says why it ended.

        Whatever a line holds, the reading goes on: a line the client cannot understand is
        counted in `lines_skipped` and told to on_error as `bad_line`, and a callback that
        raises is told to on_error too. A reader that died on one line would leave the client
        `open` and deaf, its requests timing out, with nobody told why."""
        self._writer = writer
        reason: Optional[str] = None
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return reason or "motiond closed the connection"
                try:
                    message = _parse(line)
                    if message.get("event") == "bye":
                        reason = str(message.get("reason", "bye"))
                    self._receive(message)
                except _BadLine as bad:
                    self.lines_skipped += 1
                    self._report(MotiondError("bad_line", f"{bad}; skipped {_excerpt(line)}"))
                except Exception as error:  # noqa: BLE001 — a callback's own error
                    self._report(error)
        except (OSError, ValueError) as error:  # ValueError: a line over LINE_LIMIT
            return str(error)
        finally:
            self._writer = None
            writer.close()

    def _lost(self, reason: Optional[str]) -> None:
        self._last_reason = reason
        self.hello = None
        self.control = False
        self._fail_pending(f"motiond closed the connection{': ' + reason if reason else ''}", every=False)

    def _fail_pending(self, why: str, every: bool) -> None:
        """Fails the requests sent on the connection that went (and, with `every`, the queued
        ones too); queued ones otherwise go out on the next connection."""
        for identifier, request in list(self._pending.items()):
            if not (request.sent or every):
                continue
            del self._pending[identifier]
            if not request.future.done():
                op = request.message.get("op")
                request.future.set_exception(MotiondError("disconnected", f"{why} before answering {op}"))

    def _receive(self, message: dict[str, Any]) -> None:
        """Hands a line to whom it is for; raises `_BadLine` for one that is nobody's."""
        kind = message.get("event")
        if "id" in message and "ok" in message:
            self._answer(message)
        elif kind == "hello":
            if self.hello is not None:
                raise _BadLine("a second hello on one connection")
            self._greeted(message)
        elif kind in ("value", "state"):
            try:
                event = Event.from_line(message)
            except ValueError as error:
                raise _BadLine(str(error)) from None
            for subscription in list(self._subscriptions):
                if subscription.matches(event.stream):
                    subscription._deliver(event)
        elif isinstance(kind, str):
            # `device`, `bye`, `calibration`, and events of later versions of the protocol.
            if self.on_event is not None:
                self.on_event(message)
        else:
            raise _BadLine("neither a reply (id and ok) nor an event")

    def _greeted(self, hello: dict[str, Any]) -> None:
        """A connection is ready: authenticate, subscribe again to what the subscriptions
        hold, send what waited. motiond answers in order, so all of it is in place before any
        later request's reply."""
        self.hello = hello
        self.control = hello.get("control") is True
        self._hello_at = asyncio.get_running_loop().time()
        self.connections += 1
        restoring: list[tuple[asyncio.Future[Any], Callable[[Exception], bool]]] = []
        if self.token is not None:
            restoring.append((self._enqueue("auth", {"token": self.token}), lambda error: False))
        # Subscriptions whose own subscribe is still queued go out with the queue below.
        held = [s for s in self._subscriptions if s._subscribed]
        required = _unique(p for s in held if not s.optional for p in s.patterns)
        if required:
            restoring.append((self._enqueue("subscribe", {"streams": required}), lambda error: False))
        # Optional patterns one by one: one that matches nothing must not take the rest along.
        for pattern in _unique(p for s in held if s.optional for p in s.patterns):
            restoring.append((self._enqueue("subscribe", {"streams": [pattern]}),
                              lambda error: isinstance(error, MotiondError) and error.code == "unknown_stream"))
        for request in self._pending.values():
            if not request.sent:
                self._transmit(request)
        asyncio.ensure_future(self._restored(hello, restoring))

    async def _restored(self, hello: dict[str, Any],
                        restoring: list[tuple[asyncio.Future[Any], Callable[[Exception], bool]]]) -> None:
        for future, expected in restoring:
            try:
                async with asyncio.timeout(self.timeout):
                    result = await future
                if isinstance(result, dict) and "control" in result:
                    self.control = result["control"] is True
            except Exception as error:  # noqa: BLE001 — told to on_error, no caller waits
                if not expected(error):
                    self._report(error)
        if self.hello is hello:
            self._set_state("open")
            if self._opened is not None:
                self._opened.set()

    # Requests

    def _enqueue(self, op: str, arguments: dict[str, Any]) -> asyncio.Future[Any]:
        """Makes a request and sends it now if connected, else at the next hello."""
        identifier = self._next_id
        self._next_id += 1
        request = _Request({**arguments, "id": identifier, "op": op},
                           asyncio.get_running_loop().create_future())
        self._pending[identifier] = request
        request.future.add_done_callback(lambda _: self._pending.pop(identifier, None))
        if self.hello is not None and self._writer is not None:
            self._transmit(request)
        return request.future

    def _transmit(self, request: _Request) -> None:
        assert self._writer is not None
        request.sent = True
        line = json.dumps(request.message, separators=(",", ":"), ensure_ascii=False) + "\n"
        self._writer.write(line.encode("utf-8"))

    def _answer(self, reply: dict[str, Any]) -> None:
        identifier = reply["id"]
        # Only an integer names a request: to Python, true is 1 and 1.0 equals 1.
        request = self._pending.pop(identifier, None) if _is_integer(identifier) else None
        if request is None or request.future.done():
            return  # timed out already, or an error about a line without an id
        ok, result, error = reply["ok"], reply.get("result"), reply.get("error")
        if ok is True and "result" in reply:
            request.future.set_result(result)
        elif ok is False and isinstance(error, dict) and isinstance(error.get("code"), str):
            request.future.set_exception(MotiondError(error["code"],
                                                      str(error.get("message", "motiond refused the request"))))
        else:
            # Its caller is the one to tell: the request failed, in a way no code of the
            # protocol says.
            op = request.message.get("op")
            request.future.set_exception(MotiondError("bad_reply", f"the reply to {op} is not the protocol's: {_excerpt(reply)}"))

    async def request(self, op: str, **arguments: Any) -> Any:
        """Sends `{"id", "op", **arguments}` and returns the reply's `result`; raises
        `MotiondError` with the protocol's code, `timeout` after `timeout` seconds without a
        reply, or `disconnected` if the connection went first. Made while disconnected, it
        goes out on the next connection."""
        if self.state in ("idle", "closed"):
            raise MotiondError("disconnected", f"the client is {'not connected' if self.state == 'idle' else 'closed'}")
        future = self._enqueue(op, arguments)
        try:
            async with asyncio.timeout(self.timeout):
                return await future
        except TimeoutError:
            raise MotiondError("timeout", f"motiond did not answer {op} within {self.timeout:g} s") from None

    # Streams

    def subscribe(self, *patterns: str, optional: bool = False, buffer: int = 1024) -> Subscription:
        """The `value` and `state` events of the streams matching the names or globs, from
        each one's current value on; see `Subscription`. Kept across reconnects."""
        if not patterns:
            raise ValueError("subscribe needs at least one stream name or glob")
        subscription = Subscription(self, list(patterns), optional, buffer)
        self._subscriptions.append(subscription)
        return subscription

    async def _subscribe(self, subscription: Subscription) -> Any:
        try:
            result = await self.request("subscribe", streams=subscription.patterns)
            subscription._subscribed = True
            return result
        except MotiondError as error:
            if subscription.optional and error.code == "unknown_stream":
                subscription._subscribed = True  # tried again after a reconnect, as motiond.js does
                return {"streams": []}
            subscription.close()
            raise

    def _forget(self, subscription: Subscription) -> None:
        """Unsubscribes the patterns that no other subscription still holds."""
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)
        if not subscription._subscribed:
            return
        held = {p for s in self._subscriptions for p in s.patterns}
        released = [p for p in _unique(subscription.patterns) if p not in held]
        if released and self.hello is not None and self.state != "closed":
            future = self._enqueue("unsubscribe", {"streams": released})
            future.add_done_callback(lambda f: f.exception())  # a refusal is nobody's concern

    async def unsubscribe(self, *patterns: str) -> list[str]:
        """The `unsubscribe` op itself; the names unsubscribed. Closing a `Subscription` is
        the usual way: this one does not end subscriptions holding the patterns."""
        result = await self.request("unsubscribe", streams=list(patterns))
        return list(result["streams"])

    async def follow(self, element: str, *, predicted: bool = True, size: bool = False) -> AsyncIterator[Pose]:
        """Where `element` is to be drawn, each time it changes: its position, rotation and
        scale, the predicted ones where motiond predicts (`[screen] prediction`), as
        motiond.js's `bind` draws. A consumer slower than the values gets the newest pose,
        never a backlog."""
        latest: dict[str, Any] = {"rotation": 0.0, "scale": 1.0}
        times = {"t": 0.0}
        changed = asyncio.Event()
        names = ["position", "rotation", "scale"] + (["size"] if size else [])
        plain = self.subscribe(*(f"{element}.{name}" for name in names))
        # The predicted streams exist only where motiond predicts: asked for apart, and their
        # absence is no error.
        guesses = self.subscribe(f"{element}.predicted_*", optional=True) if predicted else None

        async def pump(subscription: Subscription) -> None:
            async for event in subscription:
                if event.kind == "value":
                    latest[event.name] = event.value
                    times["t"] = max(times["t"], event.t)
                    changed.set()

        await plain.ready()
        if guesses is not None:
            await guesses.ready()
        pumps = [asyncio.ensure_future(pump(s)) for s in (plain, guesses) if s is not None]
        try:
            while True:
                await changed.wait()
                changed.clear()
                if "position" not in latest:
                    continue
                chosen = {name: latest.get(f"predicted_{name}", latest[name])
                          for name in ("position", "rotation", "scale")}
                yield Pose(element=element, position=chosen["position"], rotation=chosen["rotation"],
                           scale=chosen["scale"], size=latest.get("size"), t=times["t"],
                           predicted=any(f"predicted_{name}" in latest for name in chosen))
        finally:
            for task in pumps:
                task.cancel()
            plain.close()
            if guesses is not None:
                guesses.close()

    # The protocol's other operations, one method each

    async def get(self, stream: str) -> Any:
        """A stream's current value (`get`), alone, as JSON decodes it: a dict `{"x", "y"}`
        for a position, a float or int for a rotation or scale, a str for a state, a list for
        `screen.contacts`; `get_event` has the rest of the reply."""
        return (await self.request("get", stream=stream))["value"]

    async def get_event(self, stream: str) -> dict[str, Any]:
        """`get`'s whole result: `{"stream", "value", "t", "seq"}`, `t` motiond's clock when
        it answered and `seq` the stream's count of values so far."""
        return dict(await self.request("get", stream=stream))

    async def set(self, stream: str, value: Any) -> Any:
        """Sets a writable stream (control); the value motiond took."""
        return (await self.request("set", stream=stream, value=value))["value"]

    async def list_streams(self, patterns: Optional[list[str]] = None) -> list[dict[str, Any]]:
        """The `list` op: every stream, `{"stream", "writable", "kind"}`, or only those the
        glob `patterns` match (named so as not to hide Python's `list`). A large scene's hello
        names only its first streams (`stream_count` says how many there are): ask for the
        element's, `["note.*"]`, rather than every stream of the scene."""
        if patterns is None:
            return list((await self.request("list"))["streams"])
        return list((await self.request("list", streams=list(patterns)))["streams"])

    async def elements(self) -> list[dict[str, Any]]:
        """The scene: each element's id, position, size, rotation, scale, z, state, interactions."""
        return list((await self.request("elements"))["elements"])

    async def add_element(self, element: dict[str, Any]) -> dict[str, Any]:
        """Adds an element to the scene (control): `{"id", "center", "size", "interactions"…}`."""
        return dict(await self.request("add_element", element=element))

    async def remove_element(self, element: str) -> dict[str, Any]:
        """Removes the element of that id (control)."""
        return dict(await self.request("remove_element", element=element))

    async def devices(self) -> dict[str, Any]:
        """The touchscreens read (`devices`) and those skipped, with why (`skipped`)."""
        return dict(await self.request("devices"))

    async def stats(self) -> dict[str, Any]:
        """The daemon's counters (docs/protocol.md, `stats`)."""
        return dict(await self.request("stats"))

    async def health(self) -> dict[str, Any]:
        """The health report: `status` "ok" or "unhealthy", and the `problems` in words."""
        return dict(await self.request("health"))

    async def metrics(self) -> str:
        """The metrics in Prometheus's text format."""
        return str((await self.request("metrics"))["text"])

    async def auth(self, token: str) -> bool:
        """Sends the control token; whether this connection now has control."""
        result = await self.request("auth", token=token)
        self.control = result.get("control") is True
        return self.control

    async def calibrate(self, device: str, **arguments: Any) -> Any:
        """Drives a calibration (control): `target`, `step`, `steps`, `message`, or `end=True`."""
        return (await self.request("calibrate", device=device, **arguments))["calibration"]

    async def calibration(self) -> Any:
        """What the calibration page shows now, or None."""
        return (await self.request("calibration"))["calibration"]

    async def reload(self) -> dict[str, Any]:
        """Reads the configuration again (control): `{"file", "elements"}`."""
        return dict(await self.request("reload"))

    async def saved_scene(self) -> dict[str, Any]:
        """The scene motiond keeps across restarts: `{"file", "interval", "written", "error",
        "writes", "failed_writes", "elements"}` (`file` is None when it keeps none)."""
        return dict(await self.request("saved_scene"))

    async def reset_scene(self) -> int:
        """Makes the scene anew from the configuration, forgetting what clients added and
        moved (control); the number of elements it now has."""
        return int((await self.request("reset_scene"))["elements"])


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


class _BadLine(Exception):
    """A line from the server that the client cannot understand, saying why."""


def _parse(line: bytes) -> dict[str, Any]:
    """A line as the JSON object it must be, or `_BadLine`."""
    try:
        message = json.loads(line)
    except ValueError as error:  # not JSON, not UTF-8, a number too long to convert
        raise _BadLine(f"not JSON ({error})") from None
    except RecursionError:
        raise _BadLine("JSON nested too deep for Python's decoder") from None
    if not isinstance(message, dict):
        raise _BadLine(f"JSON but not an object ({type(message).__name__})")
    return message


def _excerpt(line: object, limit: int = 120) -> str:
    """The start of a line, for a message that must stay readable whatever the line."""
    try:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else json.dumps(line, default=str)
    except (ValueError, RecursionError):
        text = "(a value too deep to show)"
    text = text.rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
