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
the whole sequence. Every wait is on the reader's output, never on a timer; the reader's
own --timeout ends a run that hangs.
"""
import json
import os
import subprocess
import sys

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402


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
    testbed.load_evemu_events(node, events_file)
    child = subprocess.Popen(reader, stdout=subprocess.PIPE, text=True)

    def read_until(predicate):
        for line in child.stdout:
            print(line, end="", flush=True)
            message = json.loads(line)
            if predicate(message):
                return
        raise SystemExit("the reader stopped before it reported what was expected")

    seen = 0

    def enough_frames(message):
        nonlocal seen
        if message.get("event") == "frame":
            seen += 1
        return seen >= frames

    read_until(enough_frames)
    step("unplug")
    testbed.uevent(syspath, "remove")
    testbed.remove_device(syspath)
    read_until(lambda m: m.get("event") == "device" and m.get("action") == "removed")

    step("replug")
    syspath, node = plug(again_device, again_ioctl)
    testbed.uevent(syspath, "add")
    read_until(lambda m: m.get("event") == "device" and m.get("action") == "added")

    step("done")
    # SIGKILL: a reader started from a test runner may inherit SIGTERM blocked. Its lines
    # are flushed as written, so nothing is lost.
    child.kill()
    child.wait()


if __name__ == "__main__":
    main()
