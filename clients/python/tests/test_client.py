"""The client against a stand-in for motiond that answers as a test tells it: what a real
daemon will not do on cue (stay silent, drop the connection mid-request)."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import socket
import sys
import tempfile
import unittest
from pathlib import Path

# The package of this checkout, however unittest was started (-s/-t or not), never an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import motiond  # noqa: E402


class StandIn:
    """A Unix socket server that says hello and hands each request to `answer`."""

    def __init__(self, path: str, answer) -> None:  # type: ignore[no-untyped-def]
        self.path = path
        self.answer = answer
        self.server: asyncio.AbstractServer | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> None:
        self.server = await asyncio.start_unix_server(self.serve, self.path)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        writer.write(b'{"event":"hello","protocol":1,"version":"0","streams":["a.b"],"control":true}\n')
        while line := await reader.readline():
            reply = self.answer(json.loads(line), writer)
            if reply is not None:
                writer.write((json.dumps(reply) + "\n").encode())

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.close()
        await self.server.wait_closed()


class StandInCase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)
        self.path = os.path.join(self.directory.name, "s")

    async def connected(self, answer) -> motiond.Client:  # type: ignore[no-untyped-def]
        stand_in = StandIn(self.path, answer)
        await stand_in.start()
        self.addAsyncCleanup(stand_in.stop)
        # Connecting may take long on a loaded machine (the stand-in's hello is another task
        # of this loop); the requests the tests leave unanswered then time out quickly.
        client = motiond.Client(self.path, timeout=20.0, first_retry=0.05, max_retry=0.1)
        await client.connect()
        client.timeout = 0.3
        self.addAsyncCleanup(client.close)
        return client


class Requests(StandInCase):
    async def test_replies_are_matched_by_id_whatever_their_order(self) -> None:
        held: list[dict] = []

        def answer(request, writer):  # type: ignore[no-untyped-def]
            held.append(request)
            if len(held) == 2:  # the second answered first
                for one in reversed(held):
                    writer.write((json.dumps({"id": one["id"], "ok": True, "result": {"stream": one["stream"], "value": one["stream"], "t": 0}}) + "\n").encode())

        client = await self.connected(answer)
        first, second = await asyncio.gather(client.get("x.first"), client.get("x.second"))
        self.assertEqual((first, second), ("x.first", "x.second"))

    async def test_no_reply_is_a_timeout_and_a_later_reply_is_ignored(self) -> None:
        client = await self.connected(lambda request, writer: None)
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.stats()
        self.assertEqual(raised.exception.code, "timeout")
        self.assertEqual(client._pending, {})

    async def test_a_connection_lost_before_the_reply_is_disconnected(self) -> None:
        client = await self.connected(lambda request, writer: writer.close())
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.health()
        self.assertEqual(raised.exception.code, "disconnected")

    async def test_no_daemon_is_disconnected_at_connect(self) -> None:
        client = motiond.Client(self.path, timeout=0.3, first_retry=0.05)
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.connect()
        self.assertEqual(raised.exception.code, "disconnected")
        self.assertIn("No such file or directory", raised.exception.message)
        self.assertIsInstance(raised.exception.__cause__, FileNotFoundError)
        self.assertEqual(raised.exception.__cause__.errno, errno.ENOENT)  # type: ignore[union-attr]
        self.assertEqual(client.state, "closed")

    async def test_a_socket_nobody_listens_on_is_disconnected_with_econnrefused(self) -> None:
        # Bound and never listening: what a motiond that died leaves behind.
        left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(left.close)
        left.bind(self.path)
        client = motiond.Client(self.path, timeout=0.3, first_retry=0.05)
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.connect()
        self.assertEqual(raised.exception.code, "disconnected")
        self.assertIn("Connection refused", raised.exception.message)
        self.assertIsInstance(raised.exception.__cause__, ConnectionRefusedError)
        self.assertEqual(raised.exception.__cause__.errno, errno.ECONNREFUSED)  # type: ignore[union-attr]


class Cancelling(StandInCase):
    """What docs/clients-python.md says of timeouts around a subscription."""

    async def test_a_step_cancelled_by_wait_for_ends_the_subscription(self) -> None:
        ops: list[str] = []

        def answer(request, writer):  # type: ignore[no-untyped-def]
            ops.append(request["op"])
            return {"id": request["id"], "ok": True, "result": {"streams": request.get("streams", [])}}

        client = await self.connected(answer)
        client.timeout = 20.0  # the stand-in answers at once; only the test's own timeout may run out
        subscription = client.subscribe("a.b")
        await subscription.ready()
        steps = aiter(subscription)
        with self.assertRaises(TimeoutError):
            await asyncio.wait_for(anext(steps), 0.05)  # nothing comes: the step is cancelled
        with self.assertRaises(StopAsyncIteration):
            await anext(steps)
        await client.stats()  # replies come in order: whatever was sent before it is answered
        self.assertEqual(ops, ["subscribe", "unsubscribe", "stats"])

    async def test_get_with_a_timeout_keeps_the_subscription_while_subscribing_and_after(self) -> None:
        held: list[dict] = []

        def answer(request, writer):  # type: ignore[no-untyped-def]
            if request["op"] == "subscribe":
                held.append(request)  # answered only at "release"
                return None
            if request["op"] == "release":
                for waiting in held:
                    writer.write((json.dumps({"id": waiting["id"], "ok": True, "result": {"streams": ["a.b"]}}) + "\n").encode())
            if request["op"] == "push":
                writer.write(b'{"event":"value","stream":"a.b","value":1,"t":1.0,"seq":1}\n')
            return {"id": request["id"], "ok": True, "result": {}}

        client = await self.connected(answer)
        client.timeout = 20.0  # the stand-in answers at once; only the test's own timeouts may run out
        subscription = client.subscribe("a.b")
        with self.assertRaises(TimeoutError):
            await asyncio.wait_for(subscription.get(), 0.05)  # cancelled while subscribing
        await client.request("release")
        with self.assertRaises(TimeoutError):
            await asyncio.wait_for(subscription.get(), 0.05)  # cancelled while waiting for an event
        await client.request("push")
        async with asyncio.timeout(20.0):
            event = await subscription.get()
        self.assertEqual((event.stream, event.value, event.seq), ("a.b", 1, 1))


class Failing(StandInCase):
    async def test_a_bug_that_ends_the_connections_task_is_told_and_closes_the_client(self) -> None:
        told: list[Exception] = []
        client = await self.connected(lambda request, writer: writer.close())
        client.on_error = told.append

        def broken() -> float:
            raise ZeroDivisionError("a bug in the back-off")

        client._retry_delay = broken  # type: ignore[method-assign]
        with self.assertRaises(motiond.MotiondError):
            await client.stats()  # the stand-in drops the connection: the back-off runs
        async with asyncio.timeout(20.0):
            while client.state != "closed":
                await asyncio.sleep(0.01)
        self.assertEqual([str(error) for error in told], ["a bug in the back-off"])
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.stats()
        self.assertEqual(raised.exception.code, "disconnected")


class Globs(unittest.TestCase):
    def test_star_and_question_mark_as_the_protocol_has_them(self) -> None:
        self.assertTrue(motiond.glob_matches("card.*", "card.position"))
        self.assertTrue(motiond.glob_matches("*", "a.b.c"))
        self.assertTrue(motiond.glob_matches("*.position", "card.position"))
        self.assertTrue(motiond.glob_matches("card.?ize", "card.size"))
        self.assertFalse(motiond.glob_matches("card.*", "cards.position"))
        self.assertFalse(motiond.glob_matches("card.[ps]*", "card.position"))  # no brackets
        self.assertFalse(motiond.glob_matches("card.position", "card.position2"))
        self.assertFalse(motiond.glob_matches("?", ""))


class BackOff(unittest.TestCase):
    def test_doubles_up_to_the_cap_within_its_upper_half(self) -> None:
        client = motiond.Client("/nonexistent", first_retry=0.25, max_retry=10)
        for failures, ceiling in [(0, 0.25), (1, 0.5), (3, 2), (6, 10), (20, 10), (1100, 10), (10**6, 10)]:
            client._failures = failures
            for _ in range(20):
                self.assertTrue(ceiling / 2 <= client._retry_delay() <= ceiling)


if __name__ == "__main__":
    unittest.main()
