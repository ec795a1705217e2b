#!/usr/bin/python3
"""Writes the phantom-touch recordings beside this script: each fault the phantom filters
remove (man/motiond.toml.5.scd, "The phantom filters"), and its near miss, a real touch
that looks like it and must be kept; as evemu-record would have written them, on made-up
panels. With them, expected.json: what motiond's default filters must do with each.

    generate.py                      # rewrites *.evemu and expected.json here; deterministic (fixed seeds)
    generate.py --held-out SEED DIR  # the same kinds, drawn at random from SEED, into DIR (with DIR/expected.json)
    generate.py --check [DIR] [--motionctl PATH]
                                     # replays DIR's recordings (default: here) with motionctl
                                     # (frames --json, sweep --json) and checks expected.json; exit 1 on a miss

The held-out sets draw positions, periods, sizes, timings and counts within each fault's
definition (a period of 2 to 20 s, a burst of 2 to 6 contacts at any edge, a storm of 80 to
400 contacts a second, ghost pairs anywhere, pairs turning 90° to 180° at up to 1.2 m/s...):
recordings nothing was tuned on.

Panels:
- panel: protocol B, 345 × 194 mm at 10 units/mm (a resolution, so places are in mm),
  110 Hz give or take 0.2 ms, 16 slots, 0.05 mm of noise on a resting finger.
- slow: the same at 50 Hz, 10 slots. table: "motiond generated table panel", 1018 × 573 mm
  (a 46-inch table) at 10 units/mm, 60 Hz, 30 slots.
- infrared: "motiond generated infrared optical frame" (the name makes it an infrared frame),
  480 × 270 mm at 10 units/mm, 75 Hz, 10 slots.
Like the kernel, nothing is written for a value that did not change (a slot keeps its last
position after a lift, so a contact landing where the slot's last one was sends no
position), ABS_MT_SLOT only before another slot's values, and no frame at all when nothing
changed. One exception, on purpose: wake-burst.evemu has lifts (ABS_MT_TRACKING_ID -1) on
slots that never held a touch, as some firmware sends after a burst; the kernel drops them
(the slot's id is -1 already), so only a replay of the file sees them.

expected.json maps each file name to:
- counts: the phantom filters' counts after the whole file (dead_zone, phantom_taps,
  bursts, storms, storm_contacts, ghosts, flips), exact: the rules make each exact here.
- fingers: the real fingers that must be kept, each {id, lands, begins_by, lifts}: times in
  seconds from the file's first event, as `motionctl frames` gives them. A finger is kept
  when the filtered frames report the contact of that tracking id, its first report
  `began` in a frame at or after `lands` and at or before `begins_by` (later than `lands`
  only for a finger held back until it proved itself: a tap at a phantom's place when
  its tap is due, a contact landing with others at an edge, a finger near a ghost corner),
  then only `moved`/`stationary`, and last `ended` in the frame at `lifts`, where the
  recording lifts it: never cancelled, never lost.
- cancelled: the fingers reported and then cancelled by a filter, each {id, lands}: the
  storm's finger that was down when the storm began (every contact down is cancelled then);
  reported from `lands`, last reported `cancelled`.
- reported_phantoms: how many of the fault's own contacts are reported all the same (they
  cannot be known before): the first three taps of a phantom, the storm's contacts before
  the rule holds landings back (storm_rule). Each such contact must begin and end (or, down
  when the storm begins, be cancelled).
- contacts: how many tracking ids the filtered frames report in all: len(fingers) +
  len(cancelled) + reported_phantoms, nothing else.
- rotations (turning-pairs only): pairs of fingers turning around each other, each {ids,
  degrees, largest_step}: the line from the first finger to the second, in the filtered
  frames, must turn `degrees` in all (within 3°), never back by more than 1° between two
  frames, and never more than `largest_step` (the fingers' largest turn between two
  frames) plus 2°.
"""
import json
import math
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # Tests/Fixtures
import evemu_panel  # noqa: E402

START = 1.0  # the first event's time in each file

PANEL = dict(name="motiond generated phantom panel", width=345.0, height=194.0, units=10, rate=110.0, jitter=0.0002,
             slots=16, noise=0.05)
TABLE = dict(name="motiond generated table panel", width=1018.0, height=573.0, units=10, rate=60.0, jitter=0.0002,
             slots=30, noise=0.05)
SLOW = dict(name="motiond generated slow panel", width=345.0, height=194.0, units=10, rate=50.0, jitter=0.0002,
            slots=10, noise=0.05)
INFRARED = dict(name="motiond generated infrared optical frame", width=480.0, height=270.0, units=10, rate=75.0,
                jitter=0.0002, slots=10, noise=0.05)

ABS_X, ABS_Y, MT_SLOT, MT_X, MT_Y, MT_ID, BTN_TOUCH = 0x00, 0x01, 0x2f, 0x35, 0x36, 0x39, 0x14a

# The filters' constants (PhantomTouchSettings, RepeatingTaps): what the expectations follow from.
SHORTEST = 0.025         # the longest phantom touch (RepeatingTaps.longestTouch)
BURST_PROOF = 0.25       # a contact held back as a burst begins after this, if it stays
STORM_LIMIT, STORM_QUIET = 20, 0.5
COUNT_KEYS = ("dead_zone", "phantom_taps", "bursts", "storms", "storm_contacts", "ghosts", "flips")


def header(panel):
    units = panel["units"]
    return evemu_panel.description(
        "# generated by Tests/Fixtures/phantoms/generate.py for motiond's phantom-touch tests", panel["name"],
        int(panel["width"] * units), int(panel["height"] * units), units, slots=panel["slots"])


class Recording:
    """Frames written as the kernel passes them, and what became of each contact."""

    def __init__(self, panel, rnd):
        self.panel, self.rnd = panel, rnd
        self.lines = []
        self.values = {}       # (slot, code) or (None, code) -> the kernel's last value
        self.down = {}         # slot -> tracking id, for the contacts down
        self.order = []        # slots down, oldest first (the legacy pointer follows the oldest)
        self.current = 0       # the slot the kernel last passed values for
        self.last_time = None
        self.contacts = {}     # tracking id -> {"lands", "lifts"} in file time (from the first event)
        self.next_id = 1
        self.first = None      # the first event's time: `motionctl frames` counts from it
        self.timeline = []     # frames written: (file time, ids lifted, ids landed), for the storm rule

    @property
    def units(self):
        return self.panel["units"]

    @property
    def xmax(self):
        return int(self.panel["width"] * self.units)

    @property
    def ymax(self):
        return int(self.panel["height"] * self.units)

    @property
    def interval(self):
        return 1 / self.panel["rate"]

    def unit(self, mm, axis_max, noise=True):
        value = mm * self.units + (self.rnd.gauss(0, self.panel["noise"] * self.units) if noise else 0)
        return max(0, min(axis_max, round(value)))

    def ux(self, mm, noise=True):
        return self.unit(mm, self.xmax, noise)

    def uy(self, mm, noise=True):
        return self.unit(mm, self.ymax, noise)

    def new_id(self):
        self.next_id += 1
        return self.next_id - 1

    def frame(self, time, changes, stray_lifts=()):
        """One frame at `time` (seconds from the first event): `changes` maps a slot to
        (tracking id, x, y) in units, or to None for its lift; `stray_lifts` are slots
        given ABS_MT_TRACKING_ID -1 though nothing is down in them. Returns the frame's
        time as written."""
        time = round(START + time, 6)
        if self.last_time is not None and time <= self.last_time:
            time = round(self.last_time + 0.000001, 6)
        events = []

        def slot_event(slot, code, value, always=False):
            if not always and self.values.get((slot, code), -1 if code == MT_ID else 0) == value:
                return
            if slot != self.current:
                events.append((3, MT_SLOT, slot))
                self.current = slot
            events.append((3, code, value))
            self.values[(slot, code)] = value

        file_time = round(time - START, 6)
        lifted, landed = [], []
        for slot in sorted(set(changes) | set(stray_lifts)):
            if slot in stray_lifts:
                slot_event(slot, MT_ID, -1, always=True)
                continue
            change = changes[slot]
            if change is None:
                if slot in self.down:
                    slot_event(slot, MT_ID, -1)
                    lifted.append(self.down[slot])
                    self.contacts[self.down.pop(slot)]["lifts"] = file_time
                    self.order.remove(slot)
                continue
            tracking_id, x, y = change
            if self.down.get(slot) != tracking_id:
                if slot in self.down:
                    lifted.append(self.down[slot])
                    self.contacts[self.down[slot]]["lifts"] = file_time
                    self.order.remove(slot)
                landed.append(tracking_id)
                slot_event(slot, MT_ID, tracking_id)
                self.down[slot] = tracking_id
                self.order.append(slot)
                self.contacts[tracking_id] = {"lands": file_time, "lifts": None, "at": (x / self.units, y / self.units)}
            slot_event(slot, MT_X, x)
            slot_event(slot, MT_Y, y)

        def plain(code, value):
            if self.values.get((None, code), 0) != value:
                events.append((1 if code == BTN_TOUCH else 3, code, value))
                self.values[(None, code)] = value

        plain(BTN_TOUCH, 1 if self.down else 0)
        if self.order:
            oldest = self.order[0]
            plain(ABS_X, self.values[(oldest, MT_X)] if (oldest, MT_X) in self.values else 0)
            plain(ABS_Y, self.values[(oldest, MT_Y)] if (oldest, MT_Y) in self.values else 0)
        if events:
            if self.first is None:
                self.first = file_time
            for kind, code, value in events + [(0, 0, 0)]:
                self.lines.append(f"E: {time:.6f} {kind:04x} {code:04x} {value}")
            self.last_time = time
            self.timeline.append((file_time, lifted, landed))
        return file_time

    def tick(self):
        return self.interval + self.rnd.uniform(-self.panel["jitter"], self.panel["jitter"])

    def text(self):
        return header(self.panel) + "\n".join(self.lines) + "\n"


def expectation(rec, counts, fingers=(), begins_late=None, cancelled=(), reported_phantoms=0):
    """expected.json's entry: `fingers` are tracking ids, `begins_late` maps some of them
    to how long after landing they may begin."""
    begins_late = begins_late or {}

    def when(tracking_id, key):  # from the first event, as `motionctl frames` counts
        return round(rec.contacts[tracking_id][key] - rec.first, 6)

    kept = [{"id": tracking_id, "lands": when(tracking_id, "lands"), "lifts": when(tracking_id, "lifts"),
             "begins_by": round(when(tracking_id, "lands") + begins_late.get(tracking_id, 0), 6)} for tracking_id in fingers]
    full = {key: 0 for key in COUNT_KEYS}
    full.update(counts)
    return {"counts": full, "fingers": kept,
            "cancelled": [{"id": tracking_id, "lands": when(tracking_id, "lands")} for tracking_id in cancelled],
            "reported_phantoms": reported_phantoms, "contacts": len(kept) + len(cancelled) + reported_phantoms}


# --- The faults and their near misses ----------------------------------------------------------

def tap(rec, time, slot, x_mm, y_mm, duration, tracking_id=None, noise=True):
    """A finger's tap: lands at `time`, rests (noise) for `duration`, lifts. Returns its id."""
    tracking_id = tracking_id or rec.new_id()
    t = time
    rec.frame(t, {slot: (tracking_id, rec.ux(x_mm, noise), rec.uy(y_mm, noise))})
    while True:
        t += rec.tick()
        if t >= time + duration:
            break
        rec.frame(t, {slot: (tracking_id, rec.ux(x_mm, noise), rec.uy(y_mm, noise))})
    rec.frame(t, {slot: None})
    return tracking_id


def phantom_taps(rec, first, period, place, count):
    """A touch of one frame at one place (the same units every time) every `period` s."""
    ids = []
    x, y = rec.ux(place[0], False), rec.uy(place[1], False)
    for n in range(count):
        t = first + n * period
        tracking_id = rec.new_id()
        rec.frame(t, {0: (tracking_id, x, y)})
        rec.frame(t + rec.tick(), {0: None})
        ids.append(tracking_id)
    return ids


def phantom_tap(rnd, period=12.864, count=6, place=(240.0, 60.0)):
    """A panel tapping by itself: the first three taps are reported, the rest never begin."""
    rec = Recording(PANEL, rnd)
    phantom_taps(rec, 0.0, period, place, count)
    return rec, expectation(rec, {"phantom_taps": count - 3}, reported_phantoms=3)


def tolerance(period):
    return max(0.05, 0.02 * period)


def phantom_tap_double_tap(rnd, period=12.864, place=(240.0, 60.0), offset=(0.2, -0.2), between=5.0, late=0.0):
    """The phantom of phantom-tap (four taps: three reported, one suppressed); then, when its
    fifth tap is due (give or take `late`), a real double tap at its place (two ~90 ms taps
    150 ms apart, which the filter holds until each outlasts a phantom's touch); a real tap
    there `between` s later; and the phantom's sixth tap, suppressed."""
    rec = Recording(PANEL, rnd)
    phantom_taps(rec, 0.0, period, place, 4)
    due = 4 * period + late
    x, y = place[0] + offset[0], place[1] + offset[1]
    hold = SHORTEST + 2 * rec.interval + 0.001
    first = tap(rec, due, 1, x, y, 0.09)
    second = tap(rec, due + 0.15, 2, x - offset[0], y - offset[1], 0.085)
    third = tap(rec, due + between, 1, x, y, 0.09)
    phantom_taps(rec, 5 * period, period, place, 1)
    return rec, expectation(rec, {"phantom_taps": 2}, fingers=[first, second, third],
                            begins_late={first: hold, second: hold}, reported_phantoms=3)


def edge_point(rec, rnd, edge, along_mm):
    """A point (units) at `edge` ("left", "right", "top", "bottom", "origin"), `along_mm` along it."""
    if edge == "origin":
        return 0, 0
    if edge == "left":
        return 0, rec.uy(along_mm, False)
    if edge == "right":
        return rec.xmax, rec.uy(along_mm, False)
    if edge == "top":
        return rec.ux(along_mm, False), 0
    return rec.ux(along_mm, False), rec.ymax


def burst(rec, rnd, time, points, frames, stray=()):
    """Contacts landing in one frame at `points` (units), each lifting after its number of
    `frames`; `stray` slots get a lift with nothing down after the last one."""
    ids = []
    landing = {}
    for slot, point in enumerate(points):
        tracking_id = rec.new_id()
        ids.append(tracking_id)
        landing[slot] = (tracking_id, *point)
    t = time
    rec.frame(t, landing)
    for n in range(1, max(frames) + 1):
        t += rec.tick()
        lifts = {slot: None for slot in range(len(points)) if frames[slot] == n}
        rec.frame(t, lifts, stray_lifts=stray if n == max(frames) else ())
    return ids


def wake_burst(rnd):
    """Bursts: four contacts landing in one frame as the panel is opened (idle since), one at
    the origin and three elsewhere; three on the bottom edge; five at the origin; two at the
    left and right edges. Each lifts within one to three frames; after the last, lifts on
    slots that never held a touch."""
    rec = Recording(PANEL, rnd)
    total = 0
    plans = [
        (0.0, [(0, 0), (rec.ux(100, False), rec.uy(80, False)), (rec.ux(200, False), rec.uy(40, False)), (rec.ux(300, False), rec.uy(150, False))], [1, 2, 2, 3], ()),
        (2.0, [edge_point(rec, rnd, "bottom", 50), edge_point(rec, rnd, "bottom", 170), edge_point(rec, rnd, "bottom", 290)], [1, 1, 2], ()),
        (4.0, [(0, 0)] * 5, [1, 1, 2, 2, 3], ()),
        (6.0, [edge_point(rec, rnd, "left", 97), edge_point(rec, rnd, "right", 97)], [2, 2], (7, 8, 9)),
    ]
    for time, points, frames, stray in plans:
        burst(rec, rnd, time, points, frames, stray)
        total += len(points)
    return rec, expectation(rec, {"bursts": total})


def swipe(rec, rnd, time, slot, start, velocity, duration):
    """One finger landing at `start` (units) and moving at `velocity` (mm/s, a vector) for `duration`."""
    tracking_id = rec.new_id()
    t = 0.0
    while t < duration:
        x = start[0] + velocity[0] * t * rec.units + rnd.gauss(0, rec.panel["noise"] * rec.units)
        y = start[1] + velocity[1] * t * rec.units + rnd.gauss(0, rec.panel["noise"] * rec.units)
        if t == 0:
            x, y = start
        rec.frame(time + t, {slot: (tracking_id, max(0, min(rec.xmax, round(x))), max(0, min(rec.ymax, round(y))))})
        t += rec.tick()
    rec.frame(time + t, {slot: None})
    return tracking_id


def edge_swipe(rnd):
    """Fast real swipes in from the very edge, one finger each, at 1 m/s: from the left edge
    (x at the axis's minimum), from the right edge, and down from the top."""
    rec = Recording(PANEL, rnd)
    fingers = [
        swipe(rec, rnd, 0.0, 0, (0, rec.uy(97, False)), (1000, 0), 0.15),
        swipe(rec, rnd, 1.0, 0, (rec.xmax, rec.uy(60, False)), (-1000, 0), 0.15),
        swipe(rec, rnd, 2.0, 0, (rec.ux(170, False), 0), (0, 1000), 0.12),
    ]
    return rec, expectation(rec, {}, fingers=fingers)


def storm(rnd, finger=(172.0, 97.0), begins=1.0, rate=200, duration=2.0, after=7.0, frames=(1, 3), late_finger=None):
    """A finger down at `finger` from the start; `begins` s later a sensor floods `rate` new
    contacts a second for `duration` s at random places (each down for `frames` frames, one
    to three); a real finger `after` s after the flood stopped, a short drag; with
    `late_finger` (s before the flood stops), a finger landing then and resting 0.9 s. What
    the storm rule makes of them (storm_rule): the finger down when the storm begins is
    cancelled, the flood's contacts before the rule holds landings back are reported, the
    rest never begin; the late finger begins once the quiet is over."""
    rec = Recording(PANEL, rnd)
    slots_free = list(range(2, rec.panel["slots"]))
    held = rec.new_id()
    rec.frame(0.0, {0: (held, rec.ux(finger[0], False), rec.uy(finger[1], False))})
    t = begins
    owed = 0.0
    down = {}  # slot -> frames left
    storm_ids = []
    late = None
    while t < begins + duration:
        changes = {}
        for slot in list(down):
            down[slot] -= 1
            if down[slot] == 0:
                changes[slot] = None
                del down[slot]
                slots_free.append(slot)
        owed += rate * rec.interval
        while owed >= 1 and slots_free:
            owed -= 1
            slot = slots_free.pop(0)
            tracking_id = rec.new_id()
            storm_ids.append(tracking_id)
            changes[slot] = (tracking_id, rec.ux(rnd.uniform(10, rec.panel["width"] - 10), False), rec.uy(rnd.uniform(10, rec.panel["height"] - 10), False))
            down[slot] = rnd.randint(*frames)
        if late_finger is not None and late is None and t >= begins + duration - late_finger:
            late = rec.new_id()
            late_lifts = t + 0.9
        if late is not None and t < late_lifts:
            changes[1] = (late, rec.ux(80), rec.uy(150))
        rec.frame(t, changes)
        t += rec.tick()
    while down or (late is not None and t < late_lifts + rec.interval):
        changes = {}
        for slot in list(down):
            down[slot] -= 1
            if down[slot] == 0:
                changes[slot] = None
                del down[slot]
        if late is not None:
            changes[1] = (late, rec.ux(80), rec.uy(150)) if t < late_lifts else None
        rec.frame(t, changes)
        t += rec.tick()
    rec.frame(t, {0: None})  # the finger down through the storm lifts, long after it was cancelled
    real = swipe(rec, rnd, begins + duration + after, 1, (rec.ux(120, False), rec.uy(120, False)), (150, -50), 0.3)
    rule = storm_rule(rec)
    fingers = ([late] if late else []) + [real]
    assert all(i not in rule["cancelled"] and i not in rule["lost"] for i in fingers), rule
    assert held in rule["cancelled"], rule
    reported = [i for i in storm_ids if i in rule["reported"]]
    return rec, expectation(rec, rule["counts"], fingers=fingers, begins_late=rule["late"], cancelled=[held],
                            reported_phantoms=len(reported))


# The storm rule's constants (TouchStorm, PhantomTouchSettings).
FLOOD_TOUCH, HELD_AFTER, RECENT, RUSH_LANDINGS, RUSH, APART, PLACES_KEPT = 0.07, 3, 0.25, 8, 0.05, 10.0, 4


def storm_rule(rec):
    """The storm rule (TouchStorm) on the recording's frames: a contact that lifts within
    FLOOD_TOUCH of landing, never begun late, more than APART mm from where the latest
    PLACES_KEPT such contacts landed, is a flood's; HELD_AFTER of them within RECENT
    s (or one, with RUSH_LANDINGS landings within RUSH s) hold back every contact that lands
    until it lasts FLOOD_TOUCH; more than STORM_LIMIT within a second begin a storm, which
    cancels every contact reported and still down, and holds back every landing until
    STORM_QUIET s pass without a flood contact (then FLOOD_TOUCH more). Counts storm_contacts
    as the contacts cancelled and those held back that lifted. Returns {"counts", "reported"
    (ids reported), "cancelled", "lost" (held back, lifted unseen), "late" (id -> how long
    after landing it began, for those held back and begun)}."""
    landings, floods, places = [], [], []
    began, last_flood = None, -math.inf
    storms = contacts = 0
    state = {}  # id -> ["live" | "held" | "ignored", since]
    result = {"reported": set(), "cancelled": set(), "lost": set(), "late": {}}
    begun_late = set()

    def quiet(t):
        return began is not None and t < last_flood + STORM_QUIET

    def deadline(since):
        end = last_flood + STORM_QUIET if began is not None else -math.inf
        return max(since, end) + FLOOD_TOUCH

    def window(times, t):
        return [w for w in times if t - w <= 1] + [t]

    for t, lifted, landed in rec.timeline:
        for i, (st, since) in list(state.items()):
            if st == "held" and deadline(since) < t:  # the replay begins it between frames
                when = deadline(since)
                state[i] = ["live", since]
                result["reported"].add(i)
                begun_late.add(i)
                result["late"][i] = round(when - rec.contacts[i]["lands"] + 0.001, 6)
        for i in lifted:
            if t - rec.contacts[i]["lands"] > FLOOD_TOUCH or i in begun_late:
                continue
            at = rec.contacts[i]["at"]
            near = any(math.dist(at, place) <= APART for place in places)
            places = (places + [at])[-PLACES_KEPT:]
            if near:
                continue
            was_quiet = quiet(t)
            if not was_quiet:
                began = None
            floods = window(floods, t)
            last_flood = t
            if not was_quiet and len(floods) > STORM_LIMIT:
                began = t
                storms += 1
                for j, entry in state.items():
                    if entry[0] == "live":
                        entry[0] = "ignored"
                        contacts += 1
                        result["cancelled"].add(j)
                    elif entry[0] == "held":
                        entry[1] = t
        for i in landed:
            landings = window(landings, t)
        for i in landed:
            recent = sum(1 for f in floods if f >= t - RECENT)
            holds = quiet(t) or recent >= HELD_AFTER or (recent >= 1 and sum(1 for w in landings if w >= t - RUSH) >= RUSH_LANDINGS)
            state[i] = ["held", t] if holds else ["live", t]
            if not holds:
                result["reported"].add(i)
        for i in lifted:
            st, _ = state.pop(i)
            if st == "held":
                contacts += 1
                result["lost"].add(i)
    result["counts"] = {"storms": storms, "storm_contacts": contacts}
    return result


def fast_fingers(rnd, fingers=10, rate=4.0, duration=2.0):
    """Ten fingers tapping as fast as fingers do, each `rate` times a second for `duration`
    s (40 new contacts a second in all), each tap 70–100 ms, at ten
    places 25 mm apart, their phases spread so that they do not land together."""
    rec = Recording(PANEL, rnd)
    taps = []
    for finger in range(fingers):
        x, y = 50 + (finger % 5) * 55, 60 + (finger // 5) * 70
        phase = finger / fingers / rate
        n = 0
        while phase + n / rate < duration:
            taps.append((phase + n / rate + rnd.uniform(-0.01, 0.01), finger, x, y, rnd.uniform(0.07, 0.1)))
            n += 1
    ids = play_taps(rec, taps)
    return rec, expectation(rec, {}, fingers=ids)


def play_taps(rec, taps):
    """Taps (time, slot, x mm, y mm, length) written frame by frame in time order, each in
    its slot, landing in the first frame at or after its time and lifting `length` after
    that frame; returns their ids, in time order."""
    events = []
    for time, slot, x, y, length in taps:  # ids in the order given
        events.append((time, slot, rec.new_id(), x, y, time + length))
    t = 0.0
    pending = sorted(events)
    down = {}
    ids = [event[2] for event in pending]
    while pending or down:
        changes = {}
        for slot, (tracking_id, x, y, lift) in list(down.items()):
            if t >= lift:
                changes[slot] = None
                del down[slot]
            else:
                changes[slot] = (tracking_id, rec.ux(x), rec.uy(y))
        while pending and pending[0][0] <= t:
            time, slot, tracking_id, x, y, lift = pending.pop(0)
            assert slot not in down, "a slot's taps overlap"
            changes[slot] = (tracking_id, rec.ux(x), rec.uy(y))
            down[slot] = (tracking_id, x, y, t + (lift - time))  # its length from the frame it lands in
        rec.frame(t, changes)
        t += rec.tick()
    return ids


def busy_table(rnd, hands=10, rate=6.0, duration=6.0, fingers=3):
    """A museum table: `hands` hands around a 46-inch table, each tapping `rate` times a
    second (0.5 to 1.5 times the mean interval apart), with three fingers in turn, at four
    places near it (a button, a picture), 3 mm of scatter; taps of 80–200 ms. 60 new
    contacts a second at the defaults: every tap kept, no storm, none held back."""
    rec = Recording(TABLE, rnd)
    taps = []
    for hand in range(hands):
        home = (rnd.uniform(100, TABLE["width"] - 100), rnd.uniform(100, TABLE["height"] - 100))
        places = [(home[0] + rnd.uniform(-60, 60), home[1] + rnd.uniform(-60, 60)) for _ in range(4)]
        free = [0.0] * fingers  # when each finger's slot has lifted
        t = rnd.uniform(0, 1 / rate)
        while t < duration:
            finger = min(range(fingers), key=lambda k: free[k])
            length = rnd.uniform(0.08, 0.2)
            if free[finger] + 0.04 <= t:
                x, y = rnd.choice(places)
                taps.append((t, hand * fingers + finger, x + rnd.gauss(0, 3), y + rnd.gauss(0, 3), length))
                free[finger] = t + length
            t += rnd.uniform(0.5, 1.5) / rate
    ids = play_taps(rec, taps)
    rule = storm_rule(rec)
    assert rule["counts"]["storms"] == 0 and not rule["lost"], rule["counts"]
    return rec, expectation(rec, {}, fingers=ids, begins_late=rule["late"])


def metronome(rnd, panel=SLOW, period=1.5, lengths=(0.025, 0.039), count=12, place=(170.0, 90.0), scatter=0.8, jitter=0.03):
    """A person tapping one place in a steady rhythm: `count` taps `period` s apart (give or
    take `jitter`), each held `lengths` (a range: on the 50 Hz panel, down 40 ms from landing
    to lift), `scatter` mm apart (a standard deviation per axis): short, near-metronomic
    real taps, all kept."""
    rec = Recording(panel, rnd)
    ids = []
    for n in range(count):
        t = n * period + rnd.uniform(-jitter, jitter)
        x, y = place[0] + rnd.gauss(0, scatter), place[1] + rnd.gauss(0, scatter)
        ids.append(tap(rec, t, 0, x, y, rnd.uniform(*lengths)))
    return rec, expectation(rec, {}, fingers=ids)


def edge_two_finger_tap(rnd, edges=((0.8, 97.0), (200.0, 193.5)), other=((40.0, 90.0), (230.0, 150.0)), length=0.12):
    """Two-finger taps landing in one frame, one finger within 1 mm of an edge and the other
    inside, each after the panel was idle more than a minute (the first as it is opened):
    a hand, not a burst; every finger kept."""
    rec = Recording(PANEL, rnd)
    ids, t = [], 0.0
    for edge, inside in zip(edges, other):
        a, b = rec.new_id(), rec.new_id()
        start = t
        while t < start + length:
            rec.frame(t, {0: (a, rec.ux(edge[0], False), rec.uy(edge[1], False)), 1: (b, rec.ux(inside[0]), rec.uy(inside[1]))})
            t += rec.tick()
        rec.frame(t, {0: None, 1: None})
        ids += [a, b]
        t += 65.0
    return rec, expectation(rec, {}, fingers=ids)


def ghost_drag(rec, rnd, time, a, b, velocity_a, velocity_b, ghosts_after, ghost_frames, lift_together):
    """Two fingers land at `a` and `b` (mm) one frame apart and drag; `ghosts_after` frames
    later ghosts land at the other two corners and follow them for `ghost_frames` frames;
    they lift a frame before the fingers or (`lift_together`) with them. Returns the ids."""
    ia, ib = rec.new_id(), rec.new_id()
    g1, g2 = rec.new_id(), rec.new_id()
    t = time
    total = ghosts_after + ghost_frames + 3
    for n in range(total):
        s = n * rec.interval
        pa = (a[0] + velocity_a[0] * s, a[1] + velocity_a[1] * s)
        pb = (b[0] + velocity_b[0] * s, b[1] + velocity_b[1] * s)
        ua, ub = (rec.ux(pa[0]), rec.uy(pa[1])), (rec.ux(pb[0]), rec.uy(pb[1]))
        changes = {0: (ia, *ua)}
        if n >= 1:
            changes[1] = (ib, *ub)
        ghosts_on = ghosts_after <= n < ghosts_after + ghost_frames
        last = ghosts_after + ghost_frames
        if ghosts_on:
            changes[2] = (g1, ua[0], ub[1])
            changes[3] = (g2, ub[0], ua[1])
        elif n == last:
            changes[2] = changes[3] = None
        if n == total - 1 or (lift_together and n == last):
            changes[0] = changes[1] = None
            if lift_together:
                rec.frame(t, {**changes, 2: None, 3: None})
                return ia, ib, t
        rec.frame(t, changes)
        t += rec.tick()
    return ia, ib, t


def ghosts(rnd, pairs=None):
    """On the infrared frame: two fingers down and dragging, and ghosts landing at the other
    two corners of their rectangle and following them; the ghosts lift a frame before the
    fingers, or with them. Three times."""
    rec = Recording(INFRARED, rnd)
    pairs = pairs or [((100, 60), (300, 200), (80, 20), (-60, 40), 4, 20, False),
                      ((350, 50), (120, 220), (-50, 0), (50, -30), 3, 15, True),
                      ((60, 200), (420, 80), (0, -40), (0, 40), 6, 10, False)]
    fingers, t = [], 0.0
    for a, b, va, vb, after, frames, together in pairs:
        ia, ib, t = ghost_drag(rec, rnd, t, a, b, va, vb, after, frames, together)
        fingers += [ia, ib]
        t += 1.0
    return rec, expectation(rec, {"ghosts": 2 * len(pairs)}, fingers=fingers)


def rectangle_drag(rec, rnd, time, corners, velocity, frames):
    """Fingers landing together at `corners` (mm), dragging together, lifting together."""
    ids = [rec.new_id() for _ in corners]
    t = time
    for n in range(frames):
        s = n * rec.interval
        rec.frame(t, {slot: (ids[slot], rec.ux(x + velocity[0] * s), rec.uy(y + velocity[1] * s)) for slot, (x, y) in enumerate(corners)})
        t += rec.tick()
    rec.frame(t, {slot: None for slot in range(len(corners))})
    return ids, t


def four_finger_rectangle(rnd, rectangle=((120, 80), (320, 190)), velocity=(60, -30)):
    """On the infrared frame: four fingers landing together on a rectangle's corners and
    dragging together."""
    rec = Recording(INFRARED, rnd)
    (x0, y0), (x1, y1) = rectangle
    ids, _ = rectangle_drag(rec, rnd, 0.0, [(x0, y0), (x1, y1), (x0, y1), (x1, y0)], velocity, 40)
    return rec, expectation(rec, {}, fingers=ids)


def third_finger(rnd, a=(150, 70), b=(330, 200), away=10.0):
    """On the infrared frame: two fingers down (still, then dragging a little) and a third
    landing `away` mm from a ghost corner, resting and lifting before them: a finger."""
    rec = Recording(INFRARED, rnd)
    ia, ib, ic = rec.new_id(), rec.new_id(), rec.new_id()
    corner = (a[0], b[1])
    angle = rnd.uniform(0, 2 * math.pi)
    c = (corner[0] + away * math.cos(angle), corner[1] + away * math.sin(angle))
    t = 0.0
    frames = 50
    for n in range(frames + 1):
        changes = {0: (ia, rec.ux(a[0] + n * 0.3), rec.uy(a[1]))}
        if n >= 1:
            changes[1] = (ib, rec.ux(b[0]), rec.uy(b[1] - n * 0.2))
        if 5 <= n < 35:
            changes[2] = (ic, rec.ux(c[0]), rec.uy(c[1]))
        elif n == 35:
            changes[2] = None
        if n == frames:
            changes[0] = changes[1] = None
        rec.frame(t, changes)
        t += rec.tick()
    return rec, expectation(rec, {}, fingers=[ia, ib, ic])


def flips(rnd, a=(100, 60), b=(300, 200), va=(60, 30), vb=(-40, -20), flips_at=((10, 1), (25, 2), (45, 1)), frames=60):
    """On the infrared frame: two fingers dragging, the frame reporting them at their ghost
    corners (each keeping its x and taking the other's y) for one or two frames, a few times;
    not where they are within 10 mm of each other on an axis (crossing: a flip there is no
    different from the frame as it is)."""
    rec = Recording(INFRARED, rnd)
    ia, ib = rec.new_id(), rec.new_id()
    flipped = set()
    for start, length in flips_at:
        flipped |= set(range(start, start + length))
    t, count = 0.0, 0
    for n in range(frames):
        s = n * rec.interval
        ua = (rec.ux(a[0] + va[0] * s), rec.uy(a[1] + va[1] * s))
        ub = (rec.ux(b[0] + vb[0] * s), rec.uy(b[1] + vb[1] * s))
        if n in flipped and min(abs(ua[0] - ub[0]), abs(ua[1] - ub[1])) > 10 * rec.units:
            ua, ub = (ua[0], ub[1]), (ub[0], ua[1])
            count += 1
        rec.frame(t, {0: (ia, *ua), 1: (ib, *ub)})
        t += rec.tick()
    rec.frame(t, {0: None, 1: None})
    return rec, expectation(rec, {"flips": count}, fingers=[ia, ib])


def turn(rec, time, centre, radius, start, degrees, seconds):
    """Two fingers at the ends of a diameter of `radius` mm around `centre`, landing together
    at `start` degrees and turning through `degrees` (negative: the other way) in `seconds`,
    then lifting. Returns their ids, the end's time, and the largest turn between two frames
    (degrees)."""
    ia, ib = rec.new_id(), rec.new_id()
    t, largest, last = time, 0.0, None
    while True:
        progress = min(1.0, (t - time) / seconds)
        angle = start + degrees * progress
        if last is not None:
            largest = max(largest, abs(angle - last))
        last = angle
        rad = math.radians(angle)
        dx, dy = radius * math.cos(rad), radius * math.sin(rad)
        rec.frame(t, {0: (ia, rec.ux(centre[0] + dx), rec.uy(centre[1] + dy)), 1: (ib, rec.ux(centre[0] - dx), rec.uy(centre[1] - dy))})
        if progress >= 1.0:
            break
        t += rec.tick()
    t += rec.tick()
    rec.frame(t, {0: None, 1: None})
    return ia, ib, t, largest


def turning_pairs(rnd, turns=None):
    """On the infrared frame: two fingers turning around each other through 116°, crossing
    on x (one above the other at 90°) and on y (side by side at 0°), each way, slowly (1.2 s)
    and fast (0.2 s: 5 mm a frame). Each turn is kept, uncut, and turns as far as the fingers."""
    rec = Recording(INFRARED, rnd)
    turns = turns or [((240, 135), 40, start, degrees, seconds)
                      for start, degrees in ((32, 116), (148, -116), (-58, 116), (58, -116)) for seconds in (1.2, 0.2)]
    fingers, rotations, t = [], [], 0.0
    for centre, radius, start, degrees, seconds in turns:
        ia, ib, t, largest = turn(rec, t, centre, radius, start, degrees, seconds)
        fingers += [ia, ib]
        rotations.append({"ids": [ia, ib], "degrees": degrees, "largest_step": round(largest, 3)})
        t += 0.5
    expect = expectation(rec, {}, fingers=fingers)
    expect["rotations"] = rotations
    return rec, expect


def resting(rec, time, until, fingers):
    """Fingers resting from their landing to their lift: `fingers` is [(slot, id, lands,
    lifts, (x, y) mm)]; a frame every tick from `time` to `until`, each finger landing and
    lifting in the first frame at or after its times."""
    t, down = time, set()
    while t <= until + 1e-9:
        changes = {}
        for slot, tracking_id, lands, lifts, (x, y) in fingers:
            if tracking_id in down and t >= lifts:
                changes[slot] = None
                down.discard(tracking_id)
            elif tracking_id in down or (lands <= t < lifts and tracking_id not in rec.contacts):
                changes[slot] = (tracking_id, rec.ux(x), rec.uy(y))
                down.add(tracking_id)
        rec.frame(t, changes)
        t += rec.tick()
    return t


GHOST_PROOF = 0.06  # a contact at a still ghost corner is a finger after this (PhantomTouchSettings.ghostProof)


def corner_fingers(rnd, a=(150, 70), b=(330, 200), second=0.013, more=()):
    """On the infrared frame: two fingers resting at `a` and `b` (the second landing
    `second` s after the first), and `more` fingers, each (lands, lifts, where: "ab" for the
    corner (a.x, b.y), "ba" for (b.x, a.y), offset mm): real fingers at the pair's ghost
    corners, each begun within GHOST_PROOF of landing."""
    rec = Recording(INFRARED, rnd)
    fingers = [(0, rec.new_id(), 0.0, 0.95, a), (1, rec.new_id(), second, 0.95, b)]
    for slot, (lands, lifts, where, offset) in enumerate(more, start=2):
        corner = (a[0], b[1]) if where == "ab" else (b[0], a[1])
        fingers.append((slot, rec.new_id(), lands, lifts, (corner[0] + offset[0], corner[1] + offset[1])))
    resting(rec, 0.0, 1.0, fingers)
    ids = [tracking_id for _, tracking_id, _, _, _ in fingers]
    return rec, expectation(rec, {}, fingers=ids, begins_late={i: GHOST_PROOF + 0.001 for i in ids[2:]})


def corners_one_by_one(rnd):
    """Two fingers down; a third lands 1 mm from a ghost corner, the fourth 50 ms later
    1.2 mm from the other: four fingers."""
    return corner_fingers(rnd, more=((0.3, 0.9, "ab", (0.7, -0.7)), (0.35, 0.9, "ba", (-1.2, 0.0))))


def one_then_three(rnd):
    """One finger down, then three landing in one frame: the second finger and two at the
    corners of the rectangle the two span (as its ghosts would): four fingers."""
    return corner_fingers(rnd, second=0.3, more=((0.3, 0.9, "ab", (0.0, 0.0)), (0.3, 0.9, "ba", (0.0, 0.0))))


def corner_tap(rnd):
    """Two fingers down, and a third tapping 1.4 mm from a ghost corner for 120 ms."""
    return corner_fingers(rnd, more=((0.4, 0.52, "ab", (1.4, 0.0)),))


FIXED = {  # file name: (generator, seed)
    "phantom-tap": (phantom_tap, 1),
    "phantom-tap-double-tap": (phantom_tap_double_tap, 2),
    "wake-burst": (wake_burst, 3),
    "edge-swipe": (edge_swipe, 4),
    "storm": (storm, 5),
    "fast-fingers": (fast_fingers, 6),
    "ghosts": (ghosts, 7),
    "four-finger-rectangle": (four_finger_rectangle, 8),
    "third-finger-near-corner": (third_finger, 9),
    "flips": (flips, 10),
    "turning-pairs": (turning_pairs, 11),
    "corners-one-by-one": (corners_one_by_one, 12),
    "one-then-three": (one_then_three, 13),
    "corner-tap": (corner_tap, 14),
    "storm-drag-after": (lambda rnd: storm(rnd, rate=100, duration=3.0, frames=(1, 1), after=0.8, late_finger=0.3), 11),
    "busy-table": (busy_table, 12),
    "busy-table-fast": (lambda rnd: busy_table(rnd, rate=10.0, duration=3.0), 13),
    "metronome-slow-panel": (lambda rnd: metronome(rnd, count=24, scatter=0.3, jitter=0.01), 14),
    "metronome-quick-taps": (lambda rnd: metronome(rnd, panel=PANEL, period=1.25, lengths=(0.02, 0.03)), 15),
    "edge-two-finger-tap": (edge_two_finger_tap, 16),
}


# --- Held-out sets --------------------------------------------------------------------------

def held_out(seed):
    """The kinds with their parameters drawn from `seed`: name -> (generator, its arguments)."""
    draw = random.Random(seed)

    def point(width, height, margin=15):
        return (round(draw.uniform(margin, width - margin), 1), round(draw.uniform(margin, height - margin), 1))

    period = round(draw.uniform(2, 20), 3)
    place = point(PANEL["width"], PANEL["height"])
    kinds = {
        "phantom-tap": (phantom_tap, dict(period=period, count=draw.randint(4, 8), place=place)),
        "phantom-tap-double-tap": (phantom_tap_double_tap, dict(
            period=period, place=place, offset=(round(draw.uniform(-1.2, 1.2), 2), round(draw.uniform(-1.2, 1.2), 2)),
            between=round(draw.uniform(0.3, 0.5) * period, 3) if period > 2.5 else 1.0, late=round(draw.uniform(-0.6, 0.6) * tolerance(period), 4))),
        "wake-burst": (held_out_bursts, dict(draw_seed=draw.randrange(1 << 30))),
        "edge-swipe": (held_out_swipes, dict(draw_seed=draw.randrange(1 << 30))),
        "storm": (storm, dict(finger=point(PANEL["width"], PANEL["height"], 30), begins=round(draw.uniform(0.3, 3), 3),
                              rate=draw.randint(80, 400), duration=round(draw.uniform(1.5, 3), 3),
                              # the real finger after the quiet (which ends 0.5 s after the flood)
                              after=round(draw.uniform(0.6, 4), 3))),
        "fast-fingers": (fast_fingers, dict(fingers=draw.randint(2, 10), rate=0, duration=round(draw.uniform(1, 3), 3))),
        "ghosts": (ghosts, dict(pairs=[held_out_pair(draw) for _ in range(draw.randint(1, 4))])),
        "four-finger-rectangle": (four_finger_rectangle, dict(
            rectangle=held_out_rectangle(draw), velocity=(round(draw.uniform(-80, 80), 1), round(draw.uniform(-80, 80), 1)))),
        "third-finger-near-corner": (third_finger, dict(a=point(INFRARED["width"] / 2, INFRARED["height"] / 2, 30),
                                                         b=point(INFRARED["width"], INFRARED["height"], 30), away=round(draw.uniform(8, 25), 1))),
        "flips": (flips, held_out_flips(draw)),
        "turning-pairs": (turning_pairs, dict(turns=[held_out_turn(draw) for _ in range(draw.randint(2, 6))])),
        "storm-drag-after": (storm, dict(rate=draw.randint(60, 400), duration=round(draw.uniform(1, 3), 3),
                                         frames=draw.choice([(1, 1), (1, 3)]), after=round(draw.uniform(0.6, 2), 3),
                                         late_finger=round(draw.uniform(0.1, 0.25), 3))),
        "busy-table": (busy_table, dict(hands=draw.randint(4, 10), rate=round(draw.uniform(3, 10), 2), duration=round(draw.uniform(2, 4), 2))),
        "metronome-slow-panel": (metronome, dict(period=round(draw.uniform(1, 2), 3), lengths=(0.025, 0.039), count=draw.randint(6, 12),
                                                 place=point(SLOW["width"], SLOW["height"]))),
        "metronome-quick-taps": (metronome, dict(panel=PANEL, period=round(draw.uniform(1, 2), 3), lengths=(0.02, 0.03),
                                                 count=draw.randint(6, 12), place=point(PANEL["width"], PANEL["height"]))),
        "edge-two-finger-tap": (edge_two_finger_tap, held_out_edge_taps(draw)),
    }
    # Fast fingers: as fast as fingers go (at most 40 new contacts a second; the busy tables go further).
    fingers = kinds["fast-fingers"][1]["fingers"]
    kinds["fast-fingers"][1]["rate"] = round(min(4.0, draw.uniform(2, 40 / fingers)), 3)
    return kinds


def held_out_edge_taps(draw):
    """Two two-finger taps, each with one finger within 1 mm of an edge (not at a corner)
    and the other 20–60 mm inside."""
    edges, others = [], []
    for _ in range(2):
        edge = draw.choice(["left", "right", "top", "bottom"])
        depth = round(draw.uniform(0, 0.9), 2)
        along = draw.uniform(20, (PANEL["height"] if edge in ("left", "right") else PANEL["width"]) - 20)
        inward = draw.uniform(20, 60)
        x, y, ix, iy = {"left": (depth, along, depth + inward, along), "right": (PANEL["width"] - depth, along, PANEL["width"] - depth - inward, along),
                        "top": (along, depth, along, depth + inward), "bottom": (along, PANEL["height"] - depth, along, PANEL["height"] - depth - inward)}[edge]
        edges.append((round(x, 2), round(y, 2)))
        others.append((round(ix, 2), round(iy, 2)))
    return dict(edges=tuple(edges), other=tuple(others), length=round(draw.uniform(0.08, 0.2), 3))


def held_out_rectangle(draw):
    while True:
        x0, x1 = sorted(draw.uniform(20, INFRARED["width"] - 60) for _ in range(2))
        y0, y1 = sorted(draw.uniform(20, INFRARED["height"] - 60) for _ in range(2))
        if x1 - x0 > 25 and y1 - y0 > 25:
            return (round(x0, 1), round(y0, 1)), (round(x1, 1), round(y1, 1))


def held_out_pair(draw):
    """Two fingers anywhere on the frame, at least 15 mm apart on each axis (nearer, their
    ghost corners are within a finger of them), dragging at 30 to 100 mm/s on each axis; their ghosts
    land with the second finger or up to 7 frames after it."""
    while True:
        a = (draw.uniform(20, INFRARED["width"] - 20), draw.uniform(20, INFRARED["height"] - 20))
        b = (draw.uniform(20, INFRARED["width"] - 20), draw.uniform(20, INFRARED["height"] - 20))
        if abs(a[0] - b[0]) > 15 and abs(a[1] - b[1]) > 15:
            break
    # At least 30 mm/s on each axis: ghosts landing with the second finger are told from
    # fingers at the corners by moving with them (a still one is a finger after 60 ms).
    speed = lambda: round(draw.choice((-1, 1)) * draw.uniform(30, 100), 1)
    velocity = lambda: (speed(), speed())
    return (tuple(round(v, 1) for v in a), tuple(round(v, 1) for v in b), velocity(), velocity(),
            draw.randint(1, 8), draw.randint(2, 30), draw.random() < 0.5)


def held_out_turn(draw):
    """Two fingers 30 to 120 mm apart turning through 90° to 180° either way (so that they
    cross on x or on y), from any angle, in 0.15 to 1.5 s (up to 1.2 m/s), on the frame."""
    radius = round(draw.uniform(15, 60), 1)
    centre = (round(draw.uniform(radius + 10, INFRARED["width"] - radius - 10), 1),
              round(draw.uniform(radius + 10, INFRARED["height"] - radius - 10), 1))
    degrees = round(draw.choice((-1, 1)) * draw.uniform(90, 180), 1)
    return centre, radius, round(draw.uniform(-180, 180), 1), degrees, round(draw.uniform(0.15, 1.5), 3)


def held_out_flips(draw):
    """Two fingers at least 15 mm apart on each axis, flipped for 1–2 frames, 1–4 times."""
    a, b, va, vb, _, _, _ = held_out_pair(draw)
    frames = draw.randint(40, 90)
    flips_at, n = [], draw.randint(3, 8)
    while n < frames - 4 and len(flips_at) < 4:
        length = draw.randint(1, 2)
        flips_at.append((n, length))
        n += length + draw.randint(3, 15)
    # Each finger moves at most 0.5 s at its speed: keep them on the frame.
    va = tuple(max(-60, min(60, v)) for v in va)
    vb = tuple(max(-60, min(60, v)) for v in vb)
    return dict(a=a, b=b, va=va, vb=vb, flips_at=tuple(flips_at), frames=frames)


def held_out_bursts(rnd, draw_seed):
    """Two to five bursts of 2–6 contacts at any edge (or the origin), each lifting within
    1–3 frames, some seconds apart; the first as the panel is opened, of three or more, may
    have all but one contact inside."""
    draw = random.Random(draw_seed)
    rec = Recording(PANEL, rnd)
    total, t = 0, 0.0
    for n in range(draw.randint(2, 5)):
        size = draw.randint(2, 6)
        points = []
        for _ in range(size):
            edge = draw.choice(["left", "right", "top", "bottom", "origin"])
            along = draw.uniform(0, PANEL["height"] if edge in ("left", "right") else PANEL["width"])
            points.append(edge_point(rec, draw, edge, along))
        if n == 0 and size >= 3 and draw.random() < 0.5:  # idle since opened: one at an edge of three or more is enough
            points = points[:1] + [(rec.ux(draw.uniform(20, PANEL["width"] - 20), False), rec.uy(draw.uniform(20, PANEL["height"] - 20), False))
                                   for _ in range(size - 1)]
        frames = [draw.randint(1, 3) for _ in points]
        stray = tuple(range(size, size + draw.randint(0, 3)))
        burst(rec, draw, t, points, frames, stray)
        total += size
        t += draw.uniform(0.5, 5)
    return rec, expectation(rec, {"bursts": total})


def held_out_swipes(rnd, draw_seed):
    """One to four single-finger swipes in from any edge, at 0.3 to 1.5 m/s."""
    draw = random.Random(draw_seed)
    rec = Recording(PANEL, rnd)
    fingers, t = [], 0.0
    for _ in range(draw.randint(1, 4)):
        edge = draw.choice(["left", "right", "top", "bottom"])
        speed = draw.uniform(300, 1500)
        along = draw.uniform(20, (PANEL["height"] if edge in ("left", "right") else PANEL["width"]) - 20)
        start = edge_point(rec, draw, edge, along)
        direction = {"left": (1, 0), "right": (-1, 0), "top": (0, 1), "bottom": (0, -1)}[edge]
        duration = min(0.2, 120 / speed)
        fingers.append(swipe(rec, rnd, t, 0, start, (direction[0] * speed, direction[1] * speed), duration))
        t += draw.uniform(0.5, 3)
    return rec, expectation(rec, {}, fingers=fingers)


# --- Writing and checking ---------------------------------------------------------------------

def write(directory, kinds):
    """Writes each kind, name -> (generator, its arguments, its noise seed), and expected.json."""
    os.makedirs(directory, exist_ok=True)
    expected = {}
    for name, (generator, arguments, seed) in kinds.items():
        rec, expect = generator(random.Random(seed), **arguments)
        with open(os.path.join(directory, name + ".evemu"), "w") as out:
            out.write(rec.text())
        expected[name + ".evemu"] = expect
    with open(os.path.join(directory, "expected.json"), "w") as out:
        json.dump(expected, out, indent=1, sort_keys=True)
        out.write("\n")


def lives(frames):
    """Each reported tracking id: [(time, phase)...] from `motionctl frames --json` lines."""
    result = {}
    for frame in frames:
        if frame.get("event") != "frame":
            continue
        for contact in frame.get("contacts", []):
            result.setdefault(contact["id"], []).append((frame["t"], contact["phase"]))
    return result


def check_file(path, expect, motionctl):
    """Why the filtered replay of `path` is not as `expect` says: a list of problems."""
    problems = []
    frames = [json.loads(line) for line in subprocess.run([motionctl, "frames", path, "--json"], check=True,
                                                          capture_output=True, text=True).stdout.splitlines() if line.strip()]
    seen = lives(frames)
    eps = 1e-5
    for finger in expect["fingers"]:
        life = seen.get(finger["id"])
        if not life:
            problems.append(f"finger {finger['id']} (lands {finger['lands']}) never reported")
            continue
        (began, first), (ended, last) = life[0], life[-1]
        if first != "began" or not (finger["lands"] - eps <= began <= finger["begins_by"] + eps):
            problems.append(f"finger {finger['id']} first reported {first} at {began}, expected began in [{finger['lands']}, {finger['begins_by']}]")
        if last != "ended" or abs(ended - finger["lifts"]) > eps:
            problems.append(f"finger {finger['id']} last reported {last} at {ended}, expected ended at {finger['lifts']}")
        if any(phase not in ("moved", "stationary") for _, phase in life[1:-1]):
            problems.append(f"finger {finger['id']}: {[phase for _, phase in life]}")
    for finger in expect["cancelled"]:
        life = seen.get(finger["id"])
        if not life or life[-1][1] != "cancelled" or abs(life[0][0] - finger["lands"]) > eps:
            problems.append(f"contact {finger['id']} should be reported from {finger['lands']} and cancelled: {life and [life[0], life[-1]]}")
    for rotation in expect.get("rotations", []):
        problems += check_rotation(frames, rotation)
    if len(seen) != expect["contacts"]:
        problems.append(f"{len(seen)} contacts reported, expected {expect['contacts']}")
    for tracking_id, life in seen.items():
        if life[0][1] != "began" or life[-1][1] not in ("ended", "cancelled"):
            problems.append(f"contact {tracking_id}: {life[0]} … {life[-1]}")
    return problems, frames


def check_rotation(frames, rotation):
    """Why the pair `rotation["ids"]` did not turn as its fingers did: the angle of the line
    from one to the other, in the frames that report both, must turn `degrees` in all
    (within 3°), never back (by more than 1°) and never farther between two frames than
    the fingers did (`largest_step`, plus 2°). A flip taken for a crossing would turn it
    back, or jump."""
    first, second = rotation["ids"]
    angles = []
    for frame in frames:
        if frame.get("event") != "frame":
            continue
        places = {contact["id"]: (contact["device_x"], contact["device_y"]) for contact in frame.get("contacts", [])}
        if first in places and second in places:
            (ax, ay), (bx, by) = places[first], places[second]
            angles.append(math.degrees(math.atan2(by - ay, bx - ax)))
    if len(angles) < 2:
        return [f"turn {rotation['ids']}: reported together in {len(angles)} frames"]
    steps = [(b - a + 180) % 360 - 180 for a, b in zip(angles, angles[1:])]
    sign = 1 if rotation["degrees"] > 0 else -1
    total, back, largest = sum(steps), max(-sign * step for step in steps), max(abs(step) for step in steps)
    problems = []
    if abs(total - rotation["degrees"]) > 3:
        problems.append(f"turn {rotation['ids']}: turned {total:.1f}°, expected {rotation['degrees']}°")
    if back > 1:
        problems.append(f"turn {rotation['ids']}: turned back {back:.1f}° between two frames")
    if largest > rotation["largest_step"] + 2:
        problems.append(f"turn {rotation['ids']}: turned {largest:.1f}° between two frames, the fingers at most {rotation['largest_step']}°")
    return problems


def sweep_counts(directory, motionctl):
    """Each file's filter counts from `motionctl sweep --json`."""
    counts = {}
    output = subprocess.run([motionctl, "sweep", directory, "--json"], check=True, capture_output=True, text=True).stdout
    for line in output.splitlines():
        record = json.loads(line)
        if "path" in record and record.get("devices"):
            counts[os.path.basename(record["path"])] = record["devices"][0]["filtered"]
    return counts


def check(directory, motionctl):
    with open(os.path.join(directory, "expected.json")) as source:
        expected = json.load(source)
    counts = sweep_counts(directory, motionctl)
    failures = 0
    for name, expect in sorted(expected.items()):
        problems, _ = check_file(os.path.join(directory, name), expect, motionctl)
        got = {key: counts.get(name, {}).get(key) for key in COUNT_KEYS}
        if got != expect["counts"]:
            problems.append(f"counts {got}, expected {expect['counts']}")
        print(f"{'ok  ' if not problems else 'FAIL'} {name}: {expect['counts'] if not problems else ''}")
        for problem in problems[:8]:
            print("     " + problem)
        failures += bool(problems)
    return failures


def main(arguments):
    motionctl = "motionctl"
    if "--motionctl" in arguments:
        index = arguments.index("--motionctl")
        motionctl = arguments[index + 1]
        del arguments[index:index + 2]
    if arguments[:1] == ["--held-out"]:
        seed, directory = int(arguments[1]), arguments[2]
        write(directory, {name: (generator, arguments, seed * 100 + index)
                          for index, (name, (generator, arguments)) in enumerate(held_out(seed).items())})
    elif arguments[:1] == ["--check"]:
        directory = arguments[1] if len(arguments) > 1 else HERE
        sys.exit(1 if check(directory, motionctl) else 0)
    elif not arguments:
        write(HERE, {name: (generator, {}, seed) for name, (generator, seed) in FIXED.items()})
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
