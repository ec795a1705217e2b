"""A made-up touchscreen for end-to-end tests, faked by libumockdev, touched on demand.

0...32767 on both axes at 100 units/mm (a 328 mm square; a unit is 0.06 px on a 1920 x 1080
screen), ten slots, ids 04f3:2a1c, no fuzz; with `touch_major`, ABS_MT_TOUCH_MAJOR too, 0...8000
in the position axes' units (up to 80 mm). Touches are written as the kernel sends them
(struct input_event) to the master end of the fake node, when the test decides: libumockdev
plays only one evemu file per device, and a timer would race whatever the test waits for.

Needs Debian's python3 with python3-gi and gir1.2-umockdev-1.0, under umockdev-wrapper.
"""
import argparse
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import threading
import time

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402

NODE = "/dev/input/event61"

# The fake node is a pty, whose line discipline holds 4095 bytes: not a whole number of
# events (24 bytes each). A reader that fell that far behind would get a torn event, and
# libevdev gives up on the device (EINVAL), which a kernel's evdev never makes it do. So the
# panel writes in chunks of whole events, each once motiond has read all before it; asking
# the pty whether anything is unread (poll) also waits for what the kernel has yet to move
# into the line discipline, so that nothing is unread is known, not guessed.
CHUNK = 24 * 40
TIOCGPTN = 0x80045430


def live_arguments():
    """What every live test's Swift side passes it: motiond's and motionctl's paths, and the
    folder to work in (`--motiond`, `--motionctl`, `--work`)."""
    parser = argparse.ArgumentParser()
    for name in ("motiond", "motionctl", "work"):
        parser.add_argument("--" + name, required=True)
    return parser.parse_args()


class PanelFailure(Exception):
    pass


HEADER = """N: Calibration Test Panel
I: 0018 04f3 2a1c 0100
P: 02 00 00 00 00 00 00 00
B: 00 0b 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 04 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 02 00 00 00 00 00 00 00 00
B: 03 03 00 00 00 00 80 60 02
B: 04 00 00 00 00 00 00 00 00
B: 05 00 00 00 00 00 00 00 00
B: 11 00 00 00 00 00 00 00 00
B: 12 00 00 00 00 00 00 00 00
B: 14 00 00 00 00 00 00 00 00
B: 15 00 00 00 00 00 00 00 00
B: 15 00 00 00 00 00 00 00 00
A: 00 0 32767 0 0 100
A: 01 0 32767 0 0 100
A: 2f 0 9 0 0 0
A: 35 0 32767 0 0 100
A: 36 0 32767 0 0 100
A: 39 0 65535 0 0 0
E: 0.000000 0000 0000 0000
"""


class EventNode:
    """The master end of a fake event node in `testbed` (a pty), written in whole events:
    each chunk of CHUNK bytes once the reader has read everything before it."""

    def __init__(self, testbed, node):
        self.fd = testbed.get_dev_fd(node)
        if self.fd < 0:
            raise PanelFailure(f"umockdev gave no descriptor for {node}")
        # The pty's other end, opened only to ask whether the reader has read everything.
        number = struct.unpack("I", fcntl.ioctl(self.fd, TIOCGPTN, b"\0" * 4))[0]
        self.unread = select.poll()
        self.unread.register(os.open(f"/dev/pts/{number}", os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK), select.POLLIN)

    def write(self, data, behind=False, deadline=30):
        """`data`, struct input_events. `behind`: written even while the reader has yet to
        read what came before, for a test that stopped it; at most CHUNK bytes, which fit
        the pty whatever it holds unread. Each wait for the reader ends after `deadline` s."""
        if behind and len(data) > CHUNK:
            raise PanelFailure(f"{len(data)} bytes are too many to write while the reader is behind")
        for start in range(0, len(data), CHUNK):
            chunk = data[start:start + CHUNK]
            if not behind:
                self.wait_until_read(deadline)
            written = os.write(self.fd, chunk)
            if written != len(chunk):
                raise PanelFailure(f"wrote {written} of {len(chunk)} bytes")

    def wait_until_read(self, deadline=30, running=lambda: True):
        """Until the reader has read everything written, or `running()` is false."""
        end = time.monotonic() + deadline
        while running() and self.has_unread():
            if time.monotonic() > end:
                raise PanelFailure(f"the reader left what was written unread for {deadline} s")
            time.sleep(0.001)

    def has_unread(self):
        return bool(self.unread.poll(0))

    def play(self, path, running=lambda: True, deadline=30):
        """Plays evemu events file `path` as libumockdev's load_evemu_events does, each frame
        when its stamp comes (counted from now), but whole: a frame waits until the reader
        has read what came before. Ends early once `running()` is false; PanelFailure when
        the reader leaves a frame unread for `deadline` s."""
        start = time.monotonic()
        for stamp, data in evemu_frames(path):
            while running() and (left := start + stamp - time.monotonic()) > 0:
                time.sleep(min(0.05, left))
            self.wait_until_read(deadline, running)
            if not running():
                return
            self.write(data, deadline=deadline)

    def play_in_background(self, path):
        """`play` on a thread of its own, for a script that waits on other things meanwhile;
        a failure is said on standard error (what the reader then misses fails the test)."""
        def play():
            try:
                self.play(path)
            except PanelFailure as failure:
                print(f"{path}: {failure}", file=sys.stderr, flush=True)
        thread = threading.Thread(target=play, daemon=True)
        thread.start()
        return thread


EVEMU_EVENT = re.compile(r"^E: ([0-9]+)\.([0-9]+) +([0-9a-fA-F]+) +([0-9a-fA-F]+) +(-?[0-9]+)")


def evemu_frames(path):
    """An evemu events file's frames: (seconds from its first event, the frame as
    struct input_events, stamped as written), a frame being the events up to and including
    a SYN_REPORT. Lines other than events are skipped, as libumockdev skips them."""
    frame, first, stamp = b"", None, None
    with open(path) as file:
        for line in file:
            match = EVEMU_EVENT.match(line)
            if not match:
                continue
            seconds, micros, kind, code, value = match.groups()
            time_of_event = int(seconds) + int(micros) / 1_000_000
            first = time_of_event if first is None else first
            stamp = time_of_event - first if stamp is None else stamp
            frame += struct.pack("@qqHHi", int(seconds), int(micros), int(kind, 16), int(code, 16), int(value))
            if int(kind, 16) == 0 and int(code, 16) == 0:
                yield stamp, frame
                frame, stamp = b"", None
    if frame:
        yield stamp, frame


class Panel:
    """The fake touchscreen at NODE, or at `node` (/dev/input/eventNN) for a second one.

    `name` (bytes, any but NUL, at most 254) is what the kernel says the device is called,
    answered to libevdev's EVIOCGNAME as it is, newlines and invalid UTF-8 included: a USB
    descriptor can say anything. `id_path` sets udev's ID_PATH, where it is plugged in."""

    def __init__(self, work, motionctl, node=NODE, name=None, id_path=None, testbed=None, touch_major=False):
        base = "panel" if node == NODE else "panel" + node[len("/dev/input/event"):]
        header = os.path.join(work, base + ".evemu")
        text = HEADER
        if touch_major:
            # ABS_MT_TOUCH_MAJOR (0x30) is bit 0 of the seventh byte of the B: 03 mask.
            text = text.replace("B: 03 03 00 00 00 00 80 60 02", "B: 03 03 00 00 00 00 80 61 02")
            text = text.replace("A: 2f 0 9 0 0 0\n", "A: 2f 0 9 0 0 0\nA: 30 0 8000 0 0 0\n")
        with open(header, "w") as file:
            file.write("# EVEMU 1.3\n" + text)
        run = subprocess.run([motionctl, "umockdev", header, "--output-dir", work, "--event-number", node[len("/dev/input/event"):]],
                             capture_output=True, text=True, timeout=30)
        if run.returncode != 0:
            raise PanelFailure(f"motionctl umockdev failed: {run.stderr}")
        description, ioctl = os.path.join(work, base + ".umockdev"), os.path.join(work, base + ".ioctl")
        if id_path is not None:
            with open(description) as file:
                lines = file.read().split("\n")
            at = next(index for index, line in enumerate(lines) if line.startswith("E: DEVNAME="))
            lines.insert(at + 1, "E: ID_PATH=" + id_path)
            with open(description, "w") as file:
                file.write("\n".join(lines))
        if name is not None:
            answer = (name + b"\0").ljust(255, b"\0").hex().upper()
            with open(ioctl) as file:
                lines = [f"EVIOCGNAME(0) {len(name) + 1} {answer}" if line.startswith("EVIOCGNAME(0) ") else line
                         for line in file.read().split("\n")]
            with open(ioctl, "w") as file:
                file.write("\n".join(lines))
        with open(description) as file:
            self.syspath = "/sys" + next(line for line in file if line.startswith("P: "))[3:].strip()
        self.testbed = testbed or UMockdev.Testbed.new()
        if not self.testbed.add_from_file(description):
            raise PanelFailure("umockdev could not add the panel")
        self.testbed.load_ioctl(node, ioctl)
        self.node = EventNode(self.testbed, node)
        self.touches = 0

    def write(self, events, delay_from=None, delay=0.05, behind=False):
        """Events (type, code, value), stamped now (those from index `delay_from` on, `delay` later).

        `behind`: written even while motiond has yet to read what came before, for a test that
        stopped it; a few events, which fit the pty whatever it holds unread."""
        now = time.monotonic()
        self._send([(now + (delay if delay_from is not None and index >= delay_from else 0), event)
                    for index, event in enumerate(events)], behind=behind)

    def frames(self, frames, spacing=0.01):
        """Frames of events (type, code, value), each ended by SYN_REPORT, stamped `spacing`
        apart and ending now: the daemon measures speed on these stamps, whenever it reads them."""
        now = time.monotonic()
        self._send([(now - (len(frames) - 1 - index) * spacing, event)
                    for index, events in enumerate(frames) for event in events + [(0, 0, 0)]])

    def _send(self, stamped, behind=False):
        self.node.write(b"".join(struct.pack("@qqHHi", int(stamp), int((stamp % 1) * 1_000_000), kind, code, value)
                                 for stamp, (kind, code, value) in stamped), behind=behind)

    def unplug(self):
        """The panel goes away: a "remove" uevent, and its node and sysfs entry are gone."""
        self.testbed.uevent(self.syspath, "remove")
        self.testbed.remove_device(self.syspath)

    def down(self, x, y):
        """A new finger in slot 0 at (x, y) device units; returns its tracking id."""
        self.touches += 1
        self.write([(3, 0x2F, 0), (3, 0x39, self.touches), (3, 0x35, x), (3, 0x36, y), (1, 0x14A, 1), (0, 0, 0)])
        return self.touches

    def tap(self, x, y):
        """A finger down at (x, y) device units, and up 100 ms later: a person's tap (one
        of 70 ms or less is a flood's contact to the storm rule, when taps like it come
        three within 0.25 s at places apart, as a script tapping targets can)."""
        self.touches += 1
        self.write([(3, 0x2F, 0), (3, 0x39, self.touches), (3, 0x35, x), (3, 0x36, y), (1, 0x14A, 1), (0, 0, 0),
                    (3, 0x39, -1), (1, 0x14A, 0), (0, 0, 0)], delay_from=6, delay=0.1)


class LiveDaemon:
    """motiond reading the panel, on `configuration` (TOML text), its log in work/motiond.log
    and its socket in work/motiond.sock."""

    def __init__(self, motiond, motionctl, work, configuration):
        self.motionctl = motionctl
        self.path = os.path.join(work, "motiond.sock")
        self.log_path = os.path.join(work, "motiond.log")
        config_path = os.path.join(work, "motiond.toml")
        with open(config_path, "w") as file:
            file.write(configuration)
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen([motiond, "--config", config_path, "--socket", self.path],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)

    def devices(self):
        """`motionctl devices`, or nothing while motiond cannot answer yet."""
        run = subprocess.run([self.motionctl, "devices", "--json", "--socket", self.path], capture_output=True, text=True, timeout=30)
        return [json.loads(line) for line in run.stdout.splitlines() if line.strip()] if run.returncode == 0 else []

    def wait_for_panel(self, deadline=30):
        """Until motiond reads the panel at NODE (else PanelFailure, after `deadline` seconds)."""
        end = time.monotonic() + deadline
        while not (os.path.exists(self.path) and any(device.get("node") == NODE for device in self.devices())):
            if self.process.poll() is not None or time.monotonic() > end:
                raise PanelFailure(f"motiond did not read the panel within {deadline} s")
            time.sleep(0.1)

    def said(self):
        """The end of motiond's log."""
        with open(self.log_path) as file:
            return file.read()[-3000:]

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
