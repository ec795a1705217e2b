"""The client against a server that breaks the protocol: lines no motiond sends (nested too
deep, events without their fields, garbage by the thousand), a flood of values, a server that
says hello and drops the connection at once. Whatever it sends, the client must go on and say
what it skipped; every wait has a deadline."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, Callable

# The package of this checkout, however unittest was started (-s/-t or not), never an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import motiond  # noqa: E402

#: Seconds any one wait may take on a loaded machine before the test fails.
DEADLINE = 20.0

HELLO = b'{"event":"hello","protocol":1,"version":"0","streams":["a.b"],"control":true}\n'

Answer = Callable[[dict[str, Any]], list[bytes]]


def suite_seed() -> int:
    """The seed of the garbage, as the Swift suite that runs these tests reads it:
    MOTIOND_TEST_SEED, a number (1 when unset), or `random` for a new one, printed."""
    setting = os.environ.get("MOTIOND_TEST_SEED", "")
    if setting == "random":
        seed = random.randrange(2**64)
        print(f"Test seed: MOTIOND_TEST_SEED={seed} (drawn at random)", file=sys.stderr)
        return seed
    return int(setting) if setting else 1


def reply(request: dict[str, Any], result: Any) -> bytes:
    return (json.dumps({"id": request["id"], "ok": True, "result": result}) + "\n").encode()


class FakeServer:
    """A Unix socket server that says hello and writes, for each request, the lines `answer`
    gives (bytes, each ending in a newline, or not when the test wants it so). With
    `drop_after_hello`, it closes each of the first that many connections right after the hello."""

    def __init__(self, path: str, answer: Answer, drop_after_hello: int = 0) -> None:
        self.path = path
        self.answer = answer
        self.drop_after_hello = drop_after_hello
        #: Connections accepted so far.
        self.connections = 0
        #: Every request received, in order.
        self.requests: list[dict[str, Any]] = []
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> "FakeServer":
        self.server = await asyncio.start_unix_server(self.serve, self.path)
        return self

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        writer.write(HELLO)
        if self.connections <= self.drop_after_hello:
            writer.close()
            return
        try:
            while line := await reader.readline():
                request = json.loads(line)
                self.requests.append(request)
                for out in self.answer(request):
                    writer.write(out)
                await writer.drain()
        except ConnectionError:
            pass  # the client went; nothing to answer

    def drop_all(self) -> None:
        """Closes every connection (the server goes on accepting)."""
        for writer in self.writers:
            writer.close()

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        self.drop_all()
        await self.server.wait_closed()


def answer_plainly(request: dict[str, Any]) -> list[bytes]:
    """What motiond would say to the ops these tests send."""
    if request["op"] in ("subscribe", "unsubscribe"):
        return [reply(request, {"streams": request["streams"]})]
    if request["op"] == "get":
        return [reply(request, {"stream": request["stream"], "value": 1, "t": 0.5, "seq": 3})]
    return [reply(request, {})]


class ServerTestCase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)
        self.path = os.path.join(self.directory.name, "s")
        #: What the client told on_error, in order.
        self.reported: list[Exception] = []

    async def serve(self, answer: Answer = answer_plainly, **options: Any) -> FakeServer:
        server = await FakeServer(self.path, answer, **options).start()
        self.addAsyncCleanup(server.stop)
        return server

    async def connected(self, answer: Answer = answer_plainly, **options: Any) -> motiond.Client:
        await self.serve(answer)
        client = motiond.Client(self.path, timeout=DEADLINE, first_retry=0.05, max_retry=0.1,
                                on_error=self.reported.append, **options)
        await client.connect()
        self.addAsyncCleanup(client.close)
        return client


class LinesNoMotiondSends(ServerTestCase):
    """Each line the review found killing the reader, then a request: its reply must come on
    the same connection, and the line must have been told to on_error."""

    async def assert_skipped_then_usable(self, line: bytes) -> None:
        def answer(request: dict[str, Any]) -> list[bytes]:
            if request["op"] == "poke":
                return [line, reply(request, "after")]
            return answer_plainly(request)

        client = await self.connected(answer)
        self.assertEqual(await client.request("poke"), "after")
        self.assertEqual(await client.get("a.b"), 1)
        self.assertEqual((client.state, client.connections), ("open", 1))
        self.assertEqual([getattr(error, "code", error) for error in self.reported], ["bad_line"])
        self.assertEqual(client.lines_skipped, 1)

    async def test_a_line_nested_too_deep_for_pythons_json(self) -> None:
        await self.assert_skipped_then_usable(b"[" * 100_000 + b"]" * 100_000 + b"\n")

    async def test_a_value_event_without_its_value(self) -> None:
        await self.assert_skipped_then_usable(b'{"event":"value","stream":"a.b","t":1,"seq":2}\n')

    async def test_a_state_event_whose_t_is_no_number(self) -> None:
        await self.assert_skipped_then_usable(b'{"event":"state","stream":"a.drag","state":"began","t":"soon"}\n')

    async def test_a_second_hello(self) -> None:
        await self.assert_skipped_then_usable(HELLO)

    async def test_an_error_reply_whose_error_is_a_string_fails_its_request_only(self) -> None:
        def answer(request: dict[str, Any]) -> list[bytes]:
            if request["op"] == "poke":
                return [(json.dumps({"id": request["id"], "ok": False, "error": "nope"}) + "\n").encode()]
            return answer_plainly(request)

        client = await self.connected(answer)
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.request("poke")
        self.assertEqual(raised.exception.code, "bad_reply")
        self.assertIn("nope", raised.exception.message)
        self.assertEqual(await client.get("a.b"), 1)
        self.assertEqual((client.state, client.connections), ("open", 1))

    async def test_a_callback_that_raises_is_told_and_the_reading_goes_on(self) -> None:
        def answer(request: dict[str, Any]) -> list[bytes]:
            if request["op"] == "poke":
                return [b'{"event":"device","action":"added","node":"/dev/input/event9"}\n', reply(request, "after")]
            return answer_plainly(request)

        def on_event(line: dict[str, Any]) -> None:
            raise RuntimeError(f"the program's own bug, on {line['node']}")

        client = await self.connected(answer, on_event=on_event)
        self.assertEqual(await client.request("poke"), "after")
        self.assertEqual([str(error) for error in self.reported], ["the program's own bug, on /dev/input/event9"])
        self.assertEqual(client.lines_skipped, 0)


#: Lines motiond does send, for the fuzzer to break.
TEMPLATES: list[dict[str, Any]] = [
    {"event": "value", "stream": "card.position", "value": {"x": 412.5, "y": 300}, "t": 10843.5, "seq": 118},
    {"event": "value", "stream": "screen.contacts", "value": [{"id": 1, "x": 2, "y": 3, "device": "/dev/input/event5"}], "t": 1.0, "seq": 0},
    {"event": "state", "stream": "card.drag", "state": "ended", "t": 10843.52, "velocity": {"x": 812.4, "y": -40.1}},
    {"event": "state", "stream": "screen.gesture", "name": "admin", "gesture": "long_press", "state": "began", "t": 1.5, "touches": 3},
    {"event": "device", "action": "added", "node": "/dev/input/event5", "name": "ELAN Touchscreen"},
    {"event": "calibration", "calibration": None},
    {"event": "bye", "reason": "the daemon is stopping"},
    {"event": "hello", "protocol": 1, "version": "0.1.0", "streams": ["card.position"], "control": True},
    {"id": 7, "ok": True, "result": {"stream": "card.position", "value": {"x": 1, "y": 2}, "t": 3, "seq": 4}},
    {"id": 7, "ok": False, "error": {"code": "unknown_stream", "message": "no stream is called card.postion"}},
    {"id": None, "ok": False, "error": {"code": "bad_json", "message": "column 3"}},
]


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def strange_value(rng: random.Random) -> Any:
    """A JSON value of any kind, some of them nothing a field of motiond's ever holds."""
    return rng.choice([
        None, True, False, 0, -1, 2**70, 1e308, -0.0, "", "x", "\u2028", "é\u0000", [], {}, [1, "a"],
        {"x": None}, nested(rng.randrange(1, 50)), "card.position", 7, 7.0,
    ])


def garbage(rng: random.Random) -> bytes:
    """One line, made by breaking a template one of many ways (each ends in a newline, but
    the bytes may hold more of them: the client reads them as it would any)."""
    line = json.loads(json.dumps(rng.choice(TEMPLATES)))
    how = rng.randrange(10)
    if how == 0 and line:
        del line[rng.choice(list(line))]
    elif how == 1 and line:
        line[rng.choice(list(line))] = strange_value(rng)
    elif how == 2:
        line[rng.choice(["event", "id", "ok", "stream", "value", "t", "seq", "error", "state", "zz"])] = strange_value(rng)
    elif how == 3:
        return (json.dumps(strange_value(rng)) + "\n").encode()  # JSON, but no object
    elif how == 4:
        depth = rng.choice([10, 1000, 5000, 100_000])
        return b"[" * depth + b"]" * depth + b"\n"
    text = json.dumps(line, ensure_ascii=rng.random() < 0.5).encode()
    if how == 5:
        text = text[:rng.randrange(len(text) + 1)]
    elif how == 6:
        position = rng.randrange(len(text))
        text = text[:position] + bytes([rng.randrange(256)]) + text[position + 1:]
    elif how == 7:
        position = rng.randrange(len(text) + 1)
        text = text[:position] + rng.randbytes(rng.randrange(1, 8)) + text[position:]
    return text + b"\n"


def is_reply(line: bytes) -> bool:
    """Whether a line is reply-shaped (an object with id and ok): a reply to no request the
    client waits for is no error, so the fuzz test counts those apart."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and "id" in message and "ok" in message


class Fuzz(ServerTestCase):
    async def test_garbage_is_each_understood_or_told_and_the_client_stays_usable(self) -> None:
        base = suite_seed()
        for seed in range(base, base + 4):
            with self.subTest(seed=seed, rerun=f"MOTIOND_TEST_SEED={base}"):
                await self.check_garbage(seed, count=800)

    async def check_garbage(self, seed: int, count: int) -> None:
        rng = random.Random(seed)
        self.path = os.path.join(self.directory.name, f"fuzz-{seed}")
        sent: list[bytes] = []

        def answer(request: dict[str, Any]) -> list[bytes]:
            if request["op"] != "fuzz":
                return answer_plainly(request)
            blob = b"".join(garbage(rng) for _ in range(count))
            # What the client reads is lines, wherever the garbage's own newlines cut it.
            lines = [line + b"\n" for line in blob.split(b"\n")[:-1]]
            # Never a reply to the fuzz request itself: the reply after the garbage is the check.
            lines = [line for line in lines if not (is_reply(line) and json.loads(line)["id"] == request["id"])]
            sent.extend(lines)
            return lines + [reply(request, len(lines))]

        self.reported.clear()
        other_lines: list[dict[str, Any]] = []
        client = await self.connected(answer, on_event=other_lines.append)
        async with client.subscribe("*", buffer=100_000) as everything:
            # The reply comes after the garbage, so once it is here, every line was read.
            self.assertEqual(await client.request("fuzz"), len(sent), f"seed {seed}")
            self.assertEqual(await client.get("a.b"), 1, f"seed {seed}")
            self.assertEqual((client.state, client.connections), ("open", 1), f"seed {seed}")
            delivered = list(everything._buffer)
            self.assertEqual(everything.dropped, 0)
        # Nothing vanished: each line was a reply (to nothing the client waits for), a stream's
        # event, another event handed to on_event, or told to on_error as skipped.
        replies = sum(1 for line in sent if is_reply(line))
        self.assertEqual(replies + len(delivered) + len(other_lines) + len(self.reported), len(sent),
                         f"seed {seed}: some lines were neither understood nor told")
        self.assertEqual(client.lines_skipped, len(self.reported))
        self.assertTrue(all(isinstance(error, motiond.MotiondError) and error.code == "bad_line" for error in self.reported),
                        f"seed {seed}: not every report is a skipped line: {self.reported[:5]}")
        # What was understood is whole: a program never meets a half-made event.
        for event in delivered:
            self.assertIsInstance(event.stream, str)
            self.assertIsInstance(event.t, (int, float))
            self.assertTrue(event.seq is None or isinstance(event.seq, int))
            if event.kind == "state":
                self.assertIsInstance(event.value, str)
        # The mix is wide enough to mean something.
        self.assertGreater(len(self.reported), count // 10, f"seed {seed}")
        self.assertGreater(len(delivered), count // 20, f"seed {seed}")
        await client.close()


class BackOff(ServerTestCase):
    async def test_a_server_that_says_hello_and_drops_is_retried_ever_more_slowly(self) -> None:
        first, most = 0.05, 0.4
        server = await self.serve(drop_after_hello=1_000_000)
        waits: list[float] = []
        client = motiond.Client(self.path, timeout=DEADLINE, first_retry=first, max_retry=most,
                                on_state=lambda state, detail: waits.append(detail["retry_in"]) if state == "waiting" else None)
        connecting = asyncio.ensure_future(client.connect())  # never open: each connection goes at once
        self.addAsyncCleanup(client.close)
        self.addCleanup(connecting.cancel)
        window = 1.5
        await asyncio.sleep(window)  # the time to count in, not a wait for something to happen
        # Each wait is at least half its doubling ceiling, never first_retry's again.
        for failures, wait in enumerate(waits):
            self.assertGreaterEqual(wait, min(most, first * 2 ** failures) / 2, f"waits: {waits}")
        # So within the window, at most as many connections as those shortest waits allow
        # (a loaded machine makes fewer, never more): 10 in 1.5 s, where resetting at each
        # hello makes about 40.
        allowed, elapsed = 1, 0.0
        while (elapsed := elapsed + min(most, first * 2 ** (allowed - 1)) / 2) <= window:
            allowed += 1
        self.assertLessEqual(server.connections, allowed, f"waits: {waits}")
        self.assertGreaterEqual(server.connections, 2)

    async def test_a_connection_that_lived_stable_after_makes_the_next_wait_short_again(self) -> None:
        first, stable = 0.05, 0.3
        server = await self.serve(drop_after_hello=3)
        waits: list[float] = []
        fourth_open = asyncio.Event()

        def on_state(state: str, detail: dict[str, Any]) -> None:
            if state == "waiting":
                waits.append(detail["retry_in"])
            elif state == "open" and client.connections == 4:
                fourth_open.set()

        client = motiond.Client(self.path, timeout=DEADLINE, first_retry=first, max_retry=5.0,
                                stable_after=stable, on_state=on_state)
        self.addAsyncCleanup(client.close)
        await client.connect()
        async with asyncio.timeout(DEADLINE):
            await fourth_open.wait()  # three were dropped at their hello; the fourth stays
        self.assertEqual(len(waits), 3)
        self.assertGreaterEqual(waits[-1], first * 2 ** 2 / 2)
        await asyncio.sleep(2 * stable)  # counted from the client's own hello, so no race
        server.drop_all()
        async with asyncio.timeout(DEADLINE):
            while len(waits) < 4:
                await asyncio.sleep(0.01)
        self.assertLessEqual(waits[3], first, f"waits: {waits}")

    async def test_connect_returns_a_hello_whatever_connections_went_meanwhile(self) -> None:
        await self.serve(drop_after_hello=3)
        client = motiond.Client(self.path, timeout=DEADLINE, first_retry=0.01, max_retry=0.02)
        self.addAsyncCleanup(client.close)
        # A connection can open and go before connect() resumes: it waits for the next.
        hello = await client.connect()
        self.assertEqual(hello["streams"], ["a.b"])


class BlockingQueue(ServerTestCase):
    async def test_a_flood_keeps_the_newest_values_and_counts_the_rest(self) -> None:
        flood, limit = 20_000, 100

        def answer(request: dict[str, Any]) -> list[bytes]:
            lines = answer_plainly(request)
            if request["op"] == "subscribe":
                lines += [(json.dumps({"event": "value", "stream": "a.b", "value": seq, "t": 1.0, "seq": seq}) + "\n").encode()
                          for seq in range(flood)]
            return lines

        await self.serve(answer)

        def unread_flood() -> tuple[int, int, list[int]]:
            with motiond.SyncClient(self.path, timeout=DEADLINE, on_error=self.reported.append) as client:
                values = client.subscribe("a.b", buffer=limit)
                client.request("poke")  # its reply follows the flood: every value was read by then
                return values.qsize(), values.dropped, [event.seq for event in list(values.queue)]

        async with asyncio.timeout(DEADLINE):
            size, dropped, seqs = await asyncio.to_thread(unread_flood)
        self.assertEqual((size, dropped), (limit, flood - limit))
        self.assertEqual(seqs, list(range(flood - limit, flood)))
        self.assertEqual(self.reported, [])


if __name__ == "__main__":
    unittest.main()
