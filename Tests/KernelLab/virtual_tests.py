"""The virtual touchscreen's own tests, what a recording's play does not show and only a real
kernel and libinput can: a lift and a landing in one frame, the device gone with motiond, the
grab, and how long a frame takes from the panel to the apps. (What motiond writes for claims,
palms, taken fingers, the lock and reloads is tested on the host, VirtualTouchscreenSinkTests.)
"""
import errno
import fcntl
import os
import re
import select
import struct
import time

from labkit import (DRAG, MOTIONCTL, SCRATCH, STEP, Client, another_reader_sees, Daemon, LabFailure, Panel, check, device_event,
                    REPOSITORY, emulated, frame_contents, json_lines, pending_events, run, settle_udev,
                    wait_for_frames, wait_until, write_config)
from virtual_device import (ABS_X, ABS_Y, EVIOCSCLOCKID, INPUT_EVENT, MT_ID, MT_SLOT, MT_TOOL, MT_X, MT_Y,
                            VIRTUAL_CONFIG, VIRTUAL_NAME, VIRTUAL_OUTPUT, BTN_TOUCH, DebugEvents,
                            contact_tracks, evemu_frames, one_touch, track_problems, try_grab,
                            virtual_node)

def lift_and_land_frames():
    """Three touches on the Atmel panel (its units, 800 × 480), each ending as the next lands,
    in one frame: A (slot 0) lifts as B lands in slot 1; then B's slot says a new tracking id,
    C's, with no -1 before it, which the kernel's slot protocol reads as B lifting and C
    landing (libevdev drops the id as a kernel bug)."""
    def at(x, y):
        return [(3, MT_X, x), (3, MT_Y, y), (3, ABS_X, x), (3, ABS_Y, y)]
    frames = [[(3, MT_SLOT, 0), (3, MT_ID, 51), (3, MT_TOOL, 0)] + at(150, 200) + [(1, BTN_TOUCH, 1)]]
    frames += [at(150 + 8 * step, 200) for step in range(1, 8)]
    frames.append([(3, MT_ID, -1), (3, MT_SLOT, 1), (3, MT_ID, 52), (3, MT_TOOL, 0)] + at(600, 300))
    frames += [at(600, 300 - 8 * step) for step in range(1, 8)]
    frames.append([(3, MT_ID, 53)] + at(400, 420))
    frames += [at(400 - 8 * step, 420) for step in range(1, 8)]
    frames.append([(3, MT_ID, -1), (1, BTN_TOUCH, 0)])
    return frames


def virtual_lift_and_land():
    """A touch that lands as another lifts, in one frame, reaches the apps as a touch of its
    own: libinput sees every touch motiond published, each lifted, and never a second touch
    down in one slot (the virtual device takes a slot released in a frame only in a later
    one). A tracking id replaced with no -1 between is a lift and a landing live as in
    motionctl's replay of the same events. The device's phys is motiond/OUTPUT."""
    events = os.path.join(SCRATCH, "lift-and-land.events")
    with open(events, "w") as out:
        out.writelines(evemu_frames(lift_and_land_frames()))
    # The replay reads the panel's description and these events, as one recording.
    recording = os.path.join(SCRATCH, "lift-and-land.evemu")
    with open(DRAG) as header, open(recording, "w") as out:
        out.writelines(line for line in header if not line.startswith("E:"))
        out.writelines(evemu_frames(lift_and_land_frames()))
    replayed = frame_contents(json_lines(run([MOTIONCTL, "frames", recording, "--raw", "--json"]), "the replay"))
    replayed_ids = sorted({contact["id"] for frame in replayed for contact in frame if contact["phase"] == "began"})
    with Daemon([], name="lift-and-land", config=write_config("lift-and-land.toml", VIRTUAL_CONFIG)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        with open(os.path.join("/sys/class/input", os.path.basename(node), "device", "phys")) as source:
            phys = source.read().strip()
        client.request("subscribe", streams=["screen.contacts"])
        with Panel(DRAG) as panel:
            client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
            watcher = DebugEvents(node)
            panel.play(events, meanwhile=client.drain)
            try:
                wait_until("libinput to see three touches end", lambda: len(watcher.touches()) >= 3 and watcher.fingers_down() == 0)
            except LabFailure:
                # Judged below, with everything else: fewer touches, or one never ended.
                pass
        watcher.stop()
        client.drain()
        shown = watcher.touches()
        tracks = contact_tracks(client.events)
        problems = []
        if phys != f"motiond/{VIRTUAL_OUTPUT}":
            problems.append(f"the virtual touchscreen's phys is {phys!r}, not motiond/{VIRTUAL_OUTPUT}")
        if watcher.multiple_touch_down():
            problems.append(f"libinput dropped touches: {watcher.multiple_touch_down()}")
        if len(replayed_ids) != 3:
            problems.append(f"motionctl's replay began {len(replayed_ids)} contacts, not 3: {replayed_ids}")
        if len(tracks) != len(replayed_ids):
            problems.append(f"motiond published {len(tracks)} contacts live, the replay began {len(replayed_ids)}: {tracks}")
        if [touch["end"] for touch in shown] != ["up"] * 3:
            problems.append(f"libinput's touches ended {[touch['end'] for touch in shown]}, not three TOUCH_UP:\n" + watcher.touch_lines())
        for (touch, contact) in zip(shown, tracks):
            why = track_problems(touch["positions"], tracks[contact])
            if why:
                problems.append(f"contact {contact}: {why}")
        check(not problems, "\n".join(problems))
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return f"phys {phys}; three touches, each lifted, as screen.contacts published them and as the replay began them"


def withdraw_frames():
    """A finger on the Atmel panel that moves 4 units, turns palm, stays 0.48 s and lifts; half
    a second later a tap (0.1 s) elsewhere. Frames 10 ms apart (empty ones only wait)."""
    def at(x, y):
        return [(3, MT_X, x), (3, MT_Y, y), (3, ABS_X, x), (3, ABS_Y, y)]
    frames = [[(3, MT_SLOT, 0), (3, MT_ID, 61), (3, MT_TOOL, 0)] + at(400, 240) + [(1, BTN_TOUCH, 1)], at(402, 240), at(404, 240)]
    frames.append([(3, MT_TOOL, 2)])
    frames += [[] for _ in range(47)] + [[(3, MT_ID, -1), (1, BTN_TOUCH, 0)]]
    frames += [[] for _ in range(49)] + [[(3, MT_ID, 62), (3, MT_TOOL, 0)] + at(200, 300) + [(1, BTN_TOUCH, 1)]]
    frames += [[] for _ in range(9)] + [[(3, MT_ID, -1), (1, BTN_TOUCH, 0)]]
    return frames


TOUCH_TIME = re.compile(r"\s(TOUCH_DOWN|TOUCH_MOTION|TOUCH_UP|TOUCH_CANCEL)\s+\+?(-?[\d.]+)s\s+\d+ \((\d+)\)")


def virtual_withdraw():
    """With the default `cancel = "withdraw"`, a finger that turns palm after the apps saw it
    land reaches libinput as no cancel and no tap: it slides out of a tap's slop, is held still
    for 0.15 s (libinput's times are the kernel's stamps of motiond's writes, on motiond's own
    timer: the panel sends nothing meanwhile) and lifts, before the panel lifts it; the tap
    after it is a tap, and nothing is left down."""
    config = VIRTUAL_CONFIG.replace('cancel = "cancel"\n', "")
    check(config != VIRTUAL_CONFIG, "the lab's configuration no longer says cancel = \"cancel\"")
    events = os.path.join(SCRATCH, "withdraw.events")
    with open(events, "w") as out:
        out.writelines(evemu_frames(withdraw_frames()))
    with Daemon([], name="withdraw", config=write_config("withdraw.toml", config)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        with Panel(DRAG) as panel:
            wait_until(f"motiond to grab {panel.node}",
                       lambda: any(d["node"] == panel.node and d["grabbed"] for d in client.request("devices")["devices"]))
            watcher = DebugEvents(node)
            panel.play(events)
            try:
                wait_until("libinput to see two touches end", lambda: len(watcher.touches()) >= 2 and watcher.fingers_down() == 0)
            except LabFailure:
                pass
        watcher.stop()
        shown = watcher.touches()
        stamps = [(match.group(1), float(match.group(2))) for match in map(TOUCH_TIME.search, watcher.text().splitlines()) if match]
        lines = watcher.touch_lines()
        check([touch["end"] for touch in shown] == ["up", "up"], f"libinput's touches ended {[touch['end'] for touch in shown]}, not two TOUCH_UP:\n{lines}")
        first, tap = shown
        # The first touch's events come first: it ended before the tap landed.
        ends = [index for index, (kind, _) in enumerate(stamps) if kind == "TOUCH_UP"]
        down, up = stamps[0][1], stamps[ends[0]][1]
        moves = [stamp for kind, stamp in stamps[:ends[0]] if kind == "TOUCH_MOTION"]
        check(len(moves) == len(first["positions"]) - 1 and len(moves) >= 10, f"the palm was not slid away and shown still:\n{lines}")
        # Shown still: from some motion on, every one within a pixel of the last, for 0.15 s
        # before the lift; and those of the last 100 ms before the last motion (what a
        # velocity tracker reckons from) among them. The timer's steps may come late under
        # load: their number is not judged.
        last = first["positions"][-1]
        timed = list(zip(moves, first["positions"][1:]))
        since = up
        for stamp, (x, y) in reversed(timed):
            if abs(x - last[0]) > 1 or abs(y - last[1]) > 1:
                break
            since = stamp
        held = up - since
        check(held >= 0.14, f"shown still only {held:.3f} s before the lift, not 0.15 s (a fling):\n{lines}")
        still = [at for stamp, at in timed if stamp >= since]
        check(moves[-1] - 0.1 >= since - 1e-6, f"motion within the last 100 ms before the lift:\n{lines}")
        check(up - down < 0.45, f"lifted {up - down:.3f} s after it landed: not on motiond's timer, but with the panel's lift:\n{lines}")
        # The slide: from where the palm was (it had moved 2 px from its landing) to where it
        # was shown still, the farthest of its positions from the last.
        slid = max(((x - last[0]) ** 2 + (y - last[1]) ** 2) ** 0.5 for x, y in first["positions"])
        check(slid >= 40, f"slid {slid:.1f} px, not out of a tap's slop:\n{lines}")
        tap_moved = max(abs(x - tap["positions"][0][0]) + abs(y - tap["positions"][0][1]) for x, y in tap["positions"])
        check(tap_moved < 1, f"the tap after it moved {tap_moved} px:\n{lines}")
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return f"the palm slid {slid:.0f} px, shown still {held:.3f} s ({len(still)} motions within a pixel), lifted {up - down:.3f} s after landing; the tap after it a tap"


# --- Field faults, generated anew each run -------------------------------------------------

# Where a run keeps what its tests write (lab.py sets it to --out); SCRATCH when run otherwise.
def virtual_device_gone(node):
    name = os.path.basename(node)
    return not os.path.exists(f"/sys/class/input/{name}") and not os.path.exists(node)


def virtual_sigkill():
    """SIGKILL of motiond: the kernel destroys the virtual touchscreen with motiond's uinput
    descriptor (its sysfs and /dev nodes go, libinput lists it no more) and releases the
    panel's grab: the panel can be grabbed and read again."""
    with Panel(DRAG) as panel, Daemon([], name="sigkill", config=write_config("sigkill.toml", VIRTUAL_CONFIG)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        wait_until(f"motiond to grab {panel.node}",
                   lambda: any(d["node"] == panel.node and d["grabbed"] for d in client.request("devices")["devices"]))
        listed = run(["libinput", "list-devices"]).stdout
        check(VIRTUAL_NAME in listed, f"libinput list-devices does not list {VIRTUAL_NAME}:\n{listed}")
        refused = try_grab(panel.node)
        check(refused == errno.EBUSY, f"EVIOCGRAB of {panel.node} while motiond holds it: {os.strerror(refused) if refused else 'succeeded'}")

        daemon.process.kill()
        daemon.process.wait(timeout=STEP)
        wait_until(f"the virtual touchscreen {node} gone from sysfs and /dev", lambda: virtual_device_gone(node))
        settle_udev()
        listed = run(["libinput", "list-devices"]).stdout
        check(VIRTUAL_NAME not in listed, f"libinput still lists {VIRTUAL_NAME}:\n{listed}")
        remembered = run(["udevadm", "info", "--query=property", "--name", node])
        check(VIRTUAL_NAME not in remembered.stdout, f"udev still knows {node} as the virtual touchscreen: {remembered.stdout}")
        grabbed = try_grab(panel.node)
        check(grabbed == 0, f"EVIOCGRAB of {panel.node} after the SIGKILL: {os.strerror(grabbed)}")
        events = another_reader_sees(panel, "a reader of the panel to see the next drag")
    return f"{node} gone, libinput lists it no more; {panel.node} grabbed again and read ({events} events)"


def virtual_grab():
    """While motiond shows the panel on a virtual touchscreen, another reader of the panel gets
    nothing (the grab), and the virtual device gets the drag; where motiond cannot open
    /dev/uinput (its own user, as shipped, without a rule for uinput) the panel is not grabbed,
    is read by others, and health says why."""
    frames = len(frame_contents(json_lines(run([MOTIONCTL, "frames", DRAG, "--json"]), "the replay")))
    with Panel(DRAG) as panel:
        with Daemon([], name="vgrab", config=write_config("vgrab.toml", VIRTUAL_CONFIG)) as daemon:
            client = Client(daemon.socket)
            node = virtual_node(client)
            device = wait_until(f"motiond to read {panel.node}",
                                lambda: next((d for d in client.request("devices")["devices"] if d["node"] == panel.node), None))
            check(device["grabbed"] is True, f"devices says grabbed = {device['grabbed']}")
            other = os.open(panel.node, os.O_RDONLY | os.O_NONBLOCK)
            shown = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
            try:
                panel.play()
                wait_for_frames(client, 0, frames)
                seen = pending_events(other)
                check(seen == 0, f"another reader of the panel saw {seen} events while motiond showed it on {node}")
                virtual = pending_events(shown)
                check(virtual > 0, f"the virtual touchscreen {node} showed nothing of the drag")
            finally:
                os.close(other)
                os.close(shown)
            check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
        wait_until(f"the virtual touchscreen {node} gone after motiond stopped", lambda: virtual_device_gone(node))

        result = run(["systemd-sysusers", os.path.join(REPOSITORY, "systemd", "motiond.sysusers")])
        check(result.returncode == 0, f"systemd-sysusers: {result.stderr}")
        probe = run(["setpriv", "--reuid=motiond", "--regid=motiond", "--init-groups", "--", "sh", "-c", "exec 3<>/dev/uinput"])
        check(probe.returncode != 0, "the motiond user can open /dev/uinput here: this half of the test shows nothing")
        config = write_config("vgrab-user.toml", VIRTUAL_CONFIG)
        os.chmod(config, 0o644)
        as_motiond = ["setpriv", "--reuid=motiond", "--regid=motiond", "--init-groups"]
        with Daemon([], name="vgrab-user", user=as_motiond, config=config) as daemon:
            client = Client(daemon.socket)
            device = wait_until(f"motiond (user motiond) to read {panel.node}",
                                lambda: next((d for d in client.request("devices")["devices"] if d["node"] == panel.node), None))
            check(device["grabbed"] is False, f"without a virtual touchscreen the panel is grabbed: {device}")
            health = client.request("health")
            entries = health.get("virtual_touchscreens", [])
            check(health["status"] == "unhealthy" and any("no virtual touchscreen for " + VIRTUAL_OUTPUT in problem and "/dev/uinput" in problem
                                                          for problem in health["problems"]),
                  f"health does not name the problem: {health}")
            check(entries and "error" in entries[0], f"health's virtual_touchscreens: {entries}")
            check(VIRTUAL_NAME not in run(["libinput", "list-devices"]).stdout, "a virtual touchscreen exists all the same")
            check(try_grab(panel.node) == 0, f"{panel.node} cannot be grabbed by another though motiond did not grab it")
            events = another_reader_sees(panel, "another reader of the ungrabbed panel to see the drag")
            check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return (f"grabbed: another reader saw nothing, {virtual} events on {node}; without uinput: not grabbed, another reader saw"
            f" {events} events, health: {health['problems']}")


# The most the median frame may take to show, panel to virtual device, in milliseconds.
LATENCY_LIMIT = 100


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def measure_latency(panel_node, node, count):
    """Writes `count` frames of one finger to the panel's node at 100 Hz (or as soon as the
    last showed, when motiond is slower) and reads each on the virtual touchscreen `node`:
    for each, the virtual device's stamp less the time before the write, and less the time
    after it, and how long the write took."""
    reader = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(panel_node, os.O_WRONLY)
    latencies, earliest, write_times = [], [], []
    try:
        fcntl.ioctl(reader, EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
        pending = b""
        frames = one_touch(31, [(100 + step, 240 + step % 2) for step in range(count)])
        next_time = time.monotonic()
        for index, frame in enumerate(frames):
            data = b"".join(INPUT_EVENT.pack(0, 0, kind, code, value) for kind, code, value in frame + [(0, 0, 0)])
            # At the panel's pace, or as soon as the last frame showed when motiond is slower.
            delay = next_time - time.monotonic()
            if delay > 0:
                select.select([], [], [], delay)
            before = time.clock_gettime(time.CLOCK_MONOTONIC)
            os.write(writer, data)
            after = time.clock_gettime(time.CLOCK_MONOTONIC)
            write_times.append(after - before)
            next_time = before + 0.010
            deadline = time.monotonic() + 10
            stamp = None
            while stamp is None:
                ready, _, _ = select.select([reader], [], [], max(0, deadline - time.monotonic()))
                check(ready, f"frame {index} written to {panel_node} never showed on {node}")
                pending += os.read(reader, INPUT_EVENT.size * 256)
                while len(pending) >= INPUT_EVENT.size:
                    seconds, micros, kind, code, value = INPUT_EVENT.unpack(pending[:INPUT_EVENT.size])
                    pending = pending[INPUT_EVENT.size:]
                    check(not (kind == 0 and code == 3), f"SYN_DROPPED on {node}")
                    # The first report stamped after the write (one motiond wrote for an
                    # earlier frame, should it write two for a frame, is older).
                    if kind == 0 and code == 0 and stamp is None and seconds + micros / 1e6 >= before:
                        stamp = seconds + micros / 1e6
            latencies.append(stamp - before)
            earliest.append(stamp - after)
    finally:
        os.close(reader)
        os.close(writer)
    return latencies, earliest, write_times


def virtual_latency():
    """How long after the panel's event the apps get it: each frame written to the panel's
    node (as the player writes, the kernel stamping it during the write), at 100 Hz, and
    the virtual device's SYN_REPORT for it, as an evdev reader gets it (the kernel's stamp
    when motiond wrote it), both on CLOCK_MONOTONIC. Fails only if a frame never shows."""
    count = 300
    with Panel(DRAG) as panel, Daemon([], name="latency", config=write_config("latency.toml", VIRTUAL_CONFIG)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        wait_until(f"motiond to grab {panel.node}",
                   lambda: any(d["node"] == panel.node and d["grabbed"] for d in client.request("devices")["devices"]))
        latencies, earliest, write_times = measure_latency(panel.node, node, count)
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    where = "TCG (no KVM: QEMU emulates the CPU), debug build" if emulated() else "KVM"
    # The panel's stamp is taken within the write: the latency is at most the virtual stamp
    # less the time before the write, and at least that less the time after it.
    most = [value * 1000 for value in latencies]
    least = [value * 1000 for value in earliest]
    # Not a performance bound (an emulated CPU runs a debug build here): a frame shown only
    # at some later frame, or on a timer, would be far slower than this.
    check(percentile(least, 0.5) < LATENCY_LIMIT, f"half the frames took more than {percentile(least, 0.5):.1f} ms to show,"
          f" not within {LATENCY_LIMIT} ms")
    return (f"{len(latencies)} frames at 100 Hz, panel's kernel stamp to the virtual device's, in the guest under {where}:"
            f" p50 {percentile(most, 0.5):.2f} ms, p99 {percentile(most, 0.99):.2f} ms, max {max(most):.2f} ms, min {min(most):.2f} ms"
            f" (from before each write; from after it: p50 {percentile(least, 0.5):.2f} ms, p99 {percentile(least, 0.99):.2f} ms;"
            f" a write took {percentile(write_times, 0.5) * 1000:.2f} ms at p50, {max(write_times) * 1000:.2f} ms at most)")


