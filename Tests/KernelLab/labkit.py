"""What the kernel lab's tests are made of: a real panel, motiond, a client, with deadlines.

A `Panel` is a uinput device made by evemu-device from a recording's description, so the
guest's kernel gives it an event node and udevd announces it, as a USB or I2C panel would be.
A `Daemon` is motiond (or motionctl) run as a kiosk runs it. A `Client` speaks the socket
protocol (docs/protocol.md). Every wait here has a deadline and raises `LabFailure` saying
what it waited for, so a hung daemon fails its test with its log instead of hanging the guest.
"""
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("MOTIOND_BIN_DIR", os.path.join(REPOSITORY, ".build", "debug"))
MOTIOND = os.path.join(BIN, "motiond")
MOTIONCTL = os.path.join(BIN, "motionctl")
RECORDINGS = os.path.join(REPOSITORY, "Tests", "Fixtures", "recordings")
# The configuration motiond ships with: the elements a kiosk would start from.
SHIPPED_CONFIG = os.path.join(REPOSITORY, "config", "motiond.toml")
# Sockets cannot be bound on the host's shared folders: everything lives in the guest's /tmp.
SCRATCH = tempfile.mkdtemp(prefix="motiond-lab-")

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
        """Writes the recording's events to the device, at the recording's pace, calling
        `meanwhile` (if given) every tenth of a second until it is done."""
        note(f"evemu-play {self.node} < {os.path.basename(events or self.events)}")
        with open(events or self.events) as source:
            player = start(["evemu-play", self.node], stdin=source, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + seconds
        while player.poll() is None:
            check(time.monotonic() < deadline, f"evemu-play {self.node} did not finish within {seconds} s")
            if meanwhile:
                meanwhile()
            try:
                player.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                pass
        check(player.returncode == 0, f"evemu-play {self.node} failed: {player.stderr.read()}")

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
