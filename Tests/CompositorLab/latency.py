"""How long a touch takes from the panel to the page, stage by stage, in the compositor lab.

One finger moves across the lab panel, a frame every 10 ms (or as soon as the last one reached
the virtual touchscreen, when motiond is slower under emulation), each frame 2 units (3.2 px)
from the last so that every stage can tell them apart by position. For each frame:

- **panel**: the time before the harness's write to the panel's node (the kernel stamps the
  panel's events inside that write, and motiond reads that stamp);
- **virtual touchscreen**: the kernel's stamp of motiond's write, as a plain reader of the
  virtual node gets it (Linux 6.1, the guest's, stamps a uinput write when it is made; 6.5
  and later would carry the panel's stamp through);
- **wl_touch**: the `time` of the compositor's event, as wev prints it: milliseconds of
  libinput's event time, which is the virtual device's stamp; it says when the compositor
  stamped nothing of its own, so this stage is the virtual one cut to the millisecond;
- **page, event**: Chromium's `event.timeStamp`, and **page, handler**: `performance.now()` in
  the page's handler, both put on the guest's CLOCK_MONOTONIC through `performance.timeOrigin`
  (wall-clock milliseconds) less the guest's wall clock's offset from its monotonic one.

All on one guest with an emulated CPU (TCG) unless KVM is there: the figures say which.
"""
import fcntl
import os
import select
import struct
import time

from labkit import LabFailure, check, note, wait_until
from scenarios import finger
from session import WlTouch
from virtual_device import EVIOCSCLOCKID, INPUT_EVENT

FRAMES = 60
STEP_UNITS = 2  # Atmel units a frame: 3.2 px on the lab's 1280 px output
MT_X = 0x35
UNITS_PER_PIXEL = 4  # the virtual touchscreen's


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def accelerator():
    with open("/sys/devices/system/clocksource/clocksource0/available_clocksource") as source:
        return "KVM" if "kvm-clock" in source.read() else "TCG (no KVM: QEMU emulates the CPU), debug build"


def play_paced(panel_node, virtual_node):
    """Writes the moving finger to the panel, each frame once the last reached the virtual
    touchscreen (and not before the panel's 10 ms): for each frame that moved the finger there,
    (write time, virtual stamp, x in pixels), all on CLOCK_MONOTONIC."""
    frames = finger(0, 71, [(200 + STEP_UNITS * step, 240) for step in range(FRAMES)])
    reader = os.open(virtual_node, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(panel_node, os.O_WRONLY)
    shown, pending, x = [], b"", None
    try:
        fcntl.ioctl(reader, EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
        next_time = time.monotonic()
        for index, (_, events) in enumerate(frames):
            delay = next_time - time.monotonic()
            if delay > 0:
                select.select([], [], [], delay)
            data = b"".join(INPUT_EVENT.pack(0, 0, kind, code, value) for kind, code, value in events + [(0, 0, 0)])
            before = time.clock_gettime(time.CLOCK_MONOTONIC)
            os.write(writer, data)
            next_time = before + 0.010
            stamp, deadline = None, time.monotonic() + 10
            while stamp is None:
                ready, _, _ = select.select([reader], [], [], max(0, deadline - time.monotonic()))
                check(ready, f"frame {index} written to {panel_node} never reached {virtual_node}")
                pending += os.read(reader, INPUT_EVENT.size * 256)
                while len(pending) >= INPUT_EVENT.size:
                    seconds, micros, kind, code, value = INPUT_EVENT.unpack(pending[:INPUT_EVENT.size])
                    pending = pending[INPUT_EVENT.size:]
                    if (kind, code) == (3, MT_X):
                        x = value / UNITS_PER_PIXEL
                    elif (kind, code) == (0, 0) and stamp is None and seconds + micros / 1e6 >= before:
                        stamp = seconds + micros / 1e6
            if index < len(frames) - 1 and x is not None:
                shown.append((before, stamp, x))
    finally:
        os.close(reader)
        os.close(writer)
    return shown


def first_at(shown, x):
    """The frame the virtual touchscreen showed at `x` (a client's position, in pixels)."""
    return next((frame for frame in shown if abs(frame[2] - x) <= 0.3), None)


def clock_offset():
    """The guest's wall clock less its monotonic one, in seconds (the middle of two reads)."""
    before = time.monotonic()
    wall = time.time()
    return wall - (before + time.monotonic()) / 2


def stage_latency(lab):
    """Each stage's latency for the frames each client showed: the table's rows, checked to be
    in order (a stage never earlier than the one before it, within the clocks' grain)."""
    lab.motiond.configure("", "")
    panel, node = lab.panels["lab"].node, lab.motiond.node
    stages = {}
    for target in ("wl_touch", "page"):
        client = WlTouch(lab.compositor) if target == "wl_touch" else lab.open_page()
        try:
            lab.probe(client, target)
            client.mark()
            shown = play_paced(panel, node)
            ended = ("up",) if target == "wl_touch" else ("touchend",)
            key = "event" if target == "wl_touch" else "type"
            try:
                wait_until(f"{target} to show the finger lift", lambda: any(e.get(key) in ended for e in client.events()), seconds=20)
            except LabFailure:
                note(f"{target} never showed the latency finger lift")
            events = client.events()
        finally:
            if target == "wl_touch":
                client.close()
        stages.setdefault("virtual touchscreen", [stamp - before for before, stamp, _ in shown])
        if target == "wl_touch":
            moves = [e for e in events if e.get("event") in ("down", "motion") and "x" in e]
            stages["wl_touch (time)"] = [event["time"] / 1000 - frame[0] for event in moves if (frame := first_at(shown, event["x"]))]
        else:
            offset = clock_offset()
            origin = lab.page.ready.get("origin")
            check(origin is not None, "the page did not say its performance.timeOrigin")
            moves = [e for e in events if e["type"] in ("touchstart", "touchmove") and "now" in e]
            for name, field in (("page (event.timeStamp)", "t"), ("page (handler)", "now")):
                stages[name] = [(origin + event[field]) / 1000 - offset - frame[0]
                                for event in moves if (frame := first_at(shown, event["x"]))]
    return judge(stages, FRAMES)


def judge(stages, frames):
    rows = [f"{frames} frames at up to 100 Hz, in the guest under {accelerator()}: stage | frames seen | p50 ms | p99 ms | max ms"]
    problems = []
    for name, values in stages.items():
        if not values:
            problems.append(f"{name}: no frame matched")
            continue
        milliseconds = [value * 1000 for value in values]
        rows.append(f"panel → {name} | {len(values)} | {percentile(milliseconds, 0.5):.2f} | {percentile(milliseconds, 0.99):.2f} | {max(milliseconds):.2f}")
    # Each stage after the one before it, at the median: a wl_touch time is cut to the
    # millisecond, and the page's clock is put on the guest's through its wall clock.
    medians = {name: percentile(values, 0.5) for name, values in stages.items() if values}
    order = ["virtual touchscreen", "wl_touch (time)", "page (event.timeStamp)", "page (handler)"]
    grain = {"wl_touch (time)": 0.001, "page (event.timeStamp)": 0.002, "page (handler)": 0.002}
    earlier = 0.0
    for name in order:
        if name in medians:
            if medians[name] < earlier - grain.get(name, 0):
                problems.append(f"{name}: its median ({medians[name] * 1000:.2f} ms) is before the stage before it ({earlier * 1000:.2f} ms)")
            earlier = max(earlier, medians[name])
    if "virtual touchscreen" in stages and len(stages["virtual touchscreen"]) < frames:
        problems.append(f"only {len(stages['virtual touchscreen'])} of {frames} frames reached the virtual touchscreen")
    check(not problems, "\n".join(problems + rows))
    return "\n".join(rows)
