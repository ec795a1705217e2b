#!/usr/bin/python3
"""The phantom filters on a live touchscreen: the touches no finger made, as libevdev reads
them from a fake panel, never reach a client; their counts, the phantom learned and the
storm's quiet reach `stats`, `devices` and health.

Run under umockdev-wrapper, with Debian's python3 (python3-gi, gir1.2-umockdev-1.0):

    umockdev-wrapper /usr/bin/python3 live_phantoms.py --motiond M --motionctl C --work DIR

motiond reads the made-up panel of fake_panel.py, named as an optical frame (so that its
ghosts are filtered), 100 units/mm. A client subscribes to screen.contacts. In turn:
- a phantom taps one place every 1.2 s, one frame each, five times: the first three are
  reported (only then is it known), the last two never (phantom_taps 2), and `devices` shows
  its place and period;
- three contacts land together on the panel's left edge and lift a frame later (bursts 3);
- two fingers down, and two contacts landing at the other corners of their rectangle
  (ghosts 2);
- 80 one-frame contacts in 0.4 s, a storm: health names the panel while it is quiet, and
  stops 0.5 s after the flood stops.
Every event is stamped when it is meant to have happened, written once that time has come:
periods are the stamps', whatever the machine's load. Each wait has a deadline. The client's
values say how many contacts each part published (motiond's own ids, new for every
contact), and the most at once. Prints its steps as JSON lines; exits 0 on
success, else says why with motiond's log. Started by DisplayCommandTests.swift.
"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_panel import NODE, LiveDaemon, Panel, PanelFailure, live_arguments  # noqa: E402


class Failure(Exception):
    pass


def step(name, **fields):
    print(json.dumps({"step": name, **fields}), flush=True)


class Subscriber:
    """A protocol client following screen.contacts: every contact id it ever published."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.connect(path)
        self.socket.settimeout(0.05)
        self.buffer = b""
        self.ids = set()
        self.most = 0
        self.since = set()
        self.socket.sendall(b'{"id":1,"op":"subscribe","streams":["screen.contacts"]}\n')

    def drain(self):
        try:
            while True:
                chunk = self.socket.recv(65536)
                if not chunk:
                    raise Failure("motiond closed the connection")
                self.buffer += chunk
        except socket.timeout:
            pass
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if message.get("stream") == "screen.contacts":
                contacts = message.get("value") or []
                self.ids.update(contact["id"] for contact in contacts)
                self.most = max(self.most, len(contacts))

    def part(self):
        """The contacts published since the last call, and the most at once; begins a new part."""
        self.drain()
        new, most = self.ids - self.since, self.most
        self.since, self.most = set(self.ids), 0
        return len(new), most


def main():
    args = live_arguments()
    daemon = None
    try:
        panel = Panel(args.work, args.motionctl, name=b"motiond fake Optical Touch Panel")
        # The storm's quiet lasts 3 s, not the default 0.5: health names a storm only until its
        # quiet ends, and a poll through motionctl on a loaded machine came after 0.5 s had gone.
        daemon = LiveDaemon(args.motiond, args.motionctl, args.work,
                            "[screen]\nwidth = 1920\nheight = 1080\n[[device]]\nname = \"*\"\nstorm_quiet = 3\n")
        path = daemon.path

        def ctl(*arguments):
            run = subprocess.run([args.motionctl, *arguments, "--json", "--socket", path], capture_output=True, text=True, timeout=30)
            if run.returncode not in (0, 4):  # 4: motiond runs, unhealthy
                raise Failure(f"motionctl {' '.join(arguments)}: {run.stderr}")
            return [json.loads(line) for line in run.stdout.splitlines() if line.strip()]

        def until(what, predicate, deadline=30):
            end = time.monotonic() + deadline
            while time.monotonic() < end:
                client.drain()
                value = predicate()
                if value:
                    return value
                time.sleep(0.05)
            raise Failure(f"{what} did not happen within {deadline} s")

        def filtered():
            return ctl("stats")[0]["filtered"].get(NODE) or {}

        def settled(read, quiet=0.5):
            """A predicate for `until`: what `read` gives, once it gave the same for `quiet` s."""
            seen = {"value": None, "since": 0.0}

            def check():
                value, now = read(), time.monotonic()
                if value != seen["value"]:
                    seen["value"], seen["since"] = value, now
                    return None
                return value if now - seen["since"] >= quiet else None
            return check

        def until_time(stamp):
            """Returns once the monotonic clock reads `stamp` (each sleep bounded, and never
            negative: the time can pass `stamp` between looking at the clock and sleeping)."""
            while (left := stamp - time.monotonic()) > 0:
                time.sleep(min(0.05, left))

        def at(stamp, events):
            """`events` (type, code, value), a frame stamped `stamp` (monotonic), once it has come."""
            until_time(stamp)
            panel._send([(stamp, event) for event in events + [(0, 0, 0)]])

        daemon.wait_for_panel()
        client = Subscriber(path)
        next_id = [100]

        def new_id():
            next_id[0] += 1
            return next_id[0]

        # A phantom: one frame down at (16000, 16000), lifted 8 ms later, every 1.2 s. Both
        # frames of a tap in one write, once the lift's time has come: written apart, a
        # loaded machine could write the lift later than its stamp by more than a phantom's
        # tap lasts, and motiond, waiting on its own clock, rightly took the tap for a finger's.
        start = time.monotonic() + 0.2
        for tap in range(5):
            stamp = start + tap * 1.2
            down = [(3, 0x2F, 0), (3, 0x39, new_id()), (3, 0x35, 16000), (3, 0x36, 16000), (1, 0x14A, 1), (0, 0, 0)]
            lift = [(3, 0x39, -1), (1, 0x14A, 0), (0, 0, 0)]
            until_time(stamp + 0.008)
            panel._send([(stamp, event) for event in down] + [(stamp + 0.008, event) for event in lift])
        counts = until("the phantom's taps counted", lambda: filtered().get("phantom_taps") == 2 and filtered())
        device = next(device for device in ctl("devices") if device.get("node") == NODE)
        published, most = client.part()
        text = subprocess.run([args.motionctl, "devices", "--socket", path], capture_output=True, text=True, timeout=30).stdout
        step("phantom", filtered=counts, learned=device.get("phantom_taps"), published=published,
             said=[line.strip() for line in text.splitlines() if "phantom" in line])

        # A burst on the left edge.
        stamp = time.monotonic() + 0.05
        burst = [(3, 0x2F, slot) for slot in range(3)]
        frame = []
        for slot, y in enumerate([4000, 15000, 28000]):
            frame += [(3, 0x2F, slot), (3, 0x39, new_id()), (3, 0x35, 0), (3, 0x36, y)]
        at(stamp, frame + [(1, 0x14A, 1)])
        at(stamp + 0.01, [event for slot in burst for event in (slot, (3, 0x39, -1))] + [(1, 0x14A, 0)])
        counts = until("the burst counted", lambda: filtered().get("bursts") == 3 and filtered())
        published, most = client.part()
        step("burst", filtered=counts, published=published)

        # Two fingers, then two contacts at the other corners of their rectangle.
        stamp = time.monotonic() + 0.05
        fingers, ghosts = [new_id(), new_id()], [new_id(), new_id()]
        at(stamp, [(3, 0x2F, 0), (3, 0x39, fingers[0]), (3, 0x35, 8000), (3, 0x36, 8000),
                   (3, 0x2F, 1), (3, 0x39, fingers[1]), (3, 0x35, 24000), (3, 0x36, 20000), (1, 0x14A, 1)])
        at(stamp + 0.01, [(3, 0x2F, 2), (3, 0x39, ghosts[0]), (3, 0x35, 8000), (3, 0x36, 20000),
                          (3, 0x2F, 3), (3, 0x39, ghosts[1]), (3, 0x35, 24000), (3, 0x36, 8000)])
        for frame in range(1, 6):
            at(stamp + 0.01 + frame * 0.01, [(3, 0x2F, 0), (3, 0x35, 8000 + frame * 50), (3, 0x2F, 2), (3, 0x35, 8000 + frame * 50)])
        at(stamp + 0.1, [event for slot in range(4) for event in ((3, 0x2F, slot), (3, 0x39, -1))] + [(1, 0x14A, 0)])
        counts = until("the ghosts counted", lambda: filtered().get("ghosts") == 2 and filtered())
        until("the fingers published", lambda: len(client.ids - client.since) >= 2)
        published, most = client.part()
        step("ghosts", filtered=counts, published=published, most_at_once=most)

        # A storm: 80 one-frame contacts in 0.4 s, each far from the one before (a flood lands
        # at random places; a person hammering taps one place), over a second after
        # the last landing, so that the storm's second holds its own alone.
        stamp = time.monotonic() + 1.1
        for n in range(80):
            at(stamp + n * 0.005, [(3, 0x2F, 0), (3, 0x39, new_id()), (3, 0x35, 1000 + n * 7919 % 30000), (3, 0x36, 1000 + n * 3571 % 30000), (1, 0x14A, 1)])
            at(stamp + n * 0.005 + 0.0025, [(3, 0x39, -1), (1, 0x14A, 0)])
        # The storm and its problem from one `status`: on a loaded machine a second one may come
        # after the quiet ended.
        def naming_the_storm():
            health = ctl("status")[0].get("health") or {}
            return health if health.get("storms") else None
        named = until("health to name the storm", naming_the_storm)
        storm = named["storms"]
        # Health names the storm from its 21st contact; the flood's last ones may still be on
        # their way to motiond. The count is read once it no longer grows.
        counts = until("the storm's contacts counted", settled(filtered))
        quiet_problem = [problem for problem in named["problems"] if "touch storm" in problem]
        until("the storm's quiet to end", lambda: not ctl("status")[0]["health"]["storms"], deadline=20)
        published, most = client.part()
        health = ctl("status")[0]["health"]
        step("storm", storms=storm, problems=quiet_problem, filtered=counts, published=published,
             healthy_after=health["status"], problems_after=health["problems"])
    except (Failure, PanelFailure, OSError, ValueError, KeyError, StopIteration, subprocess.TimeoutExpired) as error:
        said = daemon.said() if daemon else "(not started)"
        print(f"live_phantoms: {type(error).__name__}: {error}\n--- motiond said:\n{said}", file=sys.stderr)
        return 1
    finally:
        if daemon:
            daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
