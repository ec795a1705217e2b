"""What the compositor lab plays, and how it reads what each client got.

A `Scenario` is a panel's events (a bundled recording, or frames made here on the lab's panel,
Atmel units 800 x 480), the motiond settings it needs (a snippet added to the lab's
configuration, so that a case can try `cancel = "..."` and the like), and what the harness does
while it plays (`during`: a request at a time, such as `lock`). Each is played once to wev and
once to the page; `touches_of_wev` and `touches_of_page` make both sides the same shape:
touches in landing order, each with its positions in output pixels and how it ended.
"""
import math
import os

from session import panel_description
from labkit import DRAG, RECORDINGS, SCRATCH

TWO_FINGERS = os.path.join(RECORDINGS, "whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu")
ABS_X, ABS_Y, MT_SLOT, MT_MAJOR, MT_X, MT_Y, MT_TOOL, MT_ID, BTN_TOUCH = 0x00, 0x01, 0x2f, 0x30, 0x35, 0x36, 0x37, 0x39, 0x14a
FRAME = 0.010  # the lab's panel reports every 10 ms while a finger moves


class Scenario:
    def __init__(self, name, events, panel="lab", snippet="", during=None, final=None, device=""):
        self.name, self.events, self.panel, self.snippet, self.during = name, events, panel, snippet, during
        # Settings of the lab panel's own [[device]] table (its filters), as lines.
        self.device = device
        # Where the scenario's last touch lands (Atmel units), when it is not its only one.
        self.final = final
        # How long a client may take to show the last touch end once motiond lifted it: a
        # judged scenario's must end; a cancel case's may never (recorded as such).
        self.settle = 20 if final is None or name == "claimed touch" else 8


def finger(start, tracking_id, points, majors=None):
    """(time, events) frames of one finger (slot 0) along `points` (Atmel units), a frame
    every FRAME seconds from `start`, then lifted; `majors` are its contact sizes (0-255), a
    finger's (5 mm) unless given: a slot keeps its last size, a palm's too, until told."""
    majors = majors or [20] * len(points)
    frames = []
    for index, (x, y) in enumerate(points):
        events = [(3, MT_SLOT, 0)] if index == 0 else []
        if index == 0:
            events += [(3, MT_TOOL, 0), (3, MT_ID, tracking_id)]
        events += [(3, MT_X, x), (3, MT_Y, y), (3, ABS_X, x), (3, ABS_Y, y)]
        if index == 0 or majors[index] != majors[index - 1]:
            events.append((3, MT_MAJOR, majors[index]))
        if index == 0:
            events.append((1, BTN_TOUCH, 1))
        frames.append((start + index * FRAME, events))
    frames.append((start + len(points) * FRAME, [(3, MT_ID, -1), (1, BTN_TOUCH, 0)]))
    return frames


def held(start, tracking_id, at, seconds):
    """A finger resting at `at` for `seconds`, nudged a unit each 50 ms as a real one is."""
    frames = finger(start, tracking_id, [at])[:-1]
    steps = int(seconds / 0.05)
    for step in range(1, steps + 1):
        x = at[0] + step % 2
        frames.append((start + step * 0.05, [(3, MT_X, x), (3, ABS_X, x)]))
    frames.append((start + (steps + 1) * 0.05, [(3, MT_ID, -1), (1, BTN_TOUCH, 0)]))
    return frames


def tap(start, tracking_id, at):
    """A real tap: 80 ms, still."""
    return finger(start, tracking_id, [at] * 8)


def write_events(name, frames):
    """The lab panel's description and `frames` as one evemu file in SCRATCH."""
    path = os.path.join(SCRATCH, f"{name}.evemu")
    with open(panel_description()) as header, open(path, "w") as out:
        out.write(header.read())
        for at, events in frames:
            for kind, code, value in events + [(0, 0, 0)]:
                out.write(f"E: {at:.6f} {kind:04x} {code:04x} {value}\n")
    return path


def then_tap(frames, tracking_id, at=(500, 240)):
    """`frames`, then a real tap 0.5 s after their last."""
    return frames + tap(frames[-1][0] + 0.5, tracking_id, at)


def at_times(*steps):
    """A `during` that makes each (seconds after the play began, op, arguments) request once a
    play: a scenario is played once to each client, and a time earlier than the last begins
    another play (each request was made once for all plays before, and the page never saw
    the lock)."""
    done, last = set(), [0.0]

    def during(client, elapsed):
        if elapsed < last[0]:
            done.clear()
        last[0] = elapsed
        for index, (when, op, arguments) in enumerate(steps):
            if index not in done and elapsed >= when:
                done.add(index)
                client.request(op, **arguments)
    return during


def judged_scenarios():
    return [
        Scenario("drag", DRAG),
        Scenario("two fingers", TWO_FINGERS, panel="two"),
        # A tap on the claiming element (100, 100 px), then a real one elsewhere.
        Scenario("claimed touch", write_events("claimed", then_tap(tap(0, 41, (62, 60)), 42)), final=(500, 240)),
    ]


# Shorter than Chromium's own long press (its contextmenu came for a finger held 0.6 s, before
# any ending could reach it under emulation): the case judges the ending, not that race.
LONG_PRESS_TAKES = """
[[screen_gesture]]
name = "hold"
gesture = "long_press"
duration = 0.25
exclusive = true
"""


def cancel_scenarios():
    """The touches motiond cancels after they began, each followed 0.5 s later by a real tap:
    what each compositor makes of the cancel, and whether the tap still gets through."""
    path = [(300 + 6 * step, 240) for step in range(30)]
    palm = finger(0, 51, path, majors=[20] * 10 + [200] * 20)
    jump = finger(0, 53, [(150 + 4 * step, 240) for step in range(10)] + [(650 + 4 * step, 240) for step in range(10)])
    return [
        Scenario("palm", write_events("palm", then_tap(palm, 52)), final=(500, 240)),
        Scenario("jump", write_events("jump", then_tap(jump, 54)), final=(500, 240)),
        # A finger resting 1 s, found stuck after 0.25 s: a kiosk's `stuck_after` is 30 s, by
        # when every app has long since taken it for a long press; this judges the ending.
        Scenario("stuck finger", write_events("stuck", then_tap(held(0, 59, (300, 240), 1.0), 60)),
                 device="stuck_after = 0.25\n", final=(500, 240)),
        Scenario("screen gesture takes it", write_events("taken", then_tap(held(0, 55, (300, 240), 1.0), 56)),
                 snippet=LONG_PRESS_TAKES, final=(500, 240)),
        Scenario("lock", write_events("lock", then_tap(held(0, 57, (300, 240), 1.2), 58)),
                 during=at_times((0.15, "lock", {"for": 60}), (1.35, "unlock", {})), final=(500, 240)),
    ]


def rotation_scenario():
    """Two taps at known places (400, 150 and 1000, 600 px: off the claiming element), enough
    to tell which of the eight turns and flips maps them."""
    return Scenario("rotation", write_events("rotation", then_tap(tap(0, 61, (250, 90)), 62, (625, 360))))


# --- What the clients got, as touches -------------------------------------------------------

def touches_of_wev(events):
    """wev's wl_touch events as touches: {"id", "positions", "end" (up, cancel, None), "times"
    (each position's wl_touch time, ms), "ended" (the up's time; None for a cancel, which has
    none)}, and the events no wl_touch.frame closed (a frame ends a group of events that
    belong together: those after the last frame), up events apart: (touches, unframed events,
    unframed ups)."""
    touches, down, group = [], {}, []
    for event in events:
        kind = event["event"]
        if kind == "frame":
            group = []
            continue
        group.append(kind)
        if kind == "down":
            touch = {"id": event["id"], "positions": [(event["x"], event["y"])], "end": None,
                     "times": [event.get("time")], "ended": None}
            touches.append(touch)
            down[event["id"]] = touch
        elif kind == "motion" and event["id"] in down:
            down[event["id"]]["positions"].append((event["x"], event["y"]))
            down[event["id"]]["times"].append(event.get("time"))
        elif kind == "up" and event["id"] in down:
            touch = down.pop(event["id"])
            touch["end"], touch["ended"] = "up", event.get("time")
        elif kind == "cancel":
            for touch in down.values():
                touch["end"] = "cancel"
            down.clear()
    return touches, sum(kind != "up" for kind in group), group.count("up")


def touches_of_page(events):
    """The page's touch events as touches, the same shape as wev's, with "stale": how many of
    its moves were Chromium's echo of the last touch with its identifier, left out. Its
    "times" and "ended" are when the page's handler ran (`performance.now()`, ms, on the
    page's clock; `event.timeStamp` in a log without it): when the page itself got each.
    "stamps" and "ended_stamp" are the same events' `event.timeStamp`, on the same clock:
    Chromium's Wayland backend stamps a touch event with its wl_touch `time`, so these say
    when the compositor had each (libinput's stamp of motiond's write), not when Chromium did.

    Chromium's touch identifiers are the compositor's `wl_touch` ids, which libinput takes
    again for the next finger; under emulation Chromium then now and again sent a touchmove
    of the new touch at exactly where the last touch with that id ended, most often with a
    time (`event.timeStamp`) before the new touch's touchstart: a move of the old touch,
    dispatched late; once, a move of a touch's own, stamped before moves it had already sent.
    wev, given the same recordings, got every position from the compositor once and in order:
    these are Chromium's own, not positions motiond showed. On a slower host one came in the
    middle of a two-finger scroll, just after Chromium took the touches for its own scroll
    (pointercancel), at where the touch with that id two touches before ended. A move stamped
    before the latest event of its touch, or at exactly where an earlier touch with its id
    ended, is left out."""
    touches, down, ended_at = [], {}, {}
    for event in events:
        kind = event["type"]
        seen = event.get("now", event.get("t"))
        if kind == "touchstart":
            touch = {"id": event["id"], "positions": [(event["x"], event["y"])], "end": None, "stale": 0, "t": event.get("t", 0),
                     "times": [seen], "ended": None, "stamps": [event.get("t")], "ended_stamp": None}
            touches.append(touch)
            down[event["id"]] = touch
        elif kind in ("touchmove", "touchend", "touchcancel") and event["id"] in down:
            touch = down[event["id"]]
            position = (event["x"], event["y"])
            echo = event.get("t", touch["t"]) < touch["t"] or position in ended_at.get(event["id"], ())
            if kind == "touchmove" and echo and position != touch["positions"][-1]:
                touch["stale"] += 1
                continue
            touch["t"] = max(touch["t"], event.get("t", touch["t"]))
            if position != touch["positions"][-1]:
                touch["positions"].append(position)
                touch["times"].append(seen)
                touch["stamps"].append(event.get("t"))
            if kind != "touchmove":
                touch["end"], touch["ended"], touch["ended_stamp"] = "up" if kind == "touchend" else "cancel", seen, event.get("t")
                ended_at.setdefault(event["id"], set()).add(position)
                del down[event["id"]]
    return touches


def distance_to_segment(point, a, b):
    (px, py), (ax, ay), (bx, by) = point, a, b
    dx, dy = bx - ax, by - ay
    length = dx * dx + dy * dy
    t = 0 if length == 0 else max(0, min(1, ((px - ax) * dx + (py - ay) * dy) / length))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def track_problems(shown, published, tolerance=1.0):
    """Why a client's positions are not motiond's published track: its first and last within
    `tolerance` px of the track's, each one between on the track (a client may coalesce
    moves, and a busy client of motiond may have missed some published positions), in order."""
    def far(a, b):
        return max(abs(a[0] - b[0]), abs(a[1] - b[1])) > tolerance
    if far(shown[0], published[0]):
        return f"landed at {shown[0]}, motiond published {published[0]}"
    if far(shown[-1], published[-1]):
        return f"last at {shown[-1]}, motiond published {published[-1]}"
    if len(published) == 1:
        return next((f"{point} is away from where motiond published it, {published[0]}" for point in shown if far(point, published[0])), None)
    segment = 0
    for point in shown:
        while segment < len(published) - 1 and distance_to_segment(point, published[segment], published[segment + 1]) > tolerance:
            segment += 1
        if segment == len(published) - 1:
            return f"{point} is off motiond's track after {published[-1]} (or out of order)"
    return None
