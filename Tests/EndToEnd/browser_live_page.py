#!/usr/bin/env python3
"""The live page in a real browser: Debian's headless Chromium, driven over the DevTools protocol.

    browser_live_page.py --motiond M --motionctl C --config F --recording R --artifacts DIR

Starts motiond replaying R once (no --loop) with its WebSocket listener on a free loopback port,
waits for the scene to come to rest, opens http://127.0.0.1:PORT/ in Chromium and checks that
the card's box on the page is where `motionctl get card.position` says the card is (within
1 px), both by the box's data-x/data-y and by where the browser actually drew it. Then it moves
the card's spring destination with `motionctl set` and checks that the page followed, live.
Saves a screenshot into DIR. Every wait has a deadline; Chromium and motiond are killed on
every path. Exits 0 on success; otherwise prints why, with Chromium's and motiond's logs.
Started by BrowserLivePageTests.swift.
"""
import argparse
import asyncio
import base64
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websockets


class Failure(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def log_of(path, limit=6000):
    """The end of a log, without Chromium's complaints that a container has no D-Bus."""
    try:
        lines = pathlib.Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(line for line in lines if "dbus" not in line)[-limit:]


class Daemon:
    """motiond with a Unix socket and a WebSocket listener, its stderr in a file."""

    def __init__(self, args, directory):
        self.args, self.directory = args, directory
        self.socket = os.path.join(directory, "motiond.sock")
        self.log = os.path.join(directory, "motiond.log")
        self.process = None

    def start(self, deadline=30):
        # A free port can be taken between our probe and motiond's bind: try once more.
        for attempt in range(2):
            self.port = free_port()
            with open(self.log, "w") as log:
                self.process = subprocess.Popen(
                    [self.args.motiond, "--config", self.args.config, "--socket", self.socket,
                     "--replay", self.args.recording, "--websocket", f"127.0.0.1:{self.port}"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
            end = time.monotonic() + deadline
            while time.monotonic() < end:
                if self.process.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2) as page:
                        if page.status == 200:
                            return
                except OSError:
                    time.sleep(0.1)
            else:
                raise Failure(f"motiond's page did not answer on port {self.port} within {deadline} s; it said:\n{log_of(self.log)}")
            if attempt == 1 or "in use" not in log_of(self.log):
                raise Failure(f"motiond exited with {self.process.returncode}; it said:\n{log_of(self.log)}")

    def ctl(self, *arguments):
        run = subprocess.run([self.args.motionctl, *arguments, "--socket", self.socket],
                             capture_output=True, text=True, timeout=30)
        if run.returncode != 0:
            raise Failure(f"motionctl {' '.join(arguments)} failed: {run.stderr}\nmotiond said:\n{log_of(self.log)}")
        return json.loads(run.stdout)

    def wait_for_rest(self, after_frames, deadline=60):
        """Until the scene is at rest after more input frames than `after_frames` (motion happened)."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            stats = self.ctl("stats")
            if stats["state"] == "atRest" and stats["frames"] > after_frames:
                return stats["frames"]
            time.sleep(0.1)
        raise Failure(f"the scene was not at rest after frame {after_frames} within {deadline} s: {stats}")

    def wait_for_card_at(self, destination, deadline=60):
        """Until the scene is at rest with the card within 1 px of `destination`. A `set` moves
        the card by its spring, with no input frame: the frame count says nothing of it (on a
        loaded machine the replay had ended before the first wait, and the count never grew)."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            stats = self.ctl("stats")
            card = self.ctl("get", "card.position")
            card = card.get("value", card)
            if stats["state"] == "atRest" and abs(card["x"] - destination["x"]) <= 1 and abs(card["y"] - destination["y"]) <= 1:
                return
            time.sleep(0.1)
        raise Failure(f"the card was not at rest at {destination} within {deadline} s: at {card}, {stats}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class Browser:
    """Headless Chromium in its own process group, with a DevTools session on one page."""

    def __init__(self, directory, executable):
        self.profile = os.path.join(directory, "chromium-profile")
        self.log = os.path.join(directory, "chromium.log")
        self.executable = executable
        self.process = None
        self.next_id = 0

    async def start(self, deadline=60):
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [self.executable, "--headless=new", "--remote-debugging-port=0",
                 f"--user-data-dir={self.profile}", "--no-sandbox", "--no-first-run",
                 "--no-default-browser-check", "--disable-gpu", "--window-size=1280,800", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        port_file = pathlib.Path(self.profile, "DevToolsActivePort")
        end = time.monotonic() + deadline
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.process.poll() is not None:
                raise Failure(f"chromium exited with {self.process.returncode} before it listened; it said:\n{log_of(self.log)}")
            if time.monotonic() > end:
                raise Failure(f"chromium wrote no DevToolsActivePort within {deadline} s; it said:\n{log_of(self.log)}")
            await asyncio.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        self.connection = await asyncio.wait_for(
            websockets.connect(f"ws://127.0.0.1:{port}{path}", max_size=64 * 1024 * 1024), 20)
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        self.session = attached["sessionId"]

    async def send(self, method, params=None, session=None, deadline=30):
        """One DevTools command and its result; events in between are skipped."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self.connection.send(json.dumps(message))

        async def reply():
            while True:
                answer = json.loads(await self.connection.recv())
                if answer.get("id") == message["id"]:
                    return answer

        answer = await asyncio.wait_for(reply(), deadline)
        if "error" in answer:
            raise Failure(f"{method}: {answer['error']}")
        return answer["result"]

    async def page(self, method, params=None):
        return await self.send(method, params, session=self.session)

    async def evaluate(self, expression):
        result = await self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise Failure(f"the page threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # its renderers and helpers too
            self.process.wait(timeout=10)


# Where the page has the card: its published position (data-x/data-y), and the centre of the
# box the browser drew, mapped back to screen pixels through the stage's scale.
CARD_ON_PAGE = """(() => {
  const box = document.querySelector('[data-id="card"]');
  if (!box || box.dataset.x === undefined) return {status: document.body && document.body.dataset.status};
  const screen = document.querySelector('#screen');
  const frame = screen.getBoundingClientRect();
  const factor = frame.width / screen.offsetWidth;
  const rect = box.getBoundingClientRect();
  return {status: document.body.dataset.status, x: Number(box.dataset.x), y: Number(box.dataset.y),
          drawn: {x: (rect.left + rect.width / 2 - frame.left) / factor, y: (rect.top + rect.height / 2 - frame.top) / factor}};
})()"""


async def page_agrees(browser, daemon, deadline=30):
    """Waits until the page shows the card where motiond has it; returns both."""
    truth = daemon.ctl("get", "card.position")
    truth = truth.get("value", truth)
    end = time.monotonic() + deadline
    shown = None
    while time.monotonic() < end:
        shown = await browser.evaluate(CARD_ON_PAGE)
        if "x" in shown:
            near = lambda a: abs(a["x"] - truth["x"]) <= 1 and abs(a["y"] - truth["y"]) <= 1
            if near(shown) and near(shown["drawn"]):
                return truth, shown
        await asyncio.sleep(0.1)
    raise Failure(f"within {deadline} s the page never showed the card at motiond's {truth}; it showed {shown}")


async def check(args, directory):
    daemon = Daemon(args, directory)
    browser = Browser(directory, args.chromium)
    try:
        daemon.start()
        daemon.wait_for_rest(after_frames=0)
        await browser.start()
        await browser.page("Page.enable")
        await browser.page("Page.navigate", {"url": f"http://127.0.0.1:{daemon.port}/"})
        truth, shown = await page_agrees(browser, daemon)
        print(json.dumps({"step": "replayed", "motionctl": truth, "page": shown}), flush=True)

        # Live, not only at load: move the card's spring destination; the page must follow.
        destination = {"x": 1000, "y": 400}
        daemon.ctl("set", "card.destination", json.dumps(destination))
        daemon.wait_for_card_at(destination)
        truth, shown = await page_agrees(browser, daemon)
        if abs(truth["x"] - destination["x"]) > 1 or abs(truth["y"] - destination["y"]) > 1:
            raise Failure(f"the card did not go to its new destination {destination}: motiond has it at {truth}")
        print(json.dumps({"step": "moved", "motionctl": truth, "page": shown}), flush=True)

        shot = await browser.page("Page.captureScreenshot", {"format": "png"})
        os.makedirs(args.artifacts, exist_ok=True)
        path = os.path.join(args.artifacts, "live-page.png")
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        print(json.dumps({"step": "screenshot", "path": path}), flush=True)
    except (Failure, asyncio.TimeoutError, OSError, websockets.WebSocketException) as error:
        raise Failure(f"{type(error).__name__}: {error}\n--- chromium said:\n{log_of(browser.log, 3000)}\n--- motiond said:\n{log_of(daemon.log, 3000)}")
    finally:
        browser.stop()
        daemon.stop()


def run_check(check, options, name, deadline):
    """Runs `check(args, directory)` with the required `options` (and --chromium) read from
    the command line, in a scratch directory, within `deadline` seconds; on a failure prints
    why under `name` and exits 1. What the browser scripts share."""
    parser = argparse.ArgumentParser()
    for option in options:
        parser.add_argument("--" + option, required=True)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix=f"motiond-{name}-")
    try:
        asyncio.run(asyncio.wait_for(check(args, directory), deadline))
    except (Failure, asyncio.TimeoutError) as error:
        print(f"{name}: {error or f'no result within {deadline} s'}", file=sys.stderr)
        sys.exit(1)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    run_check(check, ("motiond", "motionctl", "config", "recording", "artifacts"), "browser_live_page", 240)
