"""The client against a real motiond replaying a recorded drag (the card moves up and down,
looping), with the example configuration.

motiond is $MOTIOND (the Swift test CommandLineTests/PythonClientTests passes the one it
built), else the one on the PATH; without either these tests are skipped. Every wait has a
deadline, so a missing value fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

# The package of this checkout, however unittest was started (-s/-t or not), never an installed one.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import motiond  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[3]
EXAMPLE = REPOSITORY / "examples/python/follow_card.py"
RECORDING = REPOSITORY / "data/recordings/atmel-maxtouch-drag-up-down.evemu"
CONFIGURATION = REPOSITORY / "config/motiond.toml"
PROTOCOL = REPOSITORY / "docs/protocol.md"
MOTIOND = os.environ.get("MOTIOND") or shutil.which("motiond")

#: Seconds any one wait may take on a loaded machine before the test fails.
DEADLINE = 20.0


class Daemon:
    """A motiond replaying the drag on a socket path, started and stopped by the test."""

    def __init__(self, socket: str, configuration: Path = CONFIGURATION, state: str | None = None) -> None:
        assert MOTIOND is not None
        self.socket = socket
        self.process = subprocess.Popen(
            [MOTIOND, "--replay", str(RECORDING), "--loop", "--config", str(configuration), "--socket", socket]
            + (["--state", state] if state else []),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self) -> int:
        """SIGTERM, and its exit status; killed if it has not exited within the deadline."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(DEADLINE)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return self.process.returncode


@unittest.skipUnless(MOTIOND, "no motiond: set MOTIOND to its path")
class WithMotiond(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.socket = os.path.join(self.directory.name, "motiond.sock")
        self.daemons: list[Daemon] = []

    def tearDown(self) -> None:
        for daemon in self.daemons:
            daemon.stop()
        self.directory.cleanup()

    def start(self, configuration: Path = CONFIGURATION, state: str | None = None) -> Daemon:
        daemon = Daemon(self.socket, configuration, state)
        self.daemons.append(daemon)
        return daemon

    async def client(self, **options: object) -> motiond.Client:
        """A client connected to the daemon (it retries until motiond listens), closed at the end."""
        client = motiond.Client(self.socket, timeout=DEADLINE, first_retry=0.05, max_retry=0.5, **options)  # type: ignore[arg-type]
        await client.connect()
        self.addAsyncCleanup(client.close)
        return client

    async def positions(self, subscription: motiond.Subscription, count: int) -> list[tuple[float, float]]:
        """The next `count` values of card.position, within the deadline."""
        seen: list[tuple[float, float]] = []
        async with asyncio.timeout(DEADLINE):
            while len(seen) < count:
                event = await subscription.get()
                if event.stream == "card.position":
                    self.assertEqual(event.kind, "value")
                    self.assertIsInstance(event.t, float)
                    self.assertIsInstance(event.seq, int)
                    seen.append((event.value["x"], event.value["y"]))
        return seen

    async def test_values_of_the_card_arrive_and_move(self) -> None:
        self.start()
        client = await self.client()
        self.assertIn("card.position", client.hello["streams"])  # type: ignore[index]
        async with client.subscribe("card.*") as subscription:
            seen = await self.positions(subscription, 20)
        self.assertGreater(len({y for _, y in seen}), 5, f"the card did not move: {seen}")
        # Left, the subscription is unsubscribed (motiond answers in order: the unsubscribe first).
        self.assertEqual([entry["subscriptions"] for entry in (await client.stats())["clients"]], [0])

    async def test_an_error_reply_raises_with_its_code_and_the_connection_stays_usable(self) -> None:
        self.start()
        client = await self.client()
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.get("card.postion")
        self.assertEqual(raised.exception.code, "unknown_stream")
        with self.assertRaises(motiond.MotiondError) as raised:
            await client.set("card.state", "active")
        self.assertEqual(raised.exception.code, "not_writable")
        position = await client.get("card.position")
        self.assertEqual(set(position), {"x", "y"})
        self.assertEqual(client.state, "open")
        with self.assertRaises(motiond.MotiondError) as raised:
            async for _ in client.subscribe("nothing.*"):
                self.fail("a subscription to no stream gave an event")
        self.assertEqual(raised.exception.code, "unknown_stream")

    async def test_the_subscription_resumes_after_motiond_restarts(self) -> None:
        states: asyncio.Queue[str] = asyncio.Queue()
        daemon = self.start()
        client = await self.client(on_state=lambda state, detail: states.put_nowait(state))
        while not states.empty():  # the first connection's, which may have waited for motiond
            states.get_nowait()
        async with client.subscribe("card.position") as subscription:
            await self.positions(subscription, 3)
            self.assertEqual(daemon.stop(), 0)
            async with asyncio.timeout(DEADLINE):
                while await states.get() != "waiting":
                    pass
            # What was read before the restart is not what the test waits for.
            subscription._buffer.clear()
            self.start()
            async with asyncio.timeout(DEADLINE):
                while await states.get() != "open":
                    pass
            self.assertEqual(client.connections, 2)
            seen = await self.positions(subscription, 10)
        self.assertGreater(len(set(seen)), 2, f"the card did not move after the restart: {seen}")
        self.assertEqual(await client.get("card.size"), {"width": 520, "height": 360})

    async def test_what_a_client_added_and_moved_is_back_at_once_after_a_restart(self) -> None:
        state = os.path.join(self.directory.name, "scene.json")
        daemon = self.start(state=state)
        client = await self.client()
        await client.add_element({"id": "note", "center": [100, 100], "size": [50, 50], "draggable": {}})
        await client.set("note.position", {"x": 222, "y": 333})
        self.assertEqual(daemon.stop(), 0)  # SIGTERM: the scene is written as it is
        self.start(state=state)
        async with asyncio.timeout(DEADLINE):
            while client.connections < 2 or client.state != "open":
                await asyncio.sleep(0.02)
            async for pose in client.follow("note"):  # the first pose is the restored one
                break
        self.assertEqual(pose.position, {"x": 222, "y": 333})
        self.assertEqual((await client.saved_scene())["file"], state)
        self.assertEqual(await client.reset_scene(), 4)
        self.assertNotIn("note", [element["id"] for element in await client.elements()])

    async def test_follow_gives_the_cards_pose(self) -> None:
        self.start()
        client = await self.client()
        poses = []
        async with asyncio.timeout(DEADLINE):
            async for pose in client.follow("card"):
                poses.append(pose)
                if len(poses) == 5:
                    break
        self.assertTrue(all(pose.element == "card" and pose.scale == 1 and not pose.predicted for pose in poses))
        self.assertEqual(set(poses[0].position), {"x", "y"})

    async def test_follow_draws_the_predicted_position_where_motiond_predicts(self) -> None:
        predicting = Path(self.directory.name) / "motiond.toml"
        predicting.write_text(CONFIGURATION.read_text().replace("[screen]\n", "[screen]\nprediction = 0.05\n", 1))
        self.start(predicting)
        client = await self.client()
        plain: set[tuple[float, float]] = set()

        async def record() -> None:
            async for event in client.subscribe("card.position"):
                plain.add((event.value["x"], event.value["y"]))

        recording = asyncio.ensure_future(record())
        ahead = []
        async with asyncio.timeout(DEADLINE):
            async for pose in client.follow("card"):
                if pose.predicted and (pose.position["x"], pose.position["y"]) not in plain:
                    ahead.append(pose)
                    if len(ahead) == 3:
                        break
        recording.cancel()

    async def test_the_example_follows_the_card_through_a_restart(self) -> None:
        daemon = self.start()
        example = await asyncio.create_subprocess_exec(
            sys.executable, str(EXAMPLE), "--socket", self.socket,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        self.addAsyncCleanup(example.wait)
        self.addCleanup(lambda: example.returncode is None and example.kill())
        assert example.stdout is not None and example.stderr is not None
        opened = asyncio.Queue[None]()

        async def watch_states() -> None:  # the example says each state of its connection
            while line := await example.stderr.readline():  # type: ignore[union-attr]
                if line.startswith(b"motiond is open"):
                    opened.put_nowait(None)
        watching = asyncio.ensure_future(watch_states())
        self.addCleanup(watching.cancel)

        async def positions(count: int) -> list[str]:
            said = []
            async with asyncio.timeout(DEADLINE):
                while len(said) < count:
                    line = (await example.stdout.readline()).decode()  # type: ignore[union-attr]
                    self.assertTrue(line.startswith("card x="), f"the example said {line!r}")
                    said.append(line)
            return said

        await positions(5)
        self.assertEqual(daemon.stop(), 0)
        self.start()
        async with asyncio.timeout(DEADLINE):
            await opened.get()  # the first connection
            await opened.get()  # the one after the restart
        after = await positions(30)
        self.assertIsNone(example.returncode)
        self.assertGreater(len(set(after[-10:])), 2, f"the card did not move after the restart: {after}")

    async def test_get_answers_what_the_protocol_page_says(self) -> None:
        row = next(line for line in PROTOCOL.read_text().splitlines() if line.startswith("| `get` |"))
        documented = set(re.findall(r'"(\w+)"', row.split("|")[3]))
        self.start()
        client = await self.client()
        result = await client.get_event("card.position")
        self.assertEqual(set(result), documented, f"docs/protocol.md's get row: {row}")
        self.assertEqual(result["stream"], "card.position")
        self.assertIsInstance(result["seq"], int)
        self.assertEqual(set(await client.get("card.position")), {"x", "y"})

    async def test_every_read_op_answers(self) -> None:
        self.start()
        client = await self.client()
        self.assertIn(("card.position", True), [(entry["stream"], entry["writable"]) for entry in await client.list_streams()])
        only = [entry["stream"] for entry in await client.list_streams(["card.pos*", "photo.scale"])]
        self.assertEqual(sorted(only), ["card.position", "photo.scale"])
        self.assertIn("card", [element["id"] for element in await client.elements()])
        self.assertEqual(len((await client.devices())["devices"]), 1)
        self.assertIn("frames", await client.stats())
        self.assertIn((await client.health())["status"], ("ok", "unhealthy"))
        self.assertIn("motiond", await client.metrics())
        self.assertIsNone(await client.calibration())


@unittest.skipUnless(MOTIOND, "no motiond: set MOTIOND to its path")
class SyncWithMotiond(unittest.TestCase):
    def test_get_set_and_a_queue_of_values(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        socket = os.path.join(directory.name, "motiond.sock")
        daemon = Daemon(socket)
        self.addCleanup(daemon.stop)
        with motiond.SyncClient(socket, timeout=DEADLINE, first_retry=0.05, max_retry=0.5) as client:
            self.assertEqual(client.state, "open")
            values = client.subscribe("card.spring")
            self.assertEqual(values.get(timeout=DEADLINE).value, {"tension": 342, "friction": 30, "mass": 1})
            taken = client.set("card.spring", {"tension": 200, "friction": 20, "mass": 1})
            self.assertEqual(taken["tension"], 200)
            self.assertEqual(values.get(timeout=DEADLINE).value["tension"], 200)
            self.assertEqual(client.get("card.spring")["friction"], 20)
            with self.assertRaises(motiond.MotiondError) as raised:
                client.get("nope")
            self.assertEqual(raised.exception.code, "unknown_stream")
            self.assertIn(client.health()["status"], ("ok", "unhealthy"))


if __name__ == "__main__":
    unittest.main()
