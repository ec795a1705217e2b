#!/usr/bin/python3
"""Unplugs and replugs a fake touchscreen under a reader, through the libumockdev API.

Run under umockdev-wrapper, with Debian's python3 (it needs python3-gi and
gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 hotplug.py DEVICE.umockdev DEVICE.ioctl HELD.events FRAMES \
        AGAIN.umockdev AGAIN.ioctl -- READER ARGS...

The reader (motionctl frames --json) runs in the testbed. This script waits until the
reader has printed FRAMES frames (the finger in HELD.events is still down then), removes
the device with a "remove" uevent, waits for the reader to report the removal, adds the
device back (AGAIN.*: the same device, as a new event node, as after a real replug;
libumockdev cannot recreate a node it removed) with an "add" uevent and waits for the
reader to open it again. It passes the
reader's lines through, with its own steps as {"step": ...} lines, so the test can check
the whole sequence. Every wait is on the reader's output, and each has a deadline of
WAIT_SECONDS: a reader that hangs, or never says what is awaited, ends the script with a
{"step": "timeout", "waiting_for": ...} line and exit status 1, whether or not the reader's
own --timeout would have ended it.
"""
import json
import os
import select
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import EventNode, UMockdev  # noqa: E402

# Longer than any step takes on a loaded build machine; shorter than the test's own
# deadline for the whole run, so that the script, not the test runner, says what it awaited.
WAIT_SECONDS = 45


class Lines:
    """The reader's output, a line at a time, each read bounded by a deadline."""

    def __init__(self, stream):
        self.fd = stream.fileno()
        self.pending = b""

    def next(self, deadline):
        """The next line, None at the end of the output, or TimeoutError at `deadline`."""
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode("utf-8") + "\n"


def main():
    separator = sys.argv.index("--")
    device_file, ioctl_file, events_file, frames, again_device, again_ioctl = sys.argv[1:separator]
    reader = sys.argv[separator + 1:]
    frames = int(frames)

    testbed = UMockdev.Testbed.new()

    def plug(device_file, ioctl_file):
        syspath = None
        with open(device_file) as f:
            for line in f:
                if line.startswith("P: "):
                    syspath = "/sys" + line[3:].strip()
                    break
        assert testbed.add_from_file(device_file), "cannot add " + device_file
        node = "/dev/input/" + os.path.basename(syspath)
        testbed.load_ioctl(node, ioctl_file)
        return syspath, node

    def step(name):
        print(json.dumps({"step": name}), flush=True)

    syspath, node = plug(device_file, ioctl_file)
    EventNode(testbed, node).play_in_background(events_file)
    child = subprocess.Popen(reader, stdout=subprocess.PIPE)
    lines = Lines(child.stdout)

    def read_until(what, predicate):
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                line = lines.next(deadline)
            except TimeoutError:
                print(json.dumps({"step": "timeout", "waiting_for": what, "seconds": WAIT_SECONDS}), flush=True)
                child.kill()
                child.wait()
                raise SystemExit(f"hotplug.py: the reader did not report {what} within {WAIT_SECONDS} s")
            if line is None:
                raise SystemExit(f"hotplug.py: the reader stopped before it reported {what}")
            print(line, end="", flush=True)
            if predicate(json.loads(line)):
                return

    seen = 0

    def enough_frames(message):
        nonlocal seen
        if message.get("event") == "frame":
            seen += 1
        return seen >= frames

    read_until(f"{frames} frames", enough_frames)
    step("unplug")
    testbed.uevent(syspath, "remove")
    testbed.remove_device(syspath)
    read_until("the device removed", lambda m: m.get("event") == "device" and m.get("action") == "removed")

    step("replug")
    syspath, node = plug(again_device, again_ioctl)
    testbed.uevent(syspath, "add")
    read_until("the device added again", lambda m: m.get("event") == "device" and m.get("action") == "added")

    step("done")
    # SIGKILL: a reader started from a test runner may inherit SIGTERM blocked. Its lines
    # are flushed as written, so nothing is lost.
    child.kill()
    child.wait()


if __name__ == "__main__":
    main()
