"""A blocking client for programs that own their main loop (pygame, Kivy, a plain script).

`SyncClient` runs an asyncio `Client` on a thread of its own; its methods block until the
reply, and subscriptions hand events to a callback (called on that thread) or to a
bounded `queue.Queue` (an `EventQueue`) the program drains once per frame:

    with SyncClient() as motiond:
        positions = motiond.subscribe("card.position")      # the newest 1024 Events at most
        while running:
            while not positions.empty():
                card = positions.get_nowait().value
            draw(card)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from typing import Any, Awaitable, Callable, Optional, TypeVar

from .client import Client
from .errors import MotiondError
from .events import Event

T = TypeVar("T")


class SyncClient:
    """The asyncio `Client`, with blocking methods; takes the same arguments. Callbacks given
    here (`on_state`, `on_event`, `on_error`) run on the client's thread."""

    def __init__(self, path: Optional[str] = None, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="motiond", daemon=True)
        self._thread.start()
        self._options = options
        #: The asyncio client underneath; use it only through `run` (it lives on another thread).
        self.client: Client = self.run(self._make(path, options))
        self._closed = False

    @staticmethod
    async def _make(path: Optional[str], options: dict[str, Any]) -> Client:
        return Client(path, **options)

    def run(self, coroutine: Awaitable[T]) -> T:
        """Runs a coroutine on the client's loop and returns its result (or raises its
        error), waiting at most a little longer than the client's own timeout."""
        future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), self._loop)
        timeout = self._options.get("timeout", 5.0)
        try:
            return future.result(timeout + 1.0)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MotiondError("timeout", f"no answer within {timeout + 1.0:g} s") from None

    def connect(self) -> dict[str, Any]:
        """Connects and waits for the hello (see `Client.connect`)."""
        return self.run(self.client.connect())

    @property
    def state(self) -> str:
        """The connection's state: connecting, open, waiting or closed."""
        return self.client.state

    def get(self, stream: str) -> Any:
        """A stream's current value."""
        return self.run(self.client.get(stream))

    def set(self, stream: str, value: Any) -> Any:
        """Sets a writable stream (control)."""
        return self.run(self.client.set(stream, value))

    def request(self, op: str, **arguments: Any) -> Any:
        """Any op of the protocol; the reply's result."""
        return self.run(self.client.request(op, **arguments))

    def subscribe(self, *patterns: str, callback: Optional[Callable[[Event], None]] = None,
                  optional: bool = False, buffer: int = 1024) -> "EventQueue":
        """Subscribes (raising `MotiondError` if refused) and delivers each event to
        `callback`, on the client's thread as the line is read, or else to the returned
        `EventQueue`, which holds at most `buffer` events: a program that falls further
        behind loses the oldest, counted in its `dropped`, as `Client.subscribe` does. The
        subscription lasts, through reconnects, until `close()`. A callback that raises is
        told to `on_error`, and the events go on."""
        events = EventQueue(buffer)
        deliver = callback or events.put

        async def start() -> None:
            subscription = self.client.subscribe(*patterns, optional=optional, buffer=buffer)
            # Straight from the reader into the queue: a second buffer between them would be
            # a second place for a flood to pile up.
            subscription._sink = deliver
            await subscription.ready()

        self.run(start())
        return events

    def close(self) -> None:
        """Closes the connection and stops the thread."""
        if self._closed:
            return
        self._closed = True
        try:
            self.run(self.client.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> "SyncClient":
        self.connect()
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """The asyncio client's other operations (`elements`, `devices`, `stats`, `health`…),
        blocking."""
        method = getattr(self.__dict__.get("client"), name, None)
        if not callable(method) or name.startswith("_"):
            raise AttributeError(name)
        return lambda *arguments, **keywords: self.run(method(*arguments, **keywords))


class EventQueue(queue.Queue[Event]):
    """The queue `SyncClient.subscribe` returns: a `queue.Queue` of at most `limit` events.
    A put never blocks (it is the client's reader that puts); when the queue is full, the
    oldest event makes room and is counted in `dropped`, so that a program that falls behind
    reads current values, as motiond keeps slow clients current rather than complete."""

    def __init__(self, limit: int = 1024) -> None:
        super().__init__()  # no maxsize: Queue would make the put wait, and the reader with it
        self.limit = max(1, limit)
        #: Events pushed out unread because `limit` were waiting.
        self.dropped = 0

    def _put(self, item: Event) -> None:
        # Called by put() holding the queue's lock.
        if len(self.queue) >= self.limit:
            self.queue.popleft()
            self.dropped += 1
            self.unfinished_tasks -= 1  # put() counts the new one; the one pushed out is done
        self.queue.append(item)


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable
