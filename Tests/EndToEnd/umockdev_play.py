#!/usr/bin/python3
"""`umockdev-run --evemu-events`, with every event delivered whole.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0), with
umockdev-run's arguments:

    umockdev-wrapper /usr/bin/python3 umockdev_play.py --device D.umockdev \
        --ioctl /dev/input/eventN=D.ioctl [--evemu-events /dev/input/eventN=D.events] -- PROGRAM ARGS...

umockdev-run plays the events on a timer from its start, into the fake node's pty. A
program slow to start or to read (a loaded machine) leaves them piling up in the pty,
which holds 4095 bytes: not a whole number of events. The read that reaches that edge
gets part of an event, and libevdev gives up on the device (EINVAL), which a kernel's
evdev never makes it do. Here each frame is written when its stamp comes (as umockdev-run
does, from the program's start), and not before the program has read everything before
it (fake_panel.EventNode.play), so a slow reader gets the same events, later.

PROGRAM runs in the testbed with this script's standard input, output and error; the
exit status is its own. A program that leaves events unread for 30 s is killed, and the
script says so and exits 1.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import EventNode, PanelFailure, UMockdev  # noqa: E402


def node_and_file(text):
    node, separator, path = text.partition("=")
    if not separator:
        raise argparse.ArgumentTypeError(f"{text}: expected /dev/input/eventN=FILE")
    return node, path


def main():
    separator = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", required=True)
    parser.add_argument("--ioctl", type=node_and_file, required=True)
    parser.add_argument("--evemu-events", type=node_and_file)
    args = parser.parse_args(sys.argv[1:separator])
    program = sys.argv[separator + 1:]

    testbed = UMockdev.Testbed.new()
    if not testbed.add_from_file(args.device):
        sys.exit(f"umockdev_play.py: umockdev could not add {args.device}")
    testbed.load_ioctl(*args.ioctl)
    node = EventNode(testbed, args.evemu_events[0]) if args.evemu_events else None

    child = subprocess.Popen(program)
    try:
        if node:
            node.play(args.evemu_events[1], running=lambda: child.poll() is None)
    except PanelFailure as failure:
        print(f"umockdev_play.py: {' '.join(program)}: {failure}; killed", file=sys.stderr, flush=True)
        child.kill()
        child.wait()
        sys.exit(1)
    status = child.wait()
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
