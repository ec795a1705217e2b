#!/usr/bin/python3
"""Screen gestures on a live touchscreen, through the daemon and its socket.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 live_screen_gestures.py --motiond M --motionctl C --work DIR

motiond reads the made-up panel of fake_panel.py, with a card in the middle of the screen
(draggable) and two [[screen_gesture]] tables: "admin", two fingers held for a second,
exclusive; "back", a swipe in from the left edge. A client subscribes to screen.gesture,
screen.contacts and card.drag. Then, as a person would:
1. two fingers land on the card and stay still: the panel sends nothing more, so "admin"
   can only begin by the daemon's own timer; then they lift;
2. one finger lands 2 mm from the left edge and swipes in (frames stamped 10 ms apart).
Prints what it read as JSON lines (steps); exits 0 on success, else says why with
motiond's log. Started by ScreenGestureEndToEndTests.swift.
"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import LiveDaemon, Panel, PanelFailure, live_arguments  # noqa: E402

CONFIGURATION = """[screen]
width = 1920
height = 1080

[[device]]
name = "*"

[[element]]
id = "card"
center = [960, 540]
size = [1200, 800]

[element.draggable]

[[screen_gesture]]
name = "admin"
gesture = "long_press"
touches = 2
duration = 1.0
exclusive = true

[[screen_gesture]]
name = "back"
gesture = "edge_swipe"
edge = "left"
"""


class Failure(Exception):
    pass


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


def main():
    args = live_arguments()
    daemon = None
    try:
        panel = Panel(args.work, args.motionctl)
        daemon = LiveDaemon(args.motiond, args.motionctl, args.work, CONFIGURATION)
        daemon.wait_for_panel()
        path = daemon.path

        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(30)
        client.connect(path)
        lines = client.makefile("r")
        lines.readline()
        client.sendall(b'{"id": 1, "op": "subscribe", "streams": ["screen.gesture", "screen.contacts", "card.drag"]}\n')

        def until(predicate, what, deadline=30):
            seen = []
            end = time.monotonic() + deadline
            while time.monotonic() < end:
                message = json.loads(lines.readline() or "null")
                if message is None:
                    raise Failure("motiond closed the connection")
                seen.append(message)
                if predicate(message):
                    return message, seen
            raise Failure(f"no {what} within {deadline} s")

        def contacts(count):
            return lambda m: m.get("stream") == "screen.contacts" and len(m.get("value", [])) == count

        until(lambda m: m.get("id") == 1, "reply to subscribe")

        # 1. Two fingers on the card (the middle of the panel), held still.
        panel.frames([[(3, 0x2F, 0), (3, 0x39, 1), (3, 0x35, 15000), (3, 0x36, 16384),
                        (3, 0x2F, 1), (3, 0x39, 2), (3, 0x35, 18000), (3, 0x36, 16384), (1, 0x14A, 1)]])
        landed, _ = until(contacts(2), "two contacts")
        admin, seen = until(lambda m: m.get("stream") == "screen.gesture", "screen gesture while the fingers are held")
        step("admin", event=admin, landed=landed["t"], drag=[m for m in seen if m.get("stream") == "card.drag"])
        panel.frames([[(3, 0x2F, 0), (3, 0x39, -1), (3, 0x2F, 1), (3, 0x39, -1), (1, 0x14A, 0)]])
        ended, seen = until(lambda m: m.get("stream") == "screen.gesture", "the end of admin")
        step("admin_ended", event=ended, drag=[m for m in seen if m.get("stream") == "card.drag"])
        # The lift's screen.contacts comes before the end it caused (a frame's values, then its
        # gesture events), so it may be among the lines already read.
        if not any(contacts(0)(m) for m in seen):
            until(contacts(0), "no contacts")

        # 2. A finger 2 mm from the left edge swipes 40 mm in, frames 10 ms apart (300 mm/s).
        swipe = [[(3, 0x2F, 0), (3, 0x39, 3), (3, 0x35, 200), (3, 0x36, 16384), (1, 0x14A, 1)]]
        swipe += [[(3, 0x35, 200 + 300 * n)] for n in range(1, 14)]
        swipe += [[(3, 0x39, -1), (1, 0x14A, 0)]]
        panel.frames(swipe)
        back, _ = until(lambda m: m.get("stream") == "screen.gesture", "the edge swipe")
        step("back", event=back)
    except (Failure, PanelFailure, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as error:
        said = daemon.said() if daemon else "(not started)"
        print(f"live_screen_gestures: {type(error).__name__}: {error}\n--- motiond said:\n{said}", file=sys.stderr)
        sys.exit(1)
    finally:
        if daemon:
            daemon.stop()


if __name__ == "__main__":
    main()
