"""The device family: what only a real kernel's evdev and udev show of a panel. Hotplug
through udev, the kernel's buffer overflowing into SYN_DROPPED, a real EVIOCGRAB, and the
node's owner and mode as the package's users and udev rules make them.
"""
import grp
import os
import signal

from labkit import (DRAG, MOTIONCTL, REPOSITORY, SCRATCH, SHIPPED_CONFIG, STEP, Client, Daemon, Panel, check,
                    device_event, frame_contents, json_lines, pending_events, read_nodes, run, sigstopped, state_event,
                    wait_for_frames, wait_until, write_config)



def first_frames(path, count):
    """The recording's events up to the end of its `count`th frame, in SCRATCH."""
    kept, reports = [], 0
    with open(path) as source:
        for line in source:
            if reports == count:
                break
            if line.startswith("E:"):
                kept.append(line)
                if [int(field, 16) for field in line.split()[2:4]] == [0, 0]:  # SYN_REPORT
                    reports += 1
    held = os.path.join(SCRATCH, f"first-{count}.events")
    with open(held, "w") as out:
        out.writelines(kept)
    return held


def hotplug():
    """A panel plugged in after motiond started is taken up; unplugged mid-drag, the drag ends
    cancelled and no finger stays down; plugged in again, it is read again."""
    with Daemon([], name="hotplug") as daemon:
        client = Client(daemon.socket)
        client.request("subscribe", streams=["*"])
        check(read_nodes(client) == [], f"motiond reads {read_nodes(client)} before any panel exists")

        panel = Panel(DRAG)
        client.next_event(device_event("added", panel.node), what=f"the device {panel.node} added")
        panel.play(first_frames(DRAG, 8))
        client.next_event(state_event("card.drag", "began"), what="card.drag began")
        contacts = client.request("get", stream="screen.contacts")["value"]
        check(len(contacts) == 1, f"one finger down before the unplug, not {contacts}; screen.contacts said {[e for e in client.events if e.get('stream') == 'screen.contacts'][-3:]}")

        panel.remove()
        client.next_event(state_event("card.drag", "cancelled"), what="card.drag cancelled at the unplug")
        if not any(device_event("removed", panel.node)(event) for event in client.events):
            client.next_event(device_event("removed", panel.node), what=f"the device {panel.node} removed")
        contacts = client.request("get", stream="screen.contacts")["value"]
        check(contacts == [], f"fingers still down after the unplug: {contacts}")
        check(read_nodes(client) == [], f"motiond still reads {read_nodes(client)}")

        again = Panel(DRAG)
        client.next_event(device_event("added", again.node), what=f"the device {again.node} added again")
        again.play()
        client.next_event(state_event("card.drag", "began"), what="card.drag began on the panel plugged in again")
        client.next_event(state_event("card.drag", "ended"), what="card.drag ended")
        check(client.request("get", stream="screen.contacts")["value"] == [], "no finger down after the drag")
        again.remove()
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return f"unplugged {panel.node}, plugged in again as {again.node}"


# --- SYN_DROPPED ----------------------------------------------------------------------------

def flood(path, frames):
    """A finger landing, then `frames` moves, its lift and `frames` frames of nothing, all at
    one time (the player writes them as fast as it can): many more events than the kernel's
    evdev buffer holds."""
    lines = ["E: 0.000000 0003 0039 77\n", "E: 0.000000 0003 0035 300\n", "E: 0.000000 0003 0036 300\n",
             "E: 0.000000 0001 014a 1\n", "E: 0.000000 0003 0000 300\n", "E: 0.000000 0003 0001 300\n",
             "E: 0.000000 0000 0000 0\n"]
    moves = []
    for step in range(frames):
        x = 300 + step % 400
        moves += [f"E: 0.000000 0003 0035 {x}\n", f"E: 0.000000 0003 0000 {x}\n", "E: 0.000000 0000 0000 0\n"]
    lift = ["E: 0.000000 0003 0039 -1\n", "E: 0.000000 0001 014a 0\n", "E: 0.000000 0000 0000 0\n"]
    # After the lift, as many frames again that touch nothing (an empty slot's axis): the
    # kernel throws the lift away with them when the buffer overflows again, so only
    # libevdev's resync (slot 0's tracking id now -1) can tell motiond the finger went.
    quiet = ["E: 0.000000 0003 002f 1\n"]
    for step in range(frames):
        quiet += [f"E: 0.000000 0003 0035 {step % 2}\n", "E: 0.000000 0000 0000 0\n"]
    landing = os.path.join(SCRATCH, "landing.events")
    rest = os.path.join(SCRATCH, "flood.events")
    with open(landing, "w") as out:
        out.writelines(lines)
    with open(rest, "w") as out:
        out.writelines(moves + lift + quiet)
    return landing, rest


def dropped_events():
    """motiond stopped while the panel floods the kernel's buffer: when it goes on, libevdev
    resyncs, the finger the panel lifted is not left down, the drop is counted, input goes on."""
    landing, rest = flood(DRAG, 4000)
    with Panel(DRAG) as panel, Daemon([], name="dropped") as daemon:
        client = Client(daemon.socket)
        client.request("subscribe", streams=["*"])
        wait_until(f"motiond to read {panel.node}", lambda: panel.node in read_nodes(client))
        panel.play(landing)
        wait_until("the finger down", lambda: len(client.request("get", stream="screen.contacts")["value"]) == 1)

        daemon.signal(signal.SIGSTOP)
        wait_until("motiond stopped", lambda: sigstopped(daemon))
        panel.play(rest)
        daemon.signal(signal.SIGCONT)

        stats = wait_until("the drop counted in stats", lambda: (lambda s: s if s["dropped_events"] >= 1 else None)(client.request("stats")))
        wait_until("no finger down after the resync",
                   lambda: (lambda c: c == [] and [True])(client.request("get", stream="screen.contacts")["value"]))
        device = next(d for d in client.request("devices")["devices"] if d["node"] == panel.node)
        check(device["dropped"] >= 1, f"devices says {device['dropped']} drops")
        metrics = client.request("metrics")["text"]
        counted = [line for line in metrics.splitlines()
                   if line.startswith("motiond_input_events_dropped_total") and panel.node in line]
        check(counted and float(counted[0].rsplit(" ", 1)[1]) >= 1, f"the metric: {counted}")

        # Input goes on: a whole drag after the flood is a drag.
        client.events.clear()
        panel.play(DRAG)
        client.next_event(state_event("card.drag", "ended"), what="card.drag ended after the resync")
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return f"{stats['dropped_events']} drop(s) counted; {counted[0]}"


# --- The grab -------------------------------------------------------------------------------

GRAB_CONFIG = """
[screen]
width = 1920
height = 1080

[[device]]
name = "*"
grab = true

[[element]]
id = "card"
center = [960, 540]
size = [1920, 1080]

[element.draggable]
"""


def grab():
    """With grab = true nobody else reads the panel while motiond runs; after a SIGKILL of
    motiond the kernel releases the grab with its descriptor, and others read it again."""
    config = os.path.join(SCRATCH, "grab.toml")
    with open(config, "w") as out:
        out.write(GRAB_CONFIG)
    frames = len(frame_contents(json_lines(run([MOTIONCTL, "frames", DRAG, "--json"]), "the replay")))
    with Panel(DRAG) as panel, Daemon([], name="grab", config=config) as daemon:
        client = Client(daemon.socket)
        device = wait_until(f"motiond to read {panel.node}",
                            lambda: next((d for d in client.request("devices")["devices"] if d["node"] == panel.node), None))
        check(device["grabbed"] is True, f"devices says grabbed = {device['grabbed']}")

        # Another reader, as a compositor's libinput is: the node opened, events read as they
        # come. (evemu-record refuses a grabbed node outright, so it cannot be this reader.)
        other = os.open(panel.node, os.O_RDONLY | os.O_NONBLOCK)
        try:
            panel.play()
            wait_for_frames(client, 0, frames)
            # The kernel hands an event to every reader at once: what motiond has, the other
            # reader would have by now, unless the grab kept it away.
            seen = pending_events(other)
            check(seen == 0, f"another reader saw {seen} events while motiond held the grab")

            daemon.process.kill()
            daemon.process.wait(timeout=STEP)
            panel.play()
            events = wait_until("the other reader to see touches after motiond was killed", lambda: pending_events(other))
        finally:
            os.close(other)
    return f"another reader saw nothing while grabbed, {events} events after the SIGKILL"


# --- Permissions as shipped -----------------------------------------------------------------

def permissions():
    """As the package ships it: motiond as its own user in the input group (motiond.sysusers)
    reads a panel udev made group input; a user outside that group cannot, and is told why."""
    result = run(["systemd-sysusers", os.path.join(REPOSITORY, "systemd", "motiond.sysusers")])
    check(result.returncode == 0, f"systemd-sysusers: {result.stderr}")
    groups = run(["id", "-nG", "motiond"]).stdout.split()
    check("input" in groups, f"the motiond user's groups: {groups}")
    with Panel(DRAG) as panel:
        status = os.stat(panel.node)
        check(grp.getgrgid(status.st_gid).gr_name == "input" and status.st_mode & 0o777 == 0o660,
              f"{panel.node} is {oct(status.st_mode & 0o777)} group {grp.getgrgid(status.st_gid).gr_name}, not 0660 input")

        # The checkout may sit in a private folder (a home of mode 0700) that motiond, run as
        # another user, cannot reach: it reads a copy of the shipped configuration here.
        shipped = write_config("permissions.toml", open(SHIPPED_CONFIG).read())
        os.chmod(shipped, 0o644)
        as_motiond = ["setpriv", "--reuid=motiond", "--regid=motiond", "--init-groups"]
        with Daemon([], name="as-motiond", user=as_motiond, config=shipped) as daemon:
            client = Client(daemon.socket)
            client.request("subscribe", streams=["card.drag"])
            wait_until(f"motiond (user motiond) to read {panel.node}", lambda: panel.node in read_nodes(client))
            panel.play()
            client.next_event(state_event("card.drag", "ended"), what="card.drag ended")
            check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")

        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        with Daemon([], name="as-nobody", user=as_nobody, config=shipped) as daemon:
            client = Client(daemon.socket)
            devices = client.request("devices")
            check(devices["devices"] == [], f"nobody reads {devices['devices']}")
            skipped = [entry for entry in devices["skipped"] if entry["node"] == panel.node]
            check(skipped and "permission denied" in skipped[0]["reason"], f"skipped: {devices['skipped']}")
            health = client.request("health")
            check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return f"user motiond ({' '.join(groups)}) reads it; nobody is refused: {skipped[0]}; health {health.get('status')}: {health.get('problems')}"


# --- The virtual touchscreen (issue 46) -------------------------------------------------------
#
