"""What the virtual touchscreen's tests share: motiond's configuration with a virtual
touchscreen, and the apps' side read as a compositor reads it, with libinput
(`libinput debug-events --device NODE`) or a plain evdev reader.

motiond grabs the panel and shows the apps its fingers, as motiond sees them, on a uinput
touchscreen of its own.
"""
import fcntl
import os
import re
import signal
import struct
import subprocess
import time

from labkit import (REPOSITORY, SCRATCH, Player, check, settle_udev, start,
                    stop_process, wait_until)


VIRTUAL_OUTPUT = "HDMI-A-1"
VIRTUAL_NAME = f"motiond virtual touchscreen {VIRTUAL_OUTPUT}"
SCREEN_WIDTH, SCREEN_HEIGHT = 1920, 1080
# 4 units a pixel: 7,680 units across 480 mm, 16 a millimetre on both axes, so the millimetres
# libinput prints (two decimals) give every unit back exactly.
UNITS_PER_PIXEL = 4
UNITS_PER_MM = 16
VIRTUAL_CONFIG = f"""
[screen]
width = {SCREEN_WIDTH}
height = {SCREEN_HEIGHT}

[[device]]
name = "*"
virtual_touchscreen = "{VIRTUAL_OUTPUT}"

[[virtual_touchscreen]]
output = "{VIRTUAL_OUTPUT}"
size_mm = [{SCREEN_WIDTH * UNITS_PER_PIXEL // UNITS_PER_MM}, {SCREEN_HEIGHT * UNITS_PER_PIXEL // UNITS_PER_MM}]
cancel = "cancel"
"""
# The lab's tests see the kernel's own cancel (MT_TOOL_PALM, which libinput reports as
# TOUCH_CANCEL) through libinput: `cancel = "cancel"`. The default, a withdrawal (a slide and
# a lift no app takes for a tap), is the host's to judge (WithdrawnTouchTests) and the
# compositor lab's.
# Where libinput shows a finger, in screen pixels, against where motiond published it: the
# device's unit is a quarter pixel (a position is rounded down to one), and libinput prints
# millimetres to a hundredth (0.16 units here).
VIRTUAL_TOLERANCE = 0.3  # pixels

EVIOCGRAB = 0x40044590     # _IOW('E', 0x90, int)
EVIOCSCLOCKID = 0x400445a0  # _IOW('E', 0xa0, int)
INPUT_EVENT = Player.EVENT


def virtual_node(client):
    """The node of the virtual touchscreen, as health names it once motiond made it."""
    def made():
        entries = client.request("health").get("virtual_touchscreens", [])
        entry = next((entry for entry in entries if entry.get("output") == VIRTUAL_OUTPUT), None)
        check(entry is None or "error" not in entry, f"motiond did not make the virtual touchscreen: {entry}")
        return entry and entry.get("node")
    node = wait_until(f"the virtual touchscreen {VIRTUAL_OUTPUT} in health", made)
    # libinput takes only a node udev has tagged an input device.
    settle_udev()
    return node


def try_grab(node):
    """Whether EVIOCGRAB on `node` succeeds (released at once), or the errno it failed with."""
    descriptor = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
    try:
        fcntl.ioctl(descriptor, EVIOCGRAB, 1)
        fcntl.ioctl(descriptor, EVIOCGRAB, 0)
        return 0
    except OSError as error:
        return error.errno
    finally:
        os.close(descriptor)


class DebugEvents:
    """`libinput debug-events --device NODE`, as a compositor reads a touchscreen, its lines in
    a file; `touches` makes them touches: each libinput touch from TOUCH_DOWN to TOUCH_UP or
    TOUCH_CANCEL, its positions in screen pixels from the millimetres it printed."""

    LINE = re.compile(r"\s(TOUCH_DOWN|TOUCH_MOTION|TOUCH_UP|TOUCH_CANCEL)\s+\+?-?[\d.]+s\s+(\d+) \((\d+)\)"
                      r"(?:\s+-?[\d.]+/\s*-?[\d.]+ \(\s*(-?[\d.]+)/\s*(-?[\d.]+)mm\))?")

    def __init__(self, node, tracked=True):
        """`tracked`: ended with the test (a bench's reader outlives it, and the bench ends it)."""
        self.node = node
        self.path = os.path.join(SCRATCH, "debug-events.txt")
        self.since = 0
        with open(self.path, "w") as out:
            # Line-buffered, so that what it printed can be read while it runs.
            self.process = (start if tracked else subprocess.Popen)(
                ["stdbuf", "-oL", "-eL", "libinput", "debug-events", "--device", node], stdout=out, stderr=subprocess.STDOUT)
        wait_until(f"libinput debug-events to add {node}",
                   lambda: self.process.poll() is not None or "DEVICE_ADDED" in self.text())
        check(self.process.poll() is None, f"libinput debug-events --device {node} exited: {self.text()}")
        added = next(line for line in self.text().splitlines() if "DEVICE_ADDED" in line)
        check(VIRTUAL_NAME in added and "cap:t" in added, f"libinput does not take {node} for a touchscreen: {added}")
        self.added = added.strip()

    def text(self):
        """What it printed since the last `mark`."""
        with open(self.path, errors="replace") as source:
            source.seek(self.since)
            return source.read()

    def mark(self):
        """From here on, `text`, `touches` and the rest see only what it prints next: one
        reader follows the virtual touchscreen through many recordings, as a compositor does."""
        self.since = os.path.getsize(self.path)

    def touches(self):
        """Every touch in order of landing: {"slot", "positions", "end" (up, cancel or None)}."""
        touches, open_touches = [], {}
        for line in self.text().splitlines():
            match = self.LINE.search(line)
            if not match:
                continue
            kind, seat_slot = match.group(1), int(match.group(3))
            if kind == "TOUCH_DOWN":
                check(seat_slot not in open_touches, f"libinput: a second TOUCH_DOWN on seat slot {seat_slot}: {line}")
                touch = {"slot": seat_slot, "positions": [], "end": None}
                touches.append(touch)
                open_touches[seat_slot] = touch
            touch = open_touches.get(seat_slot)
            check(touch is not None, f"libinput: {kind} on seat slot {seat_slot}, which is not down: {line}")
            if kind in ("TOUCH_DOWN", "TOUCH_MOTION"):
                millimetres = float(match.group(4)), float(match.group(5))
                touch["positions"].append(tuple(round(value * UNITS_PER_MM) / UNITS_PER_PIXEL for value in millimetres))
            else:
                touch["end"] = "up" if kind == "TOUCH_UP" else "cancel"
                del open_touches[seat_slot]
        return touches

    def touch_lines(self):
        """What it printed of touches, frames left out: for a failure's message."""
        return "\n".join(line for line in self.text().splitlines() if "TOUCH_" in line and "TOUCH_FRAME" not in line)

    def fingers_down(self):
        return sum(1 for touch in self.touches() if touch["end"] is None)

    def multiple_touch_down(self):
        """libinput's complaints of a touch down in a slot already down (a release and a new
        tracking id in one frame), each dropping a touch: empty when there were none."""
        return [line.strip() for line in self.text().splitlines() if "multiple touch down" in line]

    def most_down(self):
        """The most touches libinput had down at once."""
        down = most = 0
        for line in self.text().splitlines():
            match = self.LINE.search(line)
            if match and match.group(1) == "TOUCH_DOWN":
                down += 1
                most = max(most, down)
            elif match and match.group(1) in ("TOUCH_UP", "TOUCH_CANCEL"):
                down -= 1
        return most

    def drops(self):
        """libinput's lines about events the kernel dropped for it, since the mark."""
        return [line for line in self.text().splitlines() if "SYN_DROPPED" in line or "dropped" in line.lower()]

    def stop(self):
        stop_process(self.process, signal.SIGINT)
        check(not self.drops(), f"the kernel dropped events for libinput: {self.drops()}")
        return self.text()


def contact_tracks(events):
    """screen.contacts as the client heard it: each contact's positions, by id, in landing order."""
    tracks = {}
    for event in events:
        if event.get("event") == "value" and event.get("stream") == "screen.contacts":
            for contact in event["value"]:
                track = tracks.setdefault(contact["id"], [])
                position = (contact["x"], contact["y"])
                if not track or track[-1] != position:
                    track.append(position)
    return tracks


def on_screen(position):
    """A published position as the virtual device can show it: held inside the screen."""
    last_x, last_y = (SCREEN_WIDTH * UNITS_PER_PIXEL - 1) / UNITS_PER_PIXEL, (SCREEN_HEIGHT * UNITS_PER_PIXEL - 1) / UNITS_PER_PIXEL
    return min(max(position[0], 0), last_x), min(max(position[1], 0), last_y)


def distance(a, b):
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


# Made for this test: a palm cancelled mid-touch, a palm never shown, a lift, and a finger
# still down at the unplug (its comments say when each happens).
VIRTUAL_CANCELS = os.path.join(REPOSITORY, "Tests", "KernelLab", "recordings", "virtual-cancels.evemu")
# Six fingers and the six ghosts an infrared panel reported with them, which the filters
# remove (Tests/Fixtures/phantoms/README.md): the apps see only the six.
VIRTUAL_GHOSTS = os.path.join(REPOSITORY, "Tests", "Fixtures", "phantoms", "ghosts.evemu")


def track_problems(shown, published):
    """Why a touch libinput showed is not the contact motiond published, or None: every
    published position is shown, in order, within the tolerance (a move of less than the
    device's unit shows nothing), every shown position is a published one, and the first and
    last are the contact's."""
    published = [on_screen(position) for position in published]
    index = 0
    for position in published:
        while index < len(shown) and distance(shown[index], position) > VIRTUAL_TOLERANCE:
            index += 1
        if index == len(shown):
            return f"published {position} is not shown in order; shown {shown[:6]}…, published {published[:6]}…"
    stray = [position for position in shown if all(distance(position, other) > VIRTUAL_TOLERANCE for other in published)]
    if stray:
        return f"shown at {stray[:4]}, where motiond published no position of the contact"
    if distance(shown[0], published[0]) > VIRTUAL_TOLERANCE or distance(shown[-1], published[-1]) > VIRTUAL_TOLERANCE:
        return f"shown from {shown[0]} to {shown[-1]}, published from {published[0]} to {published[-1]}"
    return None


def pair_touches(shown, tracks):
    """Each touch libinput showed with the contact motiond published for it: in landing order,
    the nearest first position among the next few (fingers landing in one frame may be told in
    either order)."""
    unpaired = list(tracks)
    pairs = []
    for touch in shown:
        candidates = unpaired[:10]
        check(candidates, f"libinput showed a touch at {touch['positions'][:1]} that motiond never published")
        best = min(candidates, key=lambda contact: distance(touch["positions"][0], on_screen(tracks[contact][0])))
        unpaired.remove(best)
        pairs.append((touch, best))
    return pairs, unpaired


def evemu_frames(frames, every=0.010):
    """evemu event lines for `frames` (each a list of (type, code, value)), `every` s apart."""
    lines = []
    for index, events in enumerate(frames):
        for kind, code, value in list(events) + [(0, 0, 0)]:
            lines.append(f"E: {index * every:.6f} {kind:04x} {code:04x} {value}\n")
    return lines


ABS_X, ABS_Y, MT_X, MT_Y, MT_TOOL, MT_ID, BTN_TOUCH = 0x00, 0x01, 0x35, 0x36, 0x37, 0x39, 0x14a


def one_touch(tracking_id, path, tool_at=None):
    """A finger of the Atmel panel (slot 0) along `path` (its units, 800 × 480), then lifted;
    from the `tool_at`th point on the panel calls it a palm (MT_TOOL_PALM)."""
    frames = []
    for index, (x, y) in enumerate(path):
        frame = [(3, MT_X, x), (3, MT_Y, y), (3, ABS_X, x), (3, ABS_Y, y)]
        if index == 0:
            frame = [(3, MT_ID, tracking_id), (3, MT_TOOL, 0)] + frame + [(1, BTN_TOUCH, 1)]
        if index == tool_at:
            frame = [(3, MT_TOOL, 2)] + frame
        frames.append(frame)
    frames.append([(3, MT_ID, -1), (1, BTN_TOUCH, 0)])
    return frames



MT_SLOT = 0x2f


class StampedEvents:
    """A plain reader of a node, its events stamped on CLOCK_MONOTONIC (the clock motiond's
    frames carry, `t`): `read` keeps what has arrived as (seconds, type, code, value)."""

    def __init__(self, node):
        self.descriptor = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
        fcntl.ioctl(self.descriptor, EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
        self.events, self.pending = [], b""

    def read(self):
        while True:
            try:
                self.pending += os.read(self.descriptor, INPUT_EVENT.size * 256)
            except BlockingIOError:
                break
        while len(self.pending) >= INPUT_EVENT.size:
            seconds, micros, kind, code, value = INPUT_EVENT.unpack(self.pending[:INPUT_EVENT.size])
            self.pending = self.pending[INPUT_EVENT.size:]
            check(not (kind == 0 and code == 3), "SYN_DROPPED on the virtual touchscreen for a plain reader")
            self.events.append((seconds + micros / 1e6, kind, code, value))

    def close(self):
        self.read()
        os.close(self.descriptor)
