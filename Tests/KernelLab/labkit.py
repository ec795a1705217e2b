"""What the kernel lab's tests are made of: a real panel, motiond, a client, with deadlines.

A `Panel` is a uinput device made by evemu-device from a recording's description, so the
guest's kernel gives it an event node and udevd announces it, as a USB or I2C panel would be.
A `Daemon` is motiond (or motionctl) run as a kiosk runs it. A `Client` speaks the socket
protocol (docs/protocol.md). Every wait here has a deadline and raises `LabFailure` saying
what it waited for, so a hung daemon fails its test with its log instead of hanging the guest.
"""
import fcntl
import json
import os
import select
import signal
import socket
import struct
import subprocess
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("MOTIOND_BIN_DIR", os.path.join(REPOSITORY, ".build", "debug"))
MOTIOND = os.path.join(BIN, "motiond")
MOTIONCTL = os.path.join(BIN, "motionctl")
RECORDINGS = os.path.join(REPOSITORY, "Tests", "Fixtures", "recordings")
# A one-finger drag on the Atmel maXTouch (800 × 480 units): what a test plays when any touch will do.
DRAG = os.path.join(RECORDINGS, "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
# The configuration motiond ships with: the elements a kiosk would start from.
SHIPPED_CONFIG = os.path.join(REPOSITORY, "config", "motiond.toml")
# Sockets cannot be bound on the host's shared folders: everything lives in the guest's /tmp.
SCRATCH = tempfile.mkdtemp(prefix="motiond-lab-")

# Where a run keeps what its tests write, beside the results (lab.py sets it to --out).
OUT = None

# Far longer than any step takes in a guest without KVM on a busy machine; a step that takes
# this long is hung.
STEP = 60

# Every process a test started, so that whatever a failed test left running is killed before
# the next test begins (lab.py calls `kill_leftovers`).
LIVE = []


def kill_leftovers():
    while LIVE:
        process = LIVE.pop()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=STEP)
    settle_udev()


def start(arguments, **kwargs):
    """Starts a process that `kill_leftovers` ends if the test does not."""
    process = subprocess.Popen(arguments, **kwargs)
    LIVE.append(process)
    return process


class LabFailure(AssertionError):
    """A check that failed, or a wait that ran past its deadline."""


def note(text):
    """A step on the guest's console, with the guest's clock: where a slow or hung test was."""
    with open("/proc/uptime") as uptime:
        print(f"lab:   {uptime.read().split()[0]} {text}", flush=True)


def check(condition, message):
    if not condition:
        raise LabFailure(message)


def wait_until(what, predicate, seconds=STEP, every=0.05):
    """Polls `predicate` until it returns something true; fails saying `what` was awaited."""
    note(f"waiting for {what}")
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise LabFailure(f"waited {seconds} s for {what}")
        time.sleep(every)


def run(arguments, seconds=STEP, **kwargs):
    """Runs a command to its end within a deadline; its CompletedProcess (text)."""
    try:
        return subprocess.run(arguments, capture_output=True, text=True, timeout=seconds, **kwargs)
    except subprocess.TimeoutExpired as timeout:
        raise LabFailure(f"{' '.join(arguments)} did not finish within {seconds} s; it said:\n{timeout.stderr}") from None


def settle_udev():
    run(["udevadm", "settle", "--timeout", str(STEP)])


class Panel:
    """A touchscreen made real through uinput from an evemu description (`desc`), until removed.

    `events` is the evemu file `play` plays on it: the recording itself when it holds both.
    """

    def __init__(self, desc, events=None, settle=True):
        self.desc = desc
        self.events = events or desc
        note(f"evemu-device {os.path.basename(desc)}")
        self.process = start(["evemu-device", desc], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # evemu-device prints "NAME: /dev/input/eventN" once the device exists, and keeps
        # it (holding /dev/uinput open) until it is killed.
        ready, _, _ = select.select([self.process.stdout], [], [], STEP)
        check(ready, f"evemu-device {desc} made no device within {STEP} s")
        line = self.process.stdout.readline()
        check(": /dev/input/event" in line, f"evemu-device {desc} said {line!r}: {self.process.stderr.read() if self.process.poll() is not None else ''}")
        self.node = line.rsplit(": ", 1)[1].strip()
        # Until udevd has handled the node, its owner, mode and properties are the kernel's.
        # (A test that waits for motiond to say the device came needs no more than that.)
        self.settle = settle
        if settle:
            settle_udev()

    def udev(self):
        """udev's properties of the node, as udevadm prints them."""
        output = run(["udevadm", "info", "--query=property", "--name", self.node]).stdout
        return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)

    def play(self, events=None, seconds=STEP, meanwhile=None):
        """Writes the recording's events to the node at the recording's pace (`Player`),
        calling `meanwhile` (if given) at least every tenth of a second until it is done.
        Returns the `Player`, whose `as_played` file has the times the frames were written."""
        source = events or self.events
        note(f"play {self.node} < {os.path.basename(source)}")
        player = Player(self.node, source, description=self.desc)
        player.play(seconds, meanwhile)
        return player

    def remove(self):
        """Unplugs it: the kernel removes the node, udevd announces the removal."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=STEP)
        if self.settle:
            settle_udev()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.remove()


class Player:
    """Writes an evemu recording's frames to an event node, each when the recording says,
    counted from the start (a frame written late does not make the rest late, as evemu-play's
    sleeps between events did in an emulated CPU), one write a frame.

    Only so far: after a stall (the guest's one CPU taken by the host, the player's own
    `meanwhile` reading a backlog), the frames overdue are not all written at once. The kernel
    keeps eight frames for a reader (evdev's buffer), and a burst of half a second of frames
    before motiond gets the CPU back could make the kernel drop events for it (SYN_DROPPED),
    the guest's speed and not motiond's. So the player is never more than MAX_BEHIND behind: the
    rest of the recording keeps its pace from where the player is, later (`held_back`).
    Frames the recording gives one time (a flood) still go together.

    The kernel stamps a frame's events when its SYN_REPORT is written, inside that write: the
    stamp motiond reads. The player reads the node too (on the monotonic clock, as motiond),
    so it knows each frame's stamp exactly, unless the node is grabbed (then only the time
    before and after the write bound it: a write preempted in a loaded guest can be stamped
    tens of milliseconds from its middle, enough to make a finger's tap a flood's contact).
    `as_played` is the recording again with those stamps (or the middle of each write), so
    that what motiond made of the frames as it got them can be replayed when the pace slipped
    (a loaded machine)."""

    EVENT = struct.Struct("llHHi")  # struct input_event on x86-64
    MAX_BEHIND = 0.025  # seconds: four frames of a 150 Hz panel, two and a half of a 100 Hz one
    EVIOCSCLOCKID = 0x400445A0  # _IOW('E', 0xa0, int)

    def __init__(self, node, path, description=None):
        self.node, self.path = node, path
        self.frames = []  # (time, bytes, lines)
        time_of, lines = None, []
        with open(path) as source:
            for line in source:
                if not line.startswith("E:"):
                    continue
                fields = line.split()
                kind, code, value = int(fields[2], 16), int(fields[3], 16), int(fields[4])
                time_of = float(fields[1]) if time_of is None else time_of
                lines.append((kind, code, value))
                if (kind, code) == (0, 0):
                    self.frames.append((time_of, lines))
                    time_of, lines = None, []
        if lines:
            self.frames.append((time_of, lines))
        self.header = []
        if description:
            with open(description) as source:
                self.header = [line.rstrip("\n") for line in source if not line.startswith("E:")]
        self.written = []  # (before, after) of each frame's write
        self.stamps = []  # the kernel's stamp of each frame's SYN_REPORT, as read back; None where not read
        self.held_back = []  # how far behind the pace the player was each time it went on later instead

    def play(self, seconds=STEP, meanwhile=None):
        descriptor = os.open(self.node, os.O_WRONLY)
        reader = self.open_reader()
        try:
            first = self.frames[0][0] if self.frames else 0.0
            start = last_meanwhile = time.monotonic()
            deadline = start + seconds
            for at, events in self.frames:
                due = start + at - first
                behind = time.monotonic() - due
                if behind > self.MAX_BEHIND:
                    # The rest of the recording keeps its pace from here, that much later.
                    start += behind - self.MAX_BEHIND
                    due += behind - self.MAX_BEHIND
                    self.held_back.append(behind)
                while True:
                    now = time.monotonic()
                    check(now < deadline, f"playing {os.path.basename(self.path)} on {self.node} took over {seconds} s")
                    if meanwhile and now - last_meanwhile >= 0.1:
                        meanwhile()
                        last_meanwhile = now = time.monotonic()
                    if now >= due:
                        break
                    time.sleep(min(0.1, due - now))
                data = b"".join(self.EVENT.pack(0, 0, kind, code, value) for kind, code, value in events)
                before = time.monotonic()
                os.write(descriptor, data)
                self.written.append((before, time.monotonic()))
                self.stamps.append(self.read_stamp(reader))
        finally:
            os.close(descriptor)
            if reader is not None:
                os.close(reader)
        if meanwhile:
            meanwhile()

    def open_reader(self):
        """The node opened to read back what each write became, stamped on the monotonic clock;
        None if it cannot be."""
        try:
            reader = os.open(self.node, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            fcntl.ioctl(reader, self.EVIOCSCLOCKID, struct.pack("i", time.CLOCK_MONOTONIC))
        except OSError:
            os.close(reader)
            return None
        return reader

    def read_stamp(self, reader):
        """The stamp of the last SYN_REPORT the reader has (the frame just written: a write to
        an event node reaches its readers before it returns); None when it has none (the node
        is grabbed) or dropped events (its stamps are then not the frames')."""
        if reader is None:
            return None
        stamp, size = None, self.EVENT.size
        while True:
            try:
                data = os.read(reader, 64 * size)
            except BlockingIOError:
                return stamp
            except OSError:
                return None
            if not data:
                return stamp
            for offset in range(0, len(data) - size + 1, size):
                seconds, microseconds, kind, code, _ = self.EVENT.unpack_from(data, offset)
                if (kind, code) == (0, 3):  # SYN_DROPPED
                    return None
                if (kind, code) == (0, 0):
                    stamp = seconds + microseconds / 1e6

    def read_back(self):
        """How many of the frames written had their stamp read back from the kernel."""
        return sum(1 for stamp in self.stamps if stamp is not None)

    def behind(self):
        """How the player fell behind the pace, for a failure that may come of it."""
        if not self.held_back:
            return f"the player never fell {1000 * self.MAX_BEHIND:.0f} ms behind the pace"
        return (f"the player fell {1000 * self.MAX_BEHIND:.0f} ms behind the pace {len(self.held_back)} time(s),"
                f" {1000 * max(self.held_back):.0f} ms at most, and went on later")

    def slip(self):
        """How late the latest frame was written, against the recording's pace (seconds)."""
        if not self.written:
            return 0.0
        first, start = self.frames[0][0], self.written[0][0]
        return max(after - (start + at - first) for (at, _), (_, after) in zip(self.frames, self.written))

    def stretched(self):
        """The most the time between two frames the kernel stamped exceeded the recording's
        (seconds; the middle of each write where no stamp was read back): how long a stall
        of the player or of the guest held a touch still, as motiond saw it."""
        stamps = self.stamps + [None] * (len(self.written) - len(self.stamps))
        times = [read if read is not None else (before + after) / 2 for (before, after), read in zip(self.written, stamps)]
        recorded = [at for at, _ in self.frames[:len(times)]]
        return max((times[index] - times[index - 1] - (recorded[index] - recorded[index - 1]) for index in range(1, len(times))),
                   default=0.0)

    def as_played(self, path):
        """The recording with the times its frames were written (the kernel's stamps where read
        back, else the middle of each write); its path."""
        lines = list(self.header)
        stamps = self.stamps + [None] * (len(self.written) - len(self.stamps))
        for (_, events), (before, after), read in zip(self.frames, self.written, stamps):
            stamp = read if read is not None else (before + after) / 2
            lines += [f"E: {stamp:.6f} {kind:04x} {code:04x} {value}" for kind, code, value in events]
        with open(path, "w") as out:
            out.write("\n".join(lines) + "\n")
        return path


def emulated():
    """Whether the guest's CPU is QEMU's emulation (no KVM): its clock source says."""
    with open("/sys/devices/system/clocksource/clocksource0/available_clocksource") as source:
        return "kvm-clock" not in source.read()


def recording_files(path):
    """The (description, events) files of a recording: one .evemu file, or an .events file
    and the .desc named like it up to its last `__` (see Tests/Fixtures/recordings/README.md)."""
    if path.endswith(".events"):
        stem = os.path.basename(path).rsplit("__", 1)[0]
        return os.path.join(os.path.dirname(path), stem + ".desc"), path
    return path, path


class Daemon:
    """motiond, run with a notify socket like systemd's: started once it said READY=1."""

    def __init__(self, arguments, name="motiond", user=None, config=SHIPPED_CONFIG, wait_ready=True, tracked=True):
        self.socket = os.path.join(SCRATCH, f"{name}.sock")
        self.log_path = os.path.join(SCRATCH, f"{name}.log")
        notify_path = os.path.join(SCRATCH, f"{name}.notify")
        for path in (self.socket, notify_path):
            if os.path.exists(path):
                os.unlink(path)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(notify_path)
        os.chmod(notify_path, 0o777)  # motiond may run as another user
        command = [MOTIOND, "--socket", self.socket] + (["--config", config] if config else []) + arguments
        if user:
            command = user + ["--"] + command
        self.log = open(self.log_path, "w")
        self.process = (start if tracked else subprocess.Popen)(command, stdout=self.log, stderr=subprocess.STDOUT,
                                                                env=dict(os.environ, NOTIFY_SOCKET=notify_path))
        note(f"started {' '.join(command)}")
        if wait_ready:
            self.wait_for_notification("READY=1")

    def wait_for_notification(self, text):
        deadline = time.monotonic() + STEP
        while True:
            remaining = deadline - time.monotonic()
            if self.process.poll() is not None:
                raise LabFailure(f"motiond exited with status {self.process.returncode} before {text}:\n{self.log_text()}")
            if remaining <= 0:
                raise LabFailure(f"motiond did not notify {text} within {STEP} s:\n{self.log_text()}")
            ready, _, _ = select.select([self.notify], [], [], min(remaining, 0.5))
            if ready and text.encode() in self.notify.recv(4096):
                return

    def log_text(self):
        self.log.flush()
        with open(self.log_path, errors="replace") as log:
            return log.read()[-6000:]

    def signal(self, number):
        self.process.send_signal(number)

    def stop(self):
        """SIGTERM, as systemd stops it; its exit status."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=STEP)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STEP)
                raise LabFailure(f"motiond did not stop within {STEP} s of SIGTERM:\n{self.log_text()}")
        self.notify.close()
        return self.process.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=STEP)
        self.notify.close()


class Client:
    """A connection to motiond's socket: requests with replies, and every event kept in order."""

    def __init__(self, path, seconds=STEP):
        self.socket = wait_until(f"motiond's socket {path} to accept", lambda: self._connect(path), seconds)
        self.buffer = b""
        self.events = []
        self.next_id = 0
        self.hello = self.next_event(lambda event: event.get("event") == "hello")

    @staticmethod
    def _connect(path):
        try:
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(path)
            return connection
        except OSError:
            return None

    def _line(self, deadline):
        while b"\n" not in self.buffer:
            # A deadline already past still takes what has arrived (select with no wait).
            remaining = max(0, deadline - time.monotonic())
            ready, _, _ = select.select([self.socket], [], [], remaining)
            if not ready:
                return None
            chunk = self.socket.recv(65536)
            if not chunk:
                raise LabFailure("motiond closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def _read_until(self, predicate, seconds, what):
        """Reads lines until one matching `predicate`, keeping every event read on the way."""
        deadline = time.monotonic() + seconds
        while True:
            message = self._line(deadline)
            if message is None:
                raise LabFailure(f"waited {seconds} s for {what}; the last events were {self.events[-5:]}")
            if "event" in message:
                self.events.append(message)
            if predicate(message):
                return message

    def next_event(self, predicate, seconds=STEP, what="an event"):
        """Reads until an event matching `predicate`, keeping every event read on the way."""
        note(f"waiting for {what}")
        return self._read_until(lambda message: "event" in message and predicate(message), seconds, what)

    def request(self, op, seconds=STEP, **arguments):
        """Sends a request; its result, failing on an error reply."""
        self.next_id += 1
        number = self.next_id
        self.socket.sendall((json.dumps(dict(id=number, op=op, **arguments)) + "\n").encode())
        reply = self._read_until(lambda message: "event" not in message and message.get("id") == number,
                                 seconds, f"the reply to {op}")
        check(reply.get("ok"), f"{op} failed: {reply.get('error')}")
        return reply.get("result")

    def drain(self):
        """Keeps whatever events have arrived, waiting for none."""
        while True:
            message = self._line(time.monotonic())
            if message is None:
                return
            if "event" in message:
                self.events.append(message)

    def close(self):
        self.socket.close()


def sigstopped(daemon):
    """The kernel's word that motiond is stopped (state T), not merely that SIGSTOP was sent."""
    with open(f"/proc/{daemon.process.pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t")


def stop_process(process, sig=signal.SIGTERM):
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=STEP)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STEP)


def write_config(name, text):
    """A configuration file in SCRATCH (readable by every user motiond may run as)."""
    path = os.path.join(SCRATCH, name)
    with open(path, "w") as out:
        out.write(text)
    os.chmod(path, 0o644)
    return path


def json_lines(result, what):
    check(result.returncode == 0, f"{what} failed ({result.returncode}): {result.stderr}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def frame_contents(objects):
    """The frames among motionctl frames' JSON lines, without their times: what the fingers did."""
    keys = ("slot", "id", "phase", "x", "y", "device_x", "device_y", "pressure", "touch_major", "mm")
    return [[{key: contact.get(key) for key in keys} for contact in frame.get("contacts", [])]
            for frame in objects if frame.get("event") == "frame"]


def state_event(stream, state):
    return lambda event: event.get("event") == "state" and event.get("stream") == stream and event.get("state") == state


def device_event(action, node):
    return lambda event: event.get("event") == "device" and event.get("action") == action and event.get("node") == node


def read_nodes(client):
    return [device["node"] for device in client.request("devices")["devices"]]


def opened(process, node):
    """Whether a process holds `node` open: from then on the kernel queues events for it."""
    directory = f"/proc/{process.pid}/fd"
    try:
        return any(os.readlink(os.path.join(directory, fd)) == node for fd in os.listdir(directory))
    except OSError:
        return False


def pending_events(descriptor):
    """How many input events wait to be read on an open event node (reading them)."""
    count = 0
    while True:
        try:
            data = os.read(descriptor, Player.EVENT.size * 64)
        except BlockingIOError:
            return count
        count += len(data) // Player.EVENT.size


def taken_in(stats):
    """The frames motiond has taken in, by a `stats` reply: processed, or left out because it
    was behind (a busy machine; the newest positions are what count, docs/protocol.md, Slow
    clients)."""
    return stats["frames"] + stats.get("frames_coalesced", 0)


def processed(client):
    """The frames motiond has taken in so far (`taken_in`)."""
    return taken_in(client.request("stats"))


def another_reader_sees(panel, what):
    """Plays the panel's recording with another reader of its node open, as a compositor's
    libinput would read it; how many events that reader got (waiting for some)."""
    reader = os.open(panel.node, os.O_RDONLY | os.O_NONBLOCK)
    try:
        panel.play()
        return wait_until(what, lambda: pending_events(reader))
    finally:
        os.close(reader)


def wait_for_frames(client, before, count=None, stalled=30, most=4 * STEP, quiet=1.0, drops_before=None):
    """The one wait for motiond to take in a panel's frames: until it has taken `count` since
    `before` (or, with no count, when the filters decide how many, until the count stays for
    `quiet` seconds), for as long as it keeps taking them in. A guest behind on a busy host
    catches up, where a fixed wait gave up on it; a motiond that took none for `stalled`
    seconds, or took `most`, is left, and so is one that took none for `quiet` seconds after
    the kernel dropped events for it (more than `drops_before`: the count cannot come).
    Returns (frames taken, how the wait ended), for a failure's message; reads the client's
    events meanwhile (motiond drops a client that does not read)."""
    note(f"waiting for motiond to take in {count if count is not None else 'its'} frames")
    start = last_change = time.monotonic()
    last = None
    while True:
        client.drain()
        stats = client.request("stats")
        taken = taken_in(stats) - before
        now = time.monotonic()
        if count is not None and taken >= count:
            return taken, f"all {count} in {now - start:.1f} s"
        lost = drops_before is not None and stats["dropped_events"] > drops_before
        if (count is None or lost) and last == taken and now - last_change >= quiet:
            return taken, f"{taken}, none more for {quiet} s" + (" after the kernel dropped events" if lost else "")
        if now - last_change > stalled:
            return taken, f"stopped at {taken} for {stalled} s, {now - start:.1f} s after the recording ended"
        if now - start > most:
            return taken, f"{taken} after {most} s"
        if taken != last:
            last, last_change = taken, now
        time.sleep(0.1)


class Bench:
    """One motiond that a family's recordings are played to in turn, each on a panel of its
    own: starting it once, not once a recording, saves minutes in a guest without KVM. A
    family asks for `Bench.with_config`; a bench of another configuration is stopped first,
    since its motiond would read the new panels too and take the one CPU's time."""

    current = None

    @classmethod
    def with_config(cls, name, config, streams=(), warm_up=None):
        """The running bench if it has `config`, else a new one: motiond on `config`, a client
        subscribed to `streams`, and, where given, a recording played first and not compared
        (a motiond just started is slow for its first frames in an emulated CPU: its code is
        paged in as it first runs)."""
        if cls.current and cls.current.config_text == config:
            return cls.current
        cls.finish()
        cls.current = cls(name, config, streams, warm_up)
        return cls.current

    @classmethod
    def finish(cls):
        """Stops the bench (between families, after a failure, at the end of the run)."""
        bench, cls.current = cls.current, None
        if bench:
            bench.close()

    def __init__(self, name, config, streams, warm_up):
        self.config_text = config
        self.config = write_config(f"{name}.toml", config)
        self.daemon = Daemon([], name=name, config=self.config, tracked=False)
        self.client = Client(self.daemon.socket)
        self.closers = []
        if streams:
            self.client.request("subscribe", streams=list(streams))
        if warm_up:
            with Panel(warm_up) as panel:
                self.client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
                panel.play(meanwhile=self.client.drain)
            self.client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")

    def close(self):
        for closer in self.closers:
            closer()
        self.daemon.stop()
