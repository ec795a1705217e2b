#!/usr/bin/python3
"""Calibrates a fake touchscreen from the calibration page, end to end.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0,
python3-websockets) and chromium:

    umockdev-wrapper /usr/bin/python3 calibration_in_browser.py --motiond M --motionctl C \
        --work DIR --artifacts DIR

The panel is made up: 0...32767 on both axes (so a device unit is 0.06 px on a 1920 x 1080
screen), ids 04f3:2a1c, mounted "off" by a known affine error. A finger on a point p of the
screen makes it report MATRIX^-1(p), so the right calibration is MATRIX.

motiond reads the panel through umockdev, with its web listener; Chromium (headless, outside
umockdev's preload) shows http://127.0.0.1:PORT/calibrate; `motionctl calibrate --json`
drives it. For each target motionctl announces, this script waits until the page draws
that target where motionctl says it is, and only then plays a touch on the panel where the
known error puts that point (written to the fake node's master end, so the touch comes
after the page showed the target, never by a timer). Target 2 first gets a touch far away, which
motionctl must refuse as a misclick. After the check target, motionctl writes the drop-in
and motiond reloads; then the same touches are played again, and each must land on its
target within a pixel (screen.contacts, read as a client would). The card under the
centre target must not have moved during the calibration.

Prints its steps as JSON lines; every wait has a deadline; motiond, motionctl and Chromium
are stopped on every path. Exits 0 on success, else says why with the logs' tails.
Started by CalibrationBrowserTests.swift.
"""
import argparse
import asyncio
import base64
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_live_page import Browser, Failure, free_port, log_of  # noqa: E402
from fake_panel import NODE, Panel, PanelFailure  # noqa: E402

# The panel's error, as a calibration matrix: turned by about 1.1 degrees, skewed, scaled and
# offset. The fit must find these six numbers.
MATRIX = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
SPAN = 32768  # device units across each axis: 0...32767
SCREEN = (1920, 1080)
RATIO = 1.5  # screen pixels per CSS pixel, so the 1920 x 1080 screen fits the 1280 x 800 window


CONFIGURATION = """[screen]
width = 1920
height = 1080

[[device]]
name = "*"

[[element]]
id = "card"
center = [960, 540]
size = [400, 300]

[element.draggable]
"""


def device_units(point):
    """Where the panel reports a finger at screen point `point`: MATRIX^-1 of its normalised place."""
    a, b, c, d, e, f = MATRIX
    x, y = point[0] / SCREEN[0] - c, point[1] / SCREEN[1] - f
    determinant = a * e - b * d
    u, v = (e * x - b * y) / determinant, (a * y - d * x) / determinant
    return round(u * SPAN), round(v * SPAN)


class Lines:
    """A child's stdout lines, read on a thread, taken with a deadline."""

    def __init__(self, process):
        self.queue = queue.Queue()
        self.seen = []
        threading.Thread(target=self.pump, args=(process.stdout,), daemon=True).start()

    def pump(self, stream):
        for line in stream:
            self.queue.put(line)
        self.queue.put(None)

    def next(self, deadline=60):
        try:
            line = self.queue.get(timeout=deadline)
        except queue.Empty:
            raise Failure(f"nothing within {deadline} s; so far: {self.seen}")
        if line is None:
            raise Failure(f"the output ended; so far: {self.seen}")
        self.seen.append(line.strip())
        return json.loads(line)


class Contacts:
    """A client of the Unix socket subscribed to screen.contacts."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(30)
        self.socket.connect(path)
        self.file = self.socket.makefile("r")
        self.file.readline()  # hello
        self.socket.sendall(b'{"id": 1, "op": "subscribe", "streams": ["screen.contacts"]}\n')
        # Touches count from here: motiond follows the fingers only once the subscription is
        # in, so wait for its reply and the current value before any touch is played.
        end = time.monotonic() + 30
        while True:
            if time.monotonic() > end:
                raise Failure("the contacts subscription was not answered within 30 s")
            message = json.loads(self.file.readline() or "null")
            if message is None:
                raise Failure("motiond closed the contacts client")
            if message.get("stream") == "screen.contacts":
                break

    def first_touch(self):
        """The first non-empty screen.contacts value from now on."""
        end = time.monotonic() + 30
        while time.monotonic() < end:
            line = self.file.readline()
            if not line:
                raise Failure("motiond closed the contacts client")
            message = json.loads(line)
            if message.get("stream") == "screen.contacts" and message["value"]:
                return message["value"][0]
        raise Failure("no touch reached screen.contacts within 30 s")


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


TARGET_ON_PAGE = """(() => {
  const overlay = document.querySelector('#calibration'), target = document.querySelector('#target');
  if (!overlay || overlay.hidden || !target || target.hidden) return {shown: false, status: document.body && document.body.dataset.status};
  const box = target.getBoundingClientRect();
  return {shown: true, step: Number(overlay.dataset.step), steps: Number(overlay.dataset.steps), device: overlay.dataset.device,
          x: Number(target.dataset.x), y: Number(target.dataset.y),
          drawn: {x: box.left + box.width / 2, y: box.top + box.height / 2},
          message: document.querySelector('#calibration-message').textContent};
})()"""


async def page_shows(browser, announced, deadline=30):
    """Waits until the page draws the target motionctl announced, where it should be."""
    end = time.monotonic() + deadline
    shown = None
    while time.monotonic() < end:
        shown = await browser.evaluate(TARGET_ON_PAGE)
        if shown.get("shown") and shown["step"] == announced["index"] and shown["x"] == announced["x"] and shown["y"] == announced["y"] \
                and abs(shown["drawn"]["x"] - announced["x"] / RATIO) <= 1 and abs(shown["drawn"]["y"] - announced["y"] / RATIO) <= 1:
            return shown
        await asyncio.sleep(0.05)
    raise Failure(f"within {deadline} s the page never drew target {announced}; it showed {shown}")


async def page_says(browser, words, deadline=30):
    """Waits until the calibration page's message contains `words`."""
    end = time.monotonic() + deadline
    shown = None
    while time.monotonic() < end:
        shown = await browser.evaluate(TARGET_ON_PAGE)
        if words in shown.get("message", ""):
            return shown
        await asyncio.sleep(0.05)
    raise Failure(f"within {deadline} s the page never said '{words}'; it showed {shown}")


def ctl(args, *arguments):
    run = subprocess.run([args.motionctl, *arguments, "--socket", args.socket], capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        raise Failure(f"motionctl {' '.join(arguments)}: {run.stderr}")
    return json.loads(run.stdout) if run.stdout.strip().startswith(("{", "[")) else run.stdout


async def check(args):
    work = args.work
    panel = Panel(work, args.motionctl)
    configuration = os.path.join(work, "motiond.toml")
    with open(configuration, "w") as file:
        file.write(CONFIGURATION)
    args.socket = os.path.join(work, "motiond.sock")
    port = free_port()
    motiond_log = os.path.join(work, "motiond.log")
    browser = Browser(work, args.chromium)
    daemon = calibrate = None
    try:
        with open(motiond_log, "w") as log:
            daemon = subprocess.Popen([args.motiond, "--config", configuration, "--socket", args.socket, "--websocket", f"127.0.0.1:{port}"],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        end = time.monotonic() + 30
        while True:
            if daemon.poll() is not None:
                raise Failure(f"motiond exited with {daemon.returncode}")
            if os.path.exists(args.socket):
                devices = subprocess.run([args.motionctl, "devices", "--json", "--socket", args.socket], capture_output=True, text=True, timeout=30)
                if NODE in devices.stdout:
                    break
            if time.monotonic() > end:
                raise Failure("motiond did not read the panel within 30 s")
            time.sleep(0.1)
        card = ctl(args, "get", "card.position", "--json")
        step("ready", node=NODE, card=card.get("value", card))

        # Chromium runs outside umockdev: it has no business with the fake /sys.
        environment = {key: value for key, value in os.environ.items() if key not in ("LD_PRELOAD", "UMOCKDEV_DIR")}
        os.environ.clear()
        os.environ.update(environment)
        await browser.start()
        await browser.page("Page.enable")
        await browser.page("Page.navigate", {"url": f"http://127.0.0.1:{port}/calibrate?ratio={RATIO}"})

        calibrate = subprocess.Popen([args.motionctl, "calibrate", "--socket", args.socket, "--device", NODE, "--points", "5", "--json", "--timeout", "60"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = Lines(calibrate)
        opened = lines.next()
        if opened.get("step") != "open" or not opened.get("url", "").endswith("/calibrate"):
            raise Failure(f"motionctl did not say where the page is: {opened}")
        step("open", url=opened["url"])
        touched = []
        misclicked = False
        while True:
            line = lines.next()
            if line.get("step") == "written":
                written = line
                break
            if line.get("step") != "target":
                raise Failure(f"unexpected from motionctl: {line}")
            shown = await page_shows(browser, line)
            if misclicked and line["index"] == 2:
                shown = await page_says(browser, "from the cross")
            target = (line["x"], line["y"])
            if line["index"] == 1:
                shot = await browser.page("Page.captureScreenshot", {"format": "png"})
                os.makedirs(args.artifacts, exist_ok=True)
                screenshot = os.path.join(args.artifacts, "calibration-page.png")
                with open(screenshot, "wb") as file:
                    file.write(base64.b64decode(shot["data"]))
            if line["index"] == 2 and not misclicked:
                # A touch on the other side of the screen first: a misclick, refused.
                panel.tap(*device_units((SCREEN[0] - target[0], SCREEN[1] - target[1])))
                refusal = lines.next()
                if refusal.get("step") != "misclick" or refusal.get("index") != 2:
                    raise Failure(f"a touch 1500 px off was not refused: {refusal}")
                misclicked = True
                step("misclick", distance=refusal["distance"])
                continue
            step("target", index=line["index"], of=line["of"], x=line["x"], y=line["y"], page=shown["drawn"], message=shown["message"])
            touched.append(target)
            panel.tap(*device_units(target))
        if lines.next().get("step") != "reloaded":
            raise Failure(f"motionctl did not say motiond reloaded: {lines.seen}")
        status = calibrate.wait(timeout=30)
        if status != 0:
            raise Failure(f"motionctl calibrate exited with {status}: {calibrate.stderr.read()}")
        with open(written["path"]) as file:
            drop_in = file.read()
        step("written", path=written["path"], matrix=written["matrix"], rms_px=written["rms_px"], check_px=written["check_px"], text=drop_in)

        after = ctl(args, "get", "card.position", "--json")
        devices = subprocess.run([args.motionctl, "devices", "--json", "--socket", args.socket], capture_output=True, text=True, timeout=30)
        mapping = next(json.loads(line)["mapping"] for line in devices.stdout.splitlines() if NODE in line)
        step("reloaded", calibration=mapping["calibration"], card=after.get("value", after))

        # The same touches again: each must land on its target.
        contacts = Contacts(args.socket)
        for target in touched:
            panel.tap(*device_units(target))
            contact = contacts.first_touch()
            step("landed", target=list(target), at=[contact["x"], contact["y"]])

        step("screenshot", path=screenshot)
    except (Failure, PanelFailure, asyncio.TimeoutError, OSError, ValueError, KeyError, StopIteration, subprocess.TimeoutExpired) as error:
        said = calibrate.stderr.read() if calibrate and calibrate.poll() is not None else ""
        raise Failure(f"{type(error).__name__}: {error}\n--- motionctl calibrate said:\n{said}\n--- chromium said:\n{log_of(browser.log, 2000)}\n--- motiond said:\n{log_of(motiond_log, 3000)}")
    finally:
        browser.stop()
        for process in (calibrate, daemon):
            if process and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()


def main():
    parser = argparse.ArgumentParser()
    for name in ("motiond", "motionctl", "work", "artifacts"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    try:
        asyncio.run(asyncio.wait_for(check(args), 240))
    except (Failure, PanelFailure, asyncio.TimeoutError) as error:
        print(f"calibration_in_browser: {error or 'no result within 240 s'}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
