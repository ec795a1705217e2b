"""The kernel lab's tests: motiond against a real kernel's evdev, uinput and udev.

Each test is what a kiosk would see, checked as a client sees it (the socket protocol,
docs/protocol.md). The recordings are the repository's own (Tests/Fixtures/recordings,
data/recordings), made real devices with evemu-device and played with evemu-play.
"""
import errno
import fcntl
import functools
import glob
import json
import math
import os
import random
import re
import select
import shutil
import signal
import struct
import subprocess
import time

from labkit import (MOTIONCTL, RECORDINGS, REPOSITORY, SCRATCH, SHIPPED_CONFIG, STEP, Client, Daemon,
                    LabFailure, Panel, check, kill_leftovers, note, recording_files, run, settle_udev, sigstopped, start,
                    stop_process, wait_until)
import faults

DRAG = os.path.join(RECORDINGS, "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")

# How far a final element value may be from the replay's. Positions and angles come from the
# fingers' positions alone, which the kernel passes on exactly; but a toss's velocity comes from
# the events' times, which the kernel stamps when evemu-play writes them (not the recording's
# times), so a spring may land a little elsewhere. A toss that picks another snap point is
# hundreds of pixels off, far beyond this.
POSITION_TOLERANCE = 2.0    # pixels
NUMBER_TOLERANCE = 0.01     # radians, scale


def prepare():
    """Once per guest: the tests may run as other users, who need the scratch folder."""
    os.chmod(SCRATCH, 0o1777)


def clean_up():
    kill_leftovers()


# --- Recordings: the same fingers, gestures and final values as a replay -------------------

def bundled_recordings():
    """Every bundled recording a uinput device can play: the evemu files, and the .events
    files whose device description is beside them (libinput's YAML cannot be played)."""
    paths = sorted(glob.glob(os.path.join(RECORDINGS, "**", "*.evemu"), recursive=True))
    paths += sorted(glob.glob(os.path.join(REPOSITORY, "data", "recordings", "*.evemu")))
    for events in sorted(glob.glob(os.path.join(RECORDINGS, "**", "*.events"), recursive=True)):
        if os.path.exists(recording_files(events)[0]):
            paths.append(events)
    return paths


def prepare_recording(path, directory, stretch=1):
    """The recording as the lab plays it, in `directory`: one evemu file (an .events file
    joined to its .desc), with evemu's version line, and every axis's fuzz 0.

    A recording is what evdev gave, which the kernel's input core had already smoothed with
    the panel's fuzz (values within it of the last are held or averaged). Played into a
    uinput device with that fuzz, the kernel would smooth it a second time, and its smoothing
    is not idempotent: the fingers would not be the recorded ones. With fuzz 0 the kernel
    passes every value on as it is; the replay is of this same file, so both see fuzz 0.

    With `stretch`, every event's time is multiplied by it: the recording played slower, for
    a guest too slow to read it at its own pace (see `recording_test`)."""
    description, events = recording_files(path)
    text = "".join(open(part).read().rstrip("\n") + "\n" for part in dict.fromkeys([description, events]))
    header, recorded = [], []
    for line in text.splitlines():
        if line.startswith("# EVEMU"):
            continue  # written anew below, for the format written here
        if line.startswith("A:"):
            fields = line.split()
            if len(fields) >= 5:
                fields[4] = "0"  # A: code min max fuzz flat [resolution]
            if len(fields) == 6:
                fields.append("0")  # evemu before 1.2 wrote no resolution
            header.append(" ".join(fields))
        elif line.startswith("E:"):
            recorded.append(line)
        else:
            header.append(line)
    axes = {int(line.split()[1], 16) for line in header if line.startswith("A:")}
    lines = ["# EVEMU 1.3"] + header
    for line in as_the_kernel_passes(recorded, axes):
        if stretch != 1:
            fields = line.split(None, 2)
            line = f"E: {float(fields[1]) * stretch:.6f} {fields[2]}"
        lines.append(line)
    prepared = os.path.join(directory, os.path.relpath(path, REPOSITORY).replace("/", "__") + (f".x{stretch}" if stretch != 1 else "") + ".evemu")
    with open(prepared, "w") as out:
        out.write("\n".join(lines) + "\n")
    return prepared


def as_the_kernel_passes(events, axes):
    """The evemu event lines the kernel's input core passes on when they are written to a
    device (drivers/input/input.c): a value of an axis the device does not have is dropped,
    and so is a value equal to the one the axis, the slot's axis or the key already has, ABS_MT_SLOT goes out only before a value of another slot, and
    a SYN_REPORT with nothing before it is no frame. A recording made from evdev already is
    so, but not one made another way (an old evemu, a generator, a bug report's editing);
    played into a uinput device it loses those events, where a replay would keep them. On a
    panel without slots (protocol A) multitouch values pass unfiltered, as in the kernel."""
    slotted = 0x2f in axes
    values, keys = {}, {}
    slot, sent_slot, pending, passed = 0, 0, [], []
    for line in events:
        fields = line.split()
        kind, code, value = int(fields[2], 16), int(fields[3], 16), int(fields[4])
        if kind == 3 and code == 0x2f:  # ABS_MT_SLOT
            slot = value
            continue
        if kind == 3 and code not in axes:
            continue
        if kind == 3:
            multitouch = 0x30 <= code <= 0x3d
            if not (multitouch and not slotted):
                key = (slot, code) if multitouch else (None, code)
                if values.get(key, -1 if code == 0x39 else 0) == value:  # a free slot's tracking id is -1
                    continue
                values[key] = value
            if multitouch and slotted and slot != sent_slot:
                sent_slot = slot
                pending.append(f"E: {fields[1]} 0003 002f {slot}")
        elif kind == 1:
            if keys.get(code, 0) == (value != 0) and value != 2:
                continue
            keys[code] = value != 0
        elif kind == 0 and code == 0:  # SYN_REPORT
            if pending:
                passed += pending + [line]
                pending = []
            continue
        pending.append(line)
    return passed


def json_lines(result, what):
    check(result.returncode == 0, f"{what} failed ({result.returncode}): {result.stderr}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def frame_contents(objects):
    """The frames among motionctl frames' JSON lines, without their times: what the fingers did."""
    keys = ("slot", "id", "phase", "x", "y", "device_x", "device_y", "pressure", "touch_major", "mm")
    return [[{key: contact.get(key) for key in keys} for contact in frame.get("contacts", [])]
            for frame in objects if frame.get("event") == "frame"]


def values_differ(live, replayed):
    """None if two published values are equal within the tolerances, else why not."""
    if isinstance(replayed, dict) and isinstance(live, dict) and set(replayed) == set(live) and {"x", "y"} <= set(replayed):
        distance = max(abs(live[key] - replayed[key]) for key in replayed)
        return None if distance <= POSITION_TOLERANCE else f"{distance:.3f} px apart"
    if isinstance(replayed, float) or isinstance(live, float):
        if isinstance(replayed, (int, float)) and isinstance(live, (int, float)) and abs(live - replayed) <= NUMBER_TOLERANCE:
            return None
        return "differ"
    return None if live == replayed else "differ"


def replay(recording):
    """What motionctl's replay of a (prepared) recording gives: the frames as the device sent
    them (`--raw`, before the contact filters, some of which look at the events' times) and
    every published value and gesture event of the shipped configuration's scene
    (`motionctl simulate`, motiond's engine, filters and all)."""
    frames = frame_contents(json_lines(run([MOTIONCTL, "frames", recording, "--raw", "--json"]), "the replay"))
    return {"recording": recording, "frames": frames, "simulated": simulate(recording)}


def write_expectations(directory):
    """The recordings prepared and replayed before the guest boots (on the host the replays
    take a fraction of the time), for `expectation` and `virtual_expectation` to read in the
    guest."""
    os.makedirs(directory, exist_ok=True)
    config = os.path.join(directory, "virtual.toml")
    with open(config, "w") as out:
        out.write(VIRTUAL_CONFIG)
    for path in bundled_recordings():
        for stretch in (1, SLOWER):
            prepared = prepare_recording(path, directory, stretch)
            with open(prepared + ".json", "w") as out:
                json.dump(replay(prepared), out)
    for path, stretch in virtual_plays():
        prepared = prepare_recording(path, directory, stretch)
        with open(prepared + ".virtual.json", "w") as out:
            json.dump(virtual_replay(prepared, config), out)


def expected_file(recording, suffix):
    """The host's expectation of a prepared recording (LAB_EXPECTED), or None."""
    directory = os.environ.get("LAB_EXPECTED")
    path = directory and os.path.join(directory, os.path.basename(recording) + suffix)
    if not path or not os.path.exists(path):
        return None
    with open(path) as source:
        return json.load(source)


@functools.lru_cache(maxsize=1)
def expectation(path, stretch=1):
    """The prepared recording, its frames and its simulation: from the host's run when there
    was one (LAB_EXPECTED), else made here."""
    recording = prepare_recording(path, SCRATCH, stretch)
    result = expected_file(recording, ".json") or replay(recording)
    return recording, result["frames"], result["simulated"]


class RecordingBench:
    """One motiond that every recording is played to in turn, each on a panel of its own:
    starting it once, not once a recording, saves minutes in a guest without KVM. Between
    recordings `reset_scene` puts the scene back as the configuration has it, as a fresh
    motiond would start."""

    def __init__(self):
        # Not started with labkit.start: it outlives each test (lab.py ends it at the end).
        self.daemon = Daemon([], name="recordings", tracked=False)
        self.client = Client(self.daemon.socket)
        # The elements' streams, not the screen's: following every finger for
        # screen.contacts is work the comparison does not need, in a slow guest.
        elements = [stream[:-len(".state")] for stream in self.client.hello["streams"]
                    if stream.endswith(".state") and not stream.startswith("screen.")]
        self.client.request("subscribe", streams=[element + ".*" for element in elements])
        # A motiond just started is slow in an emulated CPU for its first frames (its code is
        # paged in as it first runs) and would coalesce a short fling's frames: one drag,
        # not compared, first.
        with Panel(DRAG) as panel:
            self.client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
            panel.play()
        self.client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")

    def close(self):
        self.daemon.stop()


class KernelRecorder:
    """What the kernel handed a reader of the node, as `evemu-record` wrote it: a plain C
    reader that keeps up with any recording's pace in an emulated CPU (a debug
    `motionctl frames` printing JSON did not, at ten fingers). Its file is made frames
    afterwards by the same code as the replay's (`motionctl frames --raw`), so what is compared
    is what the kernel passed on, not how fast a reader was."""

    def __init__(self, node):
        self.node = node
        self.path = os.path.join(SCRATCH, "live.evemu")
        self.process = start(["evemu-record", node, self.path], stderr=subprocess.PIPE, text=True)

    def wait_until_open(self):
        """From the open on, the kernel queues every event for it."""
        wait_until(f"evemu-record to open {self.node}", lambda: self.process.poll() is not None or opened(self.process, self.node), every=0.05)
        if self.process.poll() is not None:
            raise LabFailure(f"evemu-record {self.node} exited: {self.process.stderr.read()}")

    def finish(self):
        """Once the device is gone: evemu-record reads to the end of what the kernel queued,
        then ends on the unplug, writing out what it buffered."""
        try:
            self.process.wait(timeout=STEP)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise LabFailure(f"evemu-record {self.node} did not end within {STEP} s of the unplug")
        with open(self.path) as source:
            events = [line.split() for line in source if line.startswith("E:")]
        # SYN_DROPPED: the kernel's buffer for this reader overflowed.
        self.drops = sum(1 for event in events if event[2:4] == ["0000", "0003"])
        return self.drops

    def events(self):
        """(type, code, value) of every event it read, in order, times left out."""
        return evemu_events(self.path)

    def frames(self):
        return frame_contents(json_lines(run([MOTIONCTL, "frames", self.path, "--raw", "--json"]), "the live recording"))


def evemu_events(path):
    """(type, code, value) of an evemu file's events, in order."""
    with open(path) as source:
        return [(int(fields[2], 16), int(fields[3], 16), int(fields[4]))
                for fields in (line.split() for line in source if line.startswith("E:"))]


BENCH = None
VIRTUAL_BENCH = None


def finish():
    global BENCH, VIRTUAL_BENCH, PHANTOM_BENCH
    try:
        if BENCH:
            try:
                BENCH.close()
            finally:
                BENCH = None
    finally:
        try:
            if VIRTUAL_BENCH:
                try:
                    VIRTUAL_BENCH.close()
                finally:
                    VIRTUAL_BENCH = None
        finally:
            if PHANTOM_BENCH:
                try:
                    PHANTOM_BENCH.close()
                finally:
                    PHANTOM_BENCH = None


def recording_test(path):
    """Plays the recording on a real device under motiond and `evemu-record`, and compares
    what they saw with motionctl's replay of the same file through the same engine and
    configuration: the events (or, if they differ, the frames) exactly, the gestures' state
    events in order, the final values within the tolerances above."""
    try:
        if too_dense_for_this_cpu(path):
            return compare_with_replay(path, SLOWER, last_try=True) + f" (played {SLOWER}× slower: more than {DENSE} fingers at once in an emulated CPU)"
        try:
            return compare_with_replay(path)
        except ReadersFellBehind as behind:
            # The machine is too slow for this recording's pace (an emulated CPU, a busy
            # host): the kernel dropped events for a reader. That is the guest's limit, not
            # what is tested; played slower, the same comparison holds.
            note(f"{behind}: played again {SLOWER} times slower")
            return compare_with_replay(path, SLOWER, last_try=True) + f" (played {SLOWER}× slower: at its own pace, {behind})"
    except Exception:
        # A failure may leave the bench anywhere (motiond gone, a client dropped): the next
        # recording starts a new one, so one failure stays one.
        finish()
        raise


# Without KVM, a recording with more fingers at once than this is played slower from the
# start: the one vCPU runs evemu-play, the kernel, evemu-record, motiond and this harness, and
# at ten fingers (the Wacom DTH-2242, 84 frames a second) evemu-play's pace slips enough that a
# short touch outlasts the tap limit, so played at its own pace it never matched and was
# always played again (a minute lost).
DENSE = 5


def too_dense_for_this_cpu(path):
    with open("/sys/devices/system/clocksource/clocksource0/available_clocksource") as source:
        if "kvm-clock" in source.read():
            return False
    _, replayed, _ = expectation(path, 1)
    return max((len(frame) for frame in replayed), default=0) > DENSE


SLOWER = 3


def by_stream(events):
    """(stream, state) pairs as each stream's states in order."""
    streams = {}
    for stream, state in events:
        streams.setdefault(stream, []).append(state)
    return streams


class ReadersFellBehind(Exception):
    pass


def compare_with_replay(path, stretch=1, last_try=False):
    global BENCH
    recording, replayed, simulated = expectation(path, stretch)
    check(replayed, "the replay gave no frames")
    if BENCH is None:
        BENCH = RecordingBench()
    client = BENCH.client
    client.request("reset_scene")
    states = [stream for stream in client.hello["streams"] if stream.endswith(".state") and not stream.startswith("screen.")]
    wait_until("the scene at rest after reset_scene",
               lambda: all(client.request("get", stream=stream)["value"] == "atRest" for stream in states))
    client.drain()
    before = processed(client)
    coalesced_before = client.request("stats")["frames_coalesced"]
    drops_before = client.request("stats")["dropped_events"]
    client.events.clear()

    with Panel(recording, settle=False) as panel:
        recorder = KernelRecorder(panel.node)
        client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
        recorder.wait_until_open()
        # Reading the client's events meanwhile: motiond drops a client that stops reading.
        panel.play(meanwhile=client.drain, seconds=STEP * stretch + 30)
        # The kernel throws away what a reader has not read when the device goes, so it is
        # unplugged only once motiond has as many frames as the replay, or has stopped taking
        # them in (then the counts differ, and that is reported).
        waited = wait_for_frames(client, before, len(replayed))
    client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
    reader_drops = recorder.finish()
    drops = client.request("stats")["dropped_events"] - drops_before
    behind = f"the kernel dropped events (SYN_DROPPED) {drops} time(s) for motiond and {reader_drops} for evemu-record"
    if (drops or reader_drops) and not last_try:
        raise ReadersFellBehind(behind)
    check(not drops, f"even played {SLOWER}× slower, {behind}")
    check(not reader_drops, f"even played {SLOWER}× slower, {behind}")
    problems = []
    # The fingers: when the kernel passed on exactly the prepared file's events, the frames
    # (made from them by the same code as the replay's) are the replay's; only when it did
    # not are the frames made and compared, which is slower in the guest (a debug motionctl).
    passed_on = recorder.events()
    as_prepared = passed_on == evemu_events(recording)
    if not as_prepared:
        live = recorder.frames()
        if len(live) != len(replayed):
            problems.append(f"{len(live)} frames read live, {len(replayed)} replayed")
        for index, (seen, expected) in enumerate(zip(live, replayed)):
            if seen != expected:
                problems.append(f"frame {index} differs:\n  live:   {seen}\n  replay: {expected}")
                break
        if not problems:
            note(f"the kernel passed on {len(passed_on)} events, other than the prepared file's; the frames are the same")

    taken = processed(client) - before
    if taken != len(replayed):
        problems.append(f"motiond took in {taken} frames, the replay has {len(replayed)} (the wait for them: {waited})")
    # Every element at rest, as its subscriber hears it: each state stream's newest value
    # since the recording began (an element whose state never changed stayed at rest, where
    # the last recording's wait and reset_scene left it), with no request sent meanwhile.
    def at_rest():
        client.drain()
        states = {event["stream"]: event["value"] for event in client.events
                  if event.get("event") == "value" and event["stream"].endswith(".state")}
        return all(state == "atRest" for state in states.values())
    wait_until("every element to come to rest", at_rest, every=0.1)

    published = differences(client.events, simulated)
    gestures, values = published["gestures"], published["values"]
    judged_by = "as replayed"
    if published["problems"] and not problems:
        # The fingers are the replay's but not what became of them. The kernel stamps each
        # event when evemu-play writes it, so on a loaded machine the times motiond read are
        # not the recording's: a double tap whose taps come out more than 0.3 s apart is two
        # taps. What motiond must give is what it gives for the times it read:
        # motionctl's replay of the kernel's recording, with those times.
        kernel = differences(client.events, simulate(recorder.path))
        if kernel["problems"]:
            problems += published["problems"] + ["and as the kernel's times replay:"] + kernel["problems"]
        else:
            judged_by = "as the kernel's own times replay (the recording's times gave: " + "; ".join(published["problems"]) + ")"
    else:
        problems += published["problems"]
    coalesced = client.request("stats")["frames_coalesced"] - coalesced_before
    if problems and coalesced:
        # A flick's velocity, and what it decides (a snap point, a direction), comes from
        # fewer frames when motiond coalesced some; played slower, it need not.
        if not last_try:
            raise ReadersFellBehind(f"motiond coalesced {coalesced} of the {len(replayed)} frames, and then: " + "; ".join(problems))
        problems.append(f"(motiond coalesced {coalesced} of the {len(replayed)} frames: it was behind)")
    if problems and OUT:
        # What the kernel passed on, with its own times, for a replay on the host.
        kept = os.path.join(OUT, "live-" + os.path.basename(recording))
        shutil.copyfile(recorder.path, kept)
        log = os.path.join(OUT, "motiond-" + os.path.basename(recording) + ".log")
        shutil.copyfile(BENCH.daemon.log_path, log)
        problems.append(f"(what the kernel passed on, with its times: {kept}; motiond's log: {log})")
    check(not problems, "\n".join(problems))
    how = "the events exactly as prepared" if as_prepared else "the same frames"
    return (f"{len(replayed)} frames ({how}), {gestures} gesture events, {values} streams {judged_by};"
            f" {coalesced} frames coalesced")


def wait_for_frames(client, before, count, stalled=30, most=4 * STEP):
    """Until motiond has taken in `count` frames since `before`, for as long as it keeps
    taking them in: a guest behind on a busy host catches up, where a fixed wait gave up on
    it; a motiond that stopped reading for `stalled` seconds, or took `most`, is left.
    Returns how the wait ended, for a failure's message."""
    start = last_change = time.monotonic()
    last = None
    while True:
        client.drain()
        taken = processed(client) - before
        now = time.monotonic()
        if taken >= count:
            return f"all {count} in {now - start:.1f} s"
        if now - last_change > stalled:
            return f"stopped at {taken} for {stalled} s, {now - start:.1f} s after the recording ended"
        if now - start > most:
            return f"{taken} after {most} s"
        if taken != last:
            last, last_change = taken, now
        time.sleep(0.1)


def simulate(recording):
    """Every value and gesture event motiond's engine publishes for `recording`, replayed
    with the shipped configuration (what `replay` computes on the host)."""
    return json_lines(run([MOTIONCTL, "simulate", recording, "--config", SHIPPED_CONFIG, "--events", "--json"], seconds=4 * STEP), "simulate")


def differences(events, simulated):
    """How what a client was published (`events`) differs from a simulation's lines: each
    gesture stream's events in order, and each stream's final value within the tolerances.
    Across streams the order may differ: two gestures that begin a frame apart live may begin
    in one frame after motiond coalesced frames it was behind on (docs/protocol.md, Slow
    clients). The screen's own streams (idle, contacts) follow the wall clock, and are left out."""
    problems = []
    gestures = by_stream((event["stream"], event["state"]) for event in events if event.get("event") == "state")
    expected_gestures = by_stream((line["stream"], line["state"]) for line in simulated if "state" in line)
    if gestures != expected_gestures:
        problems.append(f"gesture events differ:\n  live:   {gestures}\n  replay: {expected_gestures}")
    final = {event["stream"]: event["value"] for event in events if event.get("event") == "value"}
    expected_final = {line["stream"]: line["value"] for line in simulated if "value" in line}
    for stream, value in expected_final.items():
        if stream.startswith("screen."):
            continue
        why = values_differ(final.get(stream), value)
        if why:
            problems.append(f"{stream} ends at {final.get(stream)} live, {value} replayed: {why}")
    return {"problems": problems, "gestures": sum(map(len, gestures.values())), "values": len(expected_final)}


# --- Phantom touches: the faults the phantom filters remove, and their near misses -----------

PHANTOMS = os.path.join(REPOSITORY, "Tests", "Fixtures", "phantoms")
PHANTOM_COUNTS = ("dead_zone", "phantom_taps", "bursts", "storms", "storm_contacts", "ghosts", "flips")
# No [[device]]: each generated panel covers the whole screen, with the default filters.
PHANTOM_CONFIG = """
[screen]
width = 1920
height = 1080
"""
PHANTOM_TOLERANCE = 2.0  # pixels, between a contact's first published position and the replay's
# The repeating phantom's recordings are not played here: its taps last one frame (9 ms), and
# the kernel stamps each event when evemu-play writes it, which in an emulated CPU under load
# came out past the 30 ms of a phantom's touch in every try (the taps became a finger's); they
# also take a minute each (a 12.864 s period). The replay judges them on their own times, and
# the live test through umockdev (live_phantoms.py) on a fake panel whose stamps are exact.
PHANTOMS_NOT_IN_THE_LAB = {"phantom-tap.evemu", "phantom-tap-double-tap.evemu"}


def phantom_expectations():
    with open(os.path.join(PHANTOMS, "expected.json")) as source:
        return json.load(source)


class PhantomBench:
    """One motiond, with `config`, that the phantom recordings are played to in turn."""

    def __init__(self, config):
        finish()  # the other benches' motiond would read these panels too
        self.config_text = config
        self.config = write_config("phantoms.toml", config)
        self.daemon = Daemon([], name="phantoms", config=self.config, tracked=False)
        self.client = Client(self.daemon.socket)
        self.client.request("subscribe", streams=["screen.contacts"])

    def close(self):
        self.daemon.stop()


PHANTOM_BENCH = None


class KernelTimesDiffer(Exception):
    pass


def phantom_recording_test(name, config=PHANTOM_CONFIG):
    """A phantom recording (Tests/Fixtures/phantoms) played on a real kernel's uinput panel
    under motiond: the panel's filter counts in `stats` are expected.json's, and screen.contacts
    published the contacts expected.json says are reported (its `contacts`: the fingers kept,
    those cancelled, the phantoms that cannot be known before), each first where motionctl's
    replay begins it, and none left down.

    The filters read the events' times, which the kernel stamps when evemu-play writes them:
    in an emulated CPU a phantom's tap of one frame (9 ms) may come out longer than the 25 ms
    a phantom's touch lasts, and then it is a finger's. So what the kernel passed is recorded
    too (`evemu-record`, its times); where motiond's counts differ from expected.json but
    are those of motionctl's replay of that recording (the file the kernel made of it is
    another recording), it is played once more, and the failure says so."""
    try:
        return play_phantom_recording(name, config)
    except KernelTimesDiffer as differ:
        note(f"{differ}: played again")
        return play_phantom_recording(name, config, last_try=True) + f" (played twice: the first time {differ})"


def phantom_counts(path, config):
    """The phantom filters' counts of motionctl's replay of the recording at `path`."""
    folder = os.path.join(SCRATCH, "phantom-sweep")
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        os.unlink(os.path.join(folder, old))
    copy = os.path.join(folder, os.path.basename(path))
    with open(path) as source, open(copy, "w") as out:
        out.write(source.read())
    line = json_lines(run([MOTIONCTL, "sweep", folder, "--json", "--config", config]), "sweep")[0]
    filtered = line["devices"][0].get("filtered", {})
    return {key: filtered.get(key, 0) for key in PHANTOM_COUNTS}


def short_touches(path):
    """The touches of at most 0.1 s in a recording, as the kernel stamped them: how long each
    lasted and when it landed (a phantom's tap lasts one frame in the file)."""
    lives = {}
    for frame in json_lines(run([MOTIONCTL, "frames", path, "--raw", "--json"]), "the live recording"):
        for contact in frame.get("contacts", []) if frame.get("event") == "frame" else []:
            lives.setdefault(contact["id"], []).append(frame["t"])
    short = [(times[0], times[-1] - times[0]) for times in lives.values() if times[-1] - times[0] <= 0.1]
    return "short touches as stamped: " + ", ".join(f"{1000 * length:.0f} ms at {landed:.3f} s" for landed, length in short)


def play_phantom_recording(name, config, last_try=False):
    global PHANTOM_BENCH
    try:
        expect = phantom_expectations()[name]
        recording = prepare_recording(os.path.join(PHANTOMS, name), SCRATCH)
        if PHANTOM_BENCH is None or PHANTOM_BENCH.config_text != config:
            if PHANTOM_BENCH:
                PHANTOM_BENCH.close()
            PHANTOM_BENCH = PhantomBench(config)
        bench = PHANTOM_BENCH
        client = bench.client
        replayed = json_lines(run([MOTIONCTL, "frames", recording, "--json", "--config", bench.config]), "the replay")
        frames = sum(1 for frame in replayed if frame.get("event") == "frame")
        client.drain()
        client.events.clear()
        before = processed(client)
        coalesced_before = client.request("stats").get("frames_coalesced", 0)
        with Panel(recording, settle=False) as panel:
            recorder = KernelRecorder(panel.node)
            client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
            recorder.wait_until_open()
            # A node's counts from before this panel (the node number is reused).
            counts_before = client.request("stats").get("filtered", {}).get(panel.node, {})
            panel.play(meanwhile=client.drain, seconds=STEP + 90)
            try:
                wait_until(f"motiond to take in {frames} frames",
                           lambda: client.drain() or processed(client) - before >= frames, seconds=10, every=0.1)
            except LabFailure:
                pass
            stats = client.request("stats")
            filtered = stats.get("filtered", {}).get(panel.node, {})
            down = client.request("get", stream="screen.contacts")["value"]
        client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
        client.drain()
        drops = recorder.finish()
        coalesced = stats.get("frames_coalesced", 0) - coalesced_before
        counts = {key: filtered.get(key, 0) - counts_before.get(key, 0) for key in PHANTOM_COUNTS}
        expected_counts = {key: expect["counts"][key] for key in PHANTOM_COUNTS}
        problems = []
        if counts != expected_counts:
            problems.append(f"stats counted {counts}, expected.json says {expected_counts}")
        tracks = contact_tracks(client.events)
        if len(tracks) != expect["contacts"]:
            problems.append(f"screen.contacts published {len(tracks)} contacts, expected.json says {expect['contacts']}"
                            f" ({len(expect['fingers'])} fingers kept, {len(expect['cancelled'])} cancelled,"
                            f" {expect['reported_phantoms']} phantoms reported)")
        else:
            # Each contact first published where the replay of what the kernel passed begins
            # it (fingers landing in one frame may come in either order).
            live = json_lines(run([MOTIONCTL, "frames", recorder.path, "--json", "--config", bench.config]), "the live recording")
            began = [(contact["x"], contact["y"]) for frame in live if frame.get("event") == "frame"
                     for contact in frame["contacts"] if contact["phase"] == "began"]
            unpaired = [track[0] for track in tracks.values()]
            for position in began:
                best = min(unpaired[:10], key=lambda first: distance(first, position), default=None)
                if best is None or distance(best, position) > PHANTOM_TOLERANCE:
                    problems.append(f"the replay begins a contact at {position}; the nearest published first was {best}")
                    break
                unpaired.remove(best)
        if down:
            problems.append(f"{len(down)} contacts still down on screen.contacts after the recording: {down}")
        if problems:
            kernel_counts = phantom_counts(recorder.path, bench.config)
            if kernel_counts == counts and kernel_counts != expected_counts:
                why = (f"the kernel's times made another recording of it: motionctl's replay of what evemu-record read counts"
                       f" {kernel_counts} too; {short_touches(recorder.path)}")
                if not last_try:
                    raise KernelTimesDiffer(why)
                problems.append(f"({why})")
            else:
                problems.append(f"(motionctl's replay of what the kernel passed, as evemu-record read it, counts {kernel_counts})")
            problems.append(f"({coalesced} frames coalesced, {drops} SYN_DROPPED for evemu-record)")
        check(not problems, "\n".join(problems))
        shown = {key: value for key, value in counts.items() if value}
        return (f"{frames} frames reported; counts {shown or 'all 0'} as expected.json; {len(tracks)} contacts on screen.contacts"
                f" ({len(expect['fingers'])} fingers kept, {len(expect['cancelled'])} cancelled, {expect['reported_phantoms']} phantoms"
                f" reported), each first where the replay begins it; {coalesced} frames coalesced")
    except KernelTimesDiffer:
        raise
    except Exception:
        if PHANTOM_BENCH:
            PHANTOM_BENCH.close()
            PHANTOM_BENCH = None
        raise


# --- Hotplug through udev -------------------------------------------------------------------

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


def state_event(stream, state):
    return lambda event: event.get("event") == "state" and event.get("stream") == stream and event.get("state") == state


def device_event(action, node):
    return lambda event: event.get("event") == "device" and event.get("action") == action and event.get("node") == node


def read_nodes(client):
    return [device["node"] for device in client.request("devices")["devices"]]


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
    one time (evemu-play writes them as fast as it can): many more events than the kernel's
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
            data = os.read(descriptor, 24 * 64)  # struct input_event is 24 bytes on x86-64
        except BlockingIOError:
            return count
        count += len(data) // 24


def processed(client):
    """The frames motiond has taken in: processed, or left out because it was behind (a busy
    machine; the newest positions are what count, docs/protocol.md, Slow clients)."""
    stats = client.request("stats")
    return stats["frames"] + stats.get("frames_coalesced", 0)


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
            wait_until(f"motiond to take in the drag's {frames} frames", lambda: processed(client) >= frames)
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
        import grp
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
# motiond grabs the panel and shows the apps its fingers, as motiond sees them, on a uinput
# touchscreen of its own. The apps' side is read as a compositor reads it: libinput
# (`libinput debug-events --device NODE`, the host's libinput-tools).

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
"""
# Where libinput shows a finger, in screen pixels, against where motiond published it: the
# device's unit is a quarter pixel (a position is rounded down to one), and libinput prints
# millimetres to a hundredth (0.16 units here).
VIRTUAL_TOLERANCE = 0.3  # pixels

EVIOCGRAB = 0x40044590     # _IOW('E', 0x90, int)
EVIOCSCLOCKID = 0x400445a0  # _IOW('E', 0xa0, int)
INPUT_EVENT = struct.Struct("llHHi")  # struct input_event on x86-64


def write_config(name, text):
    path = os.path.join(SCRATCH, name)
    with open(path, "w") as out:
        out.write(text)
    return path


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

    def __init__(self, node):
        self.node = node
        self.path = os.path.join(SCRATCH, "debug-events.txt")
        with open(self.path, "w") as out:
            # Line-buffered, so that what it printed can be read while it runs.
            self.process = start(["stdbuf", "-oL", "-eL", "libinput", "debug-events", "--device", node],
                                 stdout=out, stderr=subprocess.STDOUT)
        wait_until(f"libinput debug-events to add {node}",
                   lambda: self.process.poll() is not None or "DEVICE_ADDED" in self.text())
        check(self.process.poll() is None, f"libinput debug-events --device {node} exited: {self.text()}")
        added = next(line for line in self.text().splitlines() if "DEVICE_ADDED" in line)
        check(VIRTUAL_NAME in added and "cap:t" in added, f"libinput does not take {node} for a touchscreen: {added}")
        self.added = added.strip()

    def text(self):
        with open(self.path, errors="replace") as source:
            return source.read()

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

    def stop(self):
        stop_process(self.process, signal.SIGINT)
        text = self.text()
        check("SYN_DROPPED" not in text and "dropped" not in text.lower(),
              f"the kernel dropped events for libinput: {[line for line in text.splitlines() if 'drop' in line.lower()]}")
        return text


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


def replayed_contacts(frames):
    """A replay's frames as contacts, in landing order: {"id", "positions" (each new one),
    "end" ("ended", "cancelled", or None: still down when the recording ended)}."""
    contacts, down = [], {}
    for frame in frames:
        for contact in frame:
            if contact["phase"] == "began":
                down[contact["id"]] = {"id": contact["id"], "positions": [], "end": None}
                contacts.append(down[contact["id"]])
            track = down.get(contact["id"])
            check(track is not None, f"the replay moved contact {contact['id']}, which never began: {frame}")
            position = (contact["x"], contact["y"])
            if not track["positions"] or track["positions"][-1] != position:
                track["positions"].append(position)
            if contact["phase"] in ("ended", "cancelled"):
                track["end"] = contact["phase"]
                del down[contact["id"]]
    return contacts


def virtual_replay(recording, config):
    """What the virtual touchscreen must show of a (prepared) recording, from motionctl's
    replay with the virtual touchscreen's configuration (its screen pixels, the default
    filters): each contact the filters kept, and how many fingers the panel had (`--raw`)."""
    def frames(*flags):
        lines = json_lines(run([MOTIONCTL, "frames", recording, "--json", "--config", config, *flags]), "the replay")
        return frame_contents(lines)
    raw = frames("--raw")
    return {"contacts": replayed_contacts(frames()), "fingers": len(replayed_contacts(raw)), "frames": len(raw)}


@functools.lru_cache(maxsize=1)
def virtual_expectation(path, stretch=1):
    """The prepared recording and its `virtual_replay`: from the host's run when there was
    one (LAB_EXPECTED), else made here."""
    recording = prepare_recording(path, SCRATCH, stretch)
    expected = expected_file(recording, ".virtual.json") or virtual_replay(recording, write_config("virtual.toml", VIRTUAL_CONFIG))
    return recording, expected


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


class VirtualBench:
    """One motiond with a virtual touchscreen, that the recordings are played to in turn."""

    def __init__(self):
        # The recordings' motiond would read these panels too, and take the one CPU's time.
        finish()
        self.daemon = Daemon([], name="virtual", config=write_config("virtual.toml", VIRTUAL_CONFIG), tracked=False)
        self.client = Client(self.daemon.socket)
        # Not subscribed to screen.contacts: what the apps must see is the replay's, and
        # following every finger would cost the one emulated CPU a message a frame.
        self.node = virtual_node(self.client)

    def close(self):
        self.daemon.stop()


def most_fingers(path):
    """The most fingers a recording has down at once."""
    with open(recording_files(path)[1]) as source:
        down, most = set(), 0
        slot = 0
        for line in source:
            fields = line.split()
            if not line.startswith("E:") or len(fields) < 5 or fields[2] != "0003":
                continue
            code, value = int(fields[3], 16), int(fields[4])
            if code == 0x2f:
                slot = value
            elif code == 0x39:
                (down.discard if value < 0 else down.add)(slot)
                most = max(most, len(down))
    return most


def virtual_recordings():
    """The recordings the virtual touchscreen is shown with at their own pace: every bundled
    one with at most four fingers at once."""
    return [path for path in bundled_recordings() if most_fingers(path) <= 4]


def held_out_recordings():
    """The bundled recordings with more fingers (the Dell Canvas's five, the Wacom DTH-2242's
    ten): at their own pace too fast for the one emulated CPU that runs them, libinput and
    motiond, so they are played SLOWER times slower, through the same checks; they show the
    virtual touchscreen's slots beyond four to a real kernel and libinput."""
    return [path for path in bundled_recordings() if most_fingers(path) > 4]


def virtual_plays():
    """Each recording the virtual touchscreen is shown, with how many times slower."""
    return ([(path, 1) for path in virtual_recordings()] + [(path, SLOWER) for path in held_out_recordings()]
            + [(VIRTUAL_CANCELS, 1), (VIRTUAL_GHOSTS, 1)])


def virtual_recording_test(path, stretch=1, all_at_once=False):
    """The recording played on a grabbed panel under motiond with a virtual touchscreen: what
    libinput reads from the virtual device is what motionctl's replay of the same file (on the
    host, `virtual_replay`) says the apps must see, not what the live motiond said it did.
    As many touches as the replay has contacts (a finger the filters removed is never shown);
    each touch's positions are the replay's for its contact, in order, from its first to its
    last (within VIRTUAL_TOLERANCE; a live motiond behind may coalesce frames, so positions
    between may be missing, never added); each ends TOUCH_UP where the replay lifted it and
    TOUCH_CANCEL where the replay cancelled it or where it was still down at the unplug. With
    `stretch`, played that many times slower; with `all_at_once`, libinput had as many
    touches down at once as the recording had fingers."""
    global VIRTUAL_BENCH
    try:
        recording, expected = virtual_expectation(path, stretch)
        if VIRTUAL_BENCH is None:
            VIRTUAL_BENCH = VirtualBench()
        played = play_to_virtual_touchscreen(VIRTUAL_BENCH, recording, expected["frames"], stretch, len(expected["contacts"]))
        watcher, shown = played["watcher"], played["watcher"].touches()
        problems = played["problems"] + replay_problems(shown, expected["contacts"])
        if watcher.multiple_touch_down():
            problems.append(f"libinput dropped touches: {watcher.multiple_touch_down()}")
        at_once = watcher.most_down()
        if all_at_once and at_once != most_fingers(path):
            problems.append(f"libinput had at most {at_once} touches down at once, the recording {most_fingers(path)} fingers")
        check(not problems, "\n".join(problems[:6]) + f"\n(libinput: {watcher.added})")
        ends = [touch["end"] for touch in shown]
        moves = sum(len(touch["positions"]) for touch in shown)
        return (f"{len(shown)} touches ({expected['fingers'] - len(shown)} of the panel's {expected['fingers']} fingers removed"
                f" by the filters), {moves} positions as the replay has them (within {VIRTUAL_TOLERANCE} px);"
                f" {ends.count('up')} TOUCH_UP, {ends.count('cancel')} TOUCH_CANCEL where the replay lifted and cancelled;"
                f" {played['coalesced']} frames coalesced; up to {at_once} down at once" + (f"; played {stretch}× slower" if stretch != 1 else ""))
    except Exception:
        finish()
        raise


def play_to_virtual_touchscreen(bench, recording, frames, stretch, touches):
    """Plays `recording` on a panel of its own under `bench`'s motiond, libinput reading the
    virtual touchscreen; unplugs the panel once motiond has taken in its `frames` (or stopped
    taking them in), and waits for libinput to show `touches` touches, all ended. Returns the
    DebugEvents, how many frames motiond coalesced, and the problems met on the way."""
    client = bench.client
    client.drain()
    before = processed(client)
    coalesced_before = client.request("stats")["frames_coalesced"]
    problems = []
    with Panel(recording, settle=False) as panel:
        client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
        device = next(d for d in client.request("devices")["devices"] if d["node"] == panel.node)
        if device["grabbed"] is not True:
            problems.append(f"the panel of a virtual touchscreen is not grabbed: {device}")
        watcher = DebugEvents(bench.node)
        panel.play(meanwhile=client.drain, seconds=STEP * stretch + 30)
        waited = wait_for_frames(client, before, frames)
        taken = processed(client) - before
        if taken != frames:
            problems.append(f"motiond took in {taken} frames before the unplug, the replay has {frames} (the wait for them: {waited})")
        coalesced = client.request("stats")["frames_coalesced"] - coalesced_before
    client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
    try:
        wait_until(f"libinput to show {touches} touches, all ended",
                   lambda: len(watcher.touches()) >= touches and watcher.fingers_down() == 0)
    except LabFailure as failure:
        problems.append(f"{failure}: libinput showed {len(watcher.touches())}, {watcher.fingers_down()} still down")
    watcher.stop()
    return {"watcher": watcher, "coalesced": coalesced, "problems": problems}


def replay_problems(shown, contacts):
    """How libinput's touches differ from the replay's contacts: their number, and each
    touch's positions and end against its contact's."""
    if len(shown) != len(contacts):
        return [f"libinput showed {len(shown)} touches, the replay has {len(contacts)} contacts:\n"
                f"  shown:    {[(touch['positions'][:1], touch['end']) for touch in shown]}\n"
                f"  replayed: {[(contact['positions'][:1], contact['end']) for contact in contacts]}"]
    problems = []
    pairs, _ = pair_touches(shown, {index: contact["positions"] for index, contact in enumerate(contacts)})
    for touch, index in pairs:
        contact = contacts[index]
        for why in (subsequence_problems(touch["positions"], contact["positions"]), ending_problems(touch, contact)):
            if why:
                problems.append(f"the touch of contact {contact['id']} (landing {index + 1} of the replay's): {why}")
    return problems


def subsequence_problems(shown, replayed):
    """Why a touch's positions are not the replay's for its contact, or None: each shown
    position is one of the replay's, in the replay's order, and the first and last are the
    contact's first and last (all within VIRTUAL_TOLERANCE)."""
    replayed = [on_screen(position) for position in replayed]
    index = 0
    for position in shown:
        while index < len(replayed) and distance(position, replayed[index]) > VIRTUAL_TOLERANCE:
            index += 1
        if index == len(replayed):
            return f"shown at {position}, no position of the replay's after those shown before it; shown {shown[:6]}…, replayed {replayed[:6]}…"
        index += 1
    if distance(shown[0], replayed[0]) > VIRTUAL_TOLERANCE or distance(shown[-1], replayed[-1]) > VIRTUAL_TOLERANCE:
        return f"shown from {shown[0]} to {shown[-1]}, replayed from {replayed[0]} to {replayed[-1]}"
    return None


def ending_problems(touch, contact):
    """Why a touch's end is not its contact's in the replay, or None: TOUCH_UP where the
    replay lifted it, TOUCH_CANCEL where a filter cancelled it or where the finger was still
    down when the recording ended (the panel unplugged under it)."""
    due = {"ended": "up", "cancelled": "cancel", None: "cancel"}[contact["end"]]
    if touch["end"] == due:
        return None
    why = {"ended": "the replay lifted it", "cancelled": "the replay cancelled it",
           None: "it was still down when the panel was unplugged"}[contact["end"]]
    return f"ended {'TOUCH_UP' if touch['end'] == 'up' else 'TOUCH_CANCEL'}, where {why}"


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


CLAIM_CONFIG = VIRTUAL_CONFIG + """
[[element]]
id = "panel"
center = [240, 540]
size = [480, 1080]

[element.draggable]
"""


def virtual_claim_and_cancel():
    """A touch that begins on an element (claim_touches, by default) never reaches the apps,
    even where it moves off it; a finger the panel turns into a palm mid-touch ends with
    TOUCH_CANCEL, never TOUCH_UP; a touch beside them is down, moves and lifts."""
    finish()
    # The Atmel panel's 800 units are the screen's 1,920 pixels: x 100 is pixel 240, on the
    # element (its left quarter); x 600 is pixel 1,440, off it.
    claimed = one_touch(21, [(100 + 20 * step, 240) for step in range(16)])
    palm = one_touch(22, [(600 + 4 * step, 300) for step in range(14)], tool_at=10)
    # The claimed touch drags the element 720 px right (to x 720…1200): the others land
    # right of it.
    plain = one_touch(23, [(760, 100 + 10 * step) for step in range(11)])
    # The tool type's value the palm left in slot 0 is reset by the next touch's landing.
    events = os.path.join(SCRATCH, "claim-and-cancel.events")
    with open(events, "w") as out:
        out.writelines(evemu_frames(claimed + palm + plain))
    with Daemon([], name="claim", config=write_config("claim.toml", CLAIM_CONFIG)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        client.request("subscribe", streams=["screen.contacts", "panel.drag"])
        with Panel(DRAG) as panel:
            client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
            watcher = DebugEvents(node)
            # What the virtual device sent, as a plain evdev reader reads it: for a failure's message.
            shown_events = KernelRecorder(node)
            shown_events.wait_until_open()
            panel.play(events, meanwhile=client.drain)
            # The drain while it played may have read it already.
            if not any(state_event("panel.drag", "ended")(event) for event in client.events):
                client.next_event(state_event("panel.drag", "ended"), what="the claimed touch's drag of the element ended")
            try:
                wait_until("libinput to see two touches end", lambda: len(watcher.touches()) >= 2 and watcher.fingers_down() == 0)
            except LabFailure as failure:
                client.drain()
                stop_process(shown_events.process, signal.SIGINT)
                with open(shown_events.path) as source:
                    sent = [line.rstrip() for line in source if line.startswith("E:")]
                raise LabFailure(f"{failure}; libinput said:\n{watcher.touch_lines()}\nscreen.contacts: {contact_tracks(client.events)}"
                                 f"\nfilters: {client.request('stats').get('filtered')}\nthe virtual device sent, last:\n"
                                 + "\n".join(sent[-45:])) from None
        watcher.stop()
        client.drain()
        shown = watcher.touches()
        tracks = contact_tracks(client.events)
        # screen.contacts has every finger down, the claimed one too; the apps' two are the last.
        check(len(tracks) in (2, 3), f"motiond published {len(tracks)} contacts for the three touches: {tracks}")
        on_element = [touch for touch in shown if any(x < 480 for x, _ in touch["positions"])]
        check(not on_element, f"libinput saw the claimed touch: {on_element}")
        check([touch["end"] for touch in shown] == ["cancel", "up"],
              f"libinput's touches ended {[touch['end'] for touch in shown]}, not a TOUCH_CANCEL (the palm) then a TOUCH_UP:\n"
              + watcher.touch_lines())
        # Every position shown is motiond's, for the two touches it gave the apps.
        palm_contact, plain_contact = list(tracks)[-2:]
        stray = [position for position in shown[0]["positions"]
                 if all(distance(position, on_screen(other)) > VIRTUAL_TOLERANCE for other in tracks[palm_contact])]
        check(shown[0]["positions"] and not stray, f"the palm shown at {stray}, where motiond published no position of it")
        why = track_problems(shown[1]["positions"], tracks[plain_contact])
        check(why is None, f"the plain touch (contact {plain_contact}): {why}")
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return (f"the touch on the element: not shown; the palm: {len(shown[0]['positions'])} positions then TOUCH_CANCEL;"
            f" the plain touch: {len(shown[1]['positions'])} positions then TOUCH_UP")


MT_SLOT = 0x2f


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
    finish()
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


# --- Field faults, generated anew each run -------------------------------------------------

# Where a run keeps what its tests write (lab.py sets it to --out); SCRATCH when run otherwise.
OUT = None
# The stuck filter's time in the faults' own configuration: the shipped 30 s would make the
# test minutes long. (VIRTUAL_CONFIG, which the other virtual tests share, keeps the default.)
FAULTS_STUCK_AFTER = 1.5
FAULTS_CONFIG = VIRTUAL_CONFIG.replace(f'virtual_touchscreen = "{VIRTUAL_OUTPUT}"\n',
                                       f'virtual_touchscreen = "{VIRTUAL_OUTPUT}"\nstuck_after = {FAULTS_STUCK_AFTER}\n')
# How long after the stuck finger landed (the panel's kernel stamp of its landing, as motiond
# published it) the virtual device may cancel it (the kernel's stamp of MT_TOOL_PALM there):
# no sooner than stuck_after, and later only by the guest's latency in firing the timer.
STUCK_EARLY, STUCK_LATE = 0.01, 0.6


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


def lab_seed():
    """The faults' seed: MOTIOND_LAB_SEED (scripts/kernel-test hands it over as OUT/seed), else new."""
    given = os.environ.get("MOTIOND_LAB_SEED")
    if not given and OUT and os.path.exists(os.path.join(OUT, "seed")):
        given = open(os.path.join(OUT, "seed")).read().strip()
    return int(given) if given else random.SystemRandom().randrange(1 << 32)


def virtual_field_faults():
    """Field faults and their near misses (Tests/KernelLab/faults.py), drawn anew from a seed
    each run, played on a grabbed panel under motiond with a virtual touchscreen and read
    with libinput: the stuck finger cancelled about stuck_after after it landed, the palm
    never shown, the finger that grew into a palm cancelled, the jump's first part cancelled
    and no touch moving more than the jump limit between two events; each near miss shown
    whole, as screen.contacts published it, and lifted; no touch left down; each fault
    counted once in stats' `filtered`."""
    finish()
    seed = lab_seed()
    directory = os.path.join(OUT or SCRATCH, "faults")
    os.makedirs(directory, exist_ok=True)
    recording, drawn = faults.generate(seed, directory, FAULTS_STUCK_AFTER)
    episodes = drawn["episodes"]
    note(f"faults seed {seed}: {[episode['name'] for episode in episodes]} at {drawn['rate_hz']} Hz")
    # Positions in screen pixels, as motiond maps the panel's units onto the whole screen.
    scale_x, scale_y = SCREEN_WIDTH / (faults.XMAX + 1), SCREEN_HEIGHT / (faults.YMAX + 1)
    px_per_mm = faults.UNITS * min(scale_x, scale_y)
    jump_px = faults.JUMP_MM * faults.UNITS * max(scale_x, scale_y)
    samples = {index: [] for index in range(len(episodes))}
    with open(recording) as source:
        x, y, episode = None, None, -1
        for fields in (line.split() for line in source if line.startswith("E:")):
            kind, code, value = int(fields[2], 16), int(fields[3], 16), int(fields[4])
            if (kind, code) == (3, faults.MT_ID) and value >= 0:
                episode += 1
            elif (kind, code) == (3, faults.MT_X):
                x = value
            elif (kind, code) == (3, faults.MT_Y):
                y = value
            elif (kind, code) == (0, 0) and episode >= 0 and x is not None:
                point = (x * scale_x, y * scale_y)
                if not samples[episode] or samples[episode][-1] != point:
                    samples[episode].append(point)
    def seed_note():
        return f"\n(seed {seed}: MOTIOND_LAB_SEED={seed} draws them again; the recording: {recording})"

    with Daemon([], name="faults", config=write_config("faults.toml", FAULTS_CONFIG)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        client.request("subscribe", streams=["screen.contacts"])
        with Panel(recording) as panel:
            client.next_event(device_event("added", panel.node), what=f"motiond to read {panel.node}")
            device = wait_until(f"motiond to grab {panel.node}",
                                lambda: next((d for d in client.request("devices")["devices"] if d["node"] == panel.node and d["grabbed"]), None))
            # motiond, just started, is slow for its first frames in an emulated CPU: a drag
            # first, which nobody looks at, so that the stuck finger's timing is not that.
            panel.play(faults.warm_up(directory), meanwhile=client.drain)
            wait_until("the warm-up drag to end", lambda: client.drain() or client.request("get", stream="screen.contacts")["value"] == [])
            client.events.clear()
            watcher = DebugEvents(node)
            stamped = StampedEvents(node)
            before = processed(client)
            coalesced_before = client.request("stats")["frames_coalesced"]
            panel.play(meanwhile=lambda: client.drain() or stamped.read())
            # The frames motiond counts are those left after the filters: how many, the
            # filters decide; once evemu-play is done, it is done when the count stays.
            counts = [None]
            def settled():
                client.drain()
                counts.append(processed(client))
                return counts[-1] == counts[-2]
            wait_until("motiond to take in the last frames", settled, every=1.0)
            frames = counts[-1] - before
            try:
                wait_until("libinput to see every touch end", lambda: watcher.touches() and watcher.fingers_down() == 0, seconds=10)
            except LabFailure:
                pass
            filtered = client.request("stats").get("filtered", {}).get(panel.node, {})
            coalesced = client.request("stats")["frames_coalesced"] - coalesced_before
            left_down = client.request("get", stream="screen.contacts")["value"]
            down = watcher.fingers_down()
            stamped.close()
        client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
        watcher.stop()
        client.drain()
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")

    shown = watcher.touches()
    tracks = contact_tracks(client.events)
    problems = []
    if down or left_down:
        problems.append(f"left down at the end: {down} touch(es) in libinput, screen.contacts {left_down}")

    # Which episode each touch libinput showed belongs to: the one with a position where it
    # landed (the episodes are one finger at a time, each landing elsewhere).
    def owner(touch):
        first = touch["positions"][0]
        nearest = min(samples, key=lambda index: min(distance(first, on_screen(point)) for point in samples[index]))
        return nearest if min(distance(first, on_screen(point)) for point in samples[nearest]) <= 1.0 else None
    by_episode = {index: [] for index in samples}
    for touch in shown:
        index = owner(touch)
        if index is None:
            problems.append(f"libinput showed a touch at {touch['positions'][0]} where no finger of the recording was")
        else:
            by_episode[index].append(touch)
    pairs, unpaired = pair_touches(shown, tracks)
    published = {id(touch): tracks[contact] for touch, contact in pairs}
    if unpaired:
        problems.append(f"motiond published {len(unpaired)} contact(s) libinput never showed: {[tracks[c][:2] for c in unpaired]}")

    # No touch moves farther than the jump limit between two of its events, unless motiond,
    # behind in a slow guest, coalesced frames between them (docs/protocol.md, Slow clients)
    # in none of which the finger jumped: the recording's frames between the two positions
    # each move less than the limit.
    coalesced_steps = 0
    for touch in shown:
        index = owner(touch)
        if index is None:
            continue
        track = samples[index]
        at = []
        for position in touch["positions"]:
            start = at[-1] if at else 0
            found = next((i for i in range(start, len(track)) if distance(position, on_screen(track[i])) <= VIRTUAL_TOLERANCE), None)
            at.append(start if found is None else found)
        for (a, b), (i, j) in zip(zip(touch["positions"], touch["positions"][1:]), zip(at, at[1:])):
            if math.dist(a, b) <= jump_px:
                continue
            recorded = max((math.dist(track[k], track[k + 1]) for k in range(i, j)), default=math.inf)
            if j > i + 1 and recorded <= jump_px:
                coalesced_steps += 1
                continue
            problems.append(f"{episodes[index]['name']}: a touch moved {math.dist(a, b) / px_per_mm:.1f} mm between two events,"
                            f" from {a} to {b} (the jump limit is {faults.JUMP_MM:.0f} mm; the finger's recorded frames"
                            f" there: {j - i}, the longest {recorded / px_per_mm:.1f} mm)")

    # The kernel's stamps: of each cancel on the virtual device (its slot turned MT_TOOL_PALM),
    # in the order libinput cancelled, and of each contact's landing on the panel (the `t` of
    # the first screen.contacts value that has it).
    cancel_stamps = [stamp for stamp, kind, code, value in stamped.events if (kind, code, value) == (3, MT_TOOL, 2)]
    cancelled = [touch for touch in shown if touch["end"] == "cancel"]
    contact_of = {id(touch): contact for touch, contact in pairs}
    def landed_at(touch):
        contact = contact_of.get(id(touch))
        return next((event["t"] for event in client.events if event.get("event") == "value" and event.get("stream") == "screen.contacts"
                     and any(item["id"] == contact for item in event["value"])), None)

    said = {}
    for index, episode in enumerate(episodes):
        name, touches = episode["name"], by_episode[index]
        ends = [touch["end"] for touch in touches]
        what = f"{name} {episode['drawn']}"
        if name == "stuck":
            if ends != ["cancel"]:
                problems.append(f"{what}: libinput's touches ended {ends}, not one TOUCH_CANCEL")
            elif len(cancel_stamps) != len(cancelled):
                problems.append(f"{what}: libinput cancelled {len(cancelled)} touches, the virtual device sent MT_TOOL_PALM {len(cancel_stamps)} times")
            elif landed_at(touches[0]) is None:
                problems.append(f"{what}: never published on screen.contacts")
            else:
                after = cancel_stamps[cancelled.index(touches[0])] - landed_at(touches[0])
                said[name] = f"cancelled {after:.2f} s after landing"
                if not FAULTS_STUCK_AFTER - STUCK_EARLY <= after <= FAULTS_STUCK_AFTER + STUCK_LATE:
                    problems.append(f"{what}: cancelled on the virtual device {after:.2f} s after it landed on the panel,"
                                    f" not about stuck_after = {FAULTS_STUCK_AFTER} s")
        elif name == "palm":
            if touches:
                problems.append(f"{what}: shown, {len(touches)} touch(es) ending {ends}; a palm from its landing is never shown")
            else:
                said[name] = "never shown"
        elif name == "palm-grown":
            if ends != ["cancel"]:
                problems.append(f"{what}: libinput's touches ended {ends}, not one TOUCH_CANCEL")
            else:
                said[name] = f"{len(touches[0]['positions'])} positions then TOUCH_CANCEL"
        elif name == "jump":
            if ends != ["cancel", "up"]:
                problems.append(f"{what}: libinput's touches ended {ends}, not a TOUCH_CANCEL (before the jump) then a TOUCH_UP (after it)")
            else:
                said[name] = f"{episode['drawn']['jump_mm']} mm: {len(touches[0]['positions'])} positions then TOUCH_CANCEL, {len(touches[1]['positions'])} then TOUCH_UP"
        else:
            if ends != ["up"]:
                problems.append(f"{what}: a near miss, but libinput's touches ended {ends}, not one TOUCH_UP")
            else:
                touch = touches[0]
                track = published.get(id(touch))
                why = track_problems(touch["positions"], track) if track else "never published"
                # Whole: from where the finger landed to where it lifted.
                if not why and (distance(track[0], samples[index][0]) > 0.01 or distance(track[-1], samples[index][-1]) > 0.01):
                    why = f"published from {track[0]} to {track[-1]}, the finger went from {samples[index][0]} to {samples[index][-1]}"
                if why:
                    problems.append(f"{what}: {why}")
                else:
                    said[name] = f"{len(touch['positions'])} positions then TOUCH_UP"
        for touch in touches:
            track = published.get(id(touch))
            why = track_problems(touch["positions"], track) if track else "never published"
            if why and episode["fault"]:
                problems.append(f"{what}: a touch libinput showed is not as published: {why}")
    expected = {"stuck": 1, "palms": 2, "jumps": 1}
    counted = {key: filtered.get(key) for key in expected}
    if counted != expected:
        problems.append(f"stats' filtered counted {counted}, not each fault once {expected} (all: {filtered})")
    said_lines = watcher.touch_lines().splitlines()
    if len(said_lines) > 60:
        said_lines = said_lines[:20] + [f"… ({len(said_lines) - 50} lines)"] + said_lines[-30:]
    check(not problems, "\n".join(problems) + "\nlibinput said:\n" + "\n".join(said_lines) + f"\nfilters: {device['filters']}" + seed_note())
    return (f"seed {seed}, {drawn['rate_hz']} Hz, {len(episodes)} fingers in the order {', '.join(e['name'] for e in episodes)}: "
            + "; ".join(f"{name} {said[name]}" for name in faults.FAULTS + faults.NEAR_MISSES)
            + f"; filtered {counted}; motiond took in {frames} frames, {coalesced} coalesced"
            + (f" ({coalesced_steps} moves past the jump limit between two events over coalesced frames)" if coalesced_steps else "")
            + f"; {recording}")


def virtual_device_gone(node):
    name = os.path.basename(node)
    return not os.path.exists(f"/sys/class/input/{name}") and not os.path.exists(node)


def virtual_sigkill():
    """SIGKILL of motiond: the kernel destroys the virtual touchscreen with motiond's uinput
    descriptor (its sysfs and /dev nodes go, libinput lists it no more) and releases the
    panel's grab: the panel can be grabbed and read again."""
    finish()
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
        reader = os.open(panel.node, os.O_RDONLY | os.O_NONBLOCK)
        try:
            panel.play()
            events = wait_until("a reader of the panel to see the next drag", lambda: pending_events(reader))
        finally:
            os.close(reader)
    return f"{node} gone, libinput lists it no more; {panel.node} grabbed again and read ({events} events)"


def virtual_grab():
    """While motiond shows the panel on a virtual touchscreen, another reader of the panel gets
    nothing (the grab), and the virtual device gets the drag; where motiond cannot open
    /dev/uinput (its own user, as shipped, without a rule for uinput) the panel is not grabbed,
    is read by others, and health says why."""
    finish()
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
                wait_until(f"motiond to take in the drag's {frames} frames", lambda: processed(client) >= frames)
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
            other = os.open(panel.node, os.O_RDONLY | os.O_NONBLOCK)
            try:
                panel.play()
                events = wait_until("another reader of the ungrabbed panel to see the drag", lambda: pending_events(other))
            finally:
                os.close(other)
            check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    return (f"grabbed: another reader saw nothing, {virtual} events on {node}; without uinput: not grabbed, another reader saw"
            f" {events} events, health: {health['problems']}")


# The most the median frame may take to show, panel to virtual device, in milliseconds.
LATENCY_LIMIT = 100


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def virtual_latency():
    """How long after the panel's event the apps get it: each frame written to the panel's
    node (as evemu-play writes, the kernel stamping it during the write), at 100 Hz, and
    the virtual device's SYN_REPORT for it, as an evdev reader gets it (the kernel's stamp
    when motiond wrote it), both on CLOCK_MONOTONIC. Fails only if a frame never shows."""
    finish()
    count = 300
    with Panel(DRAG) as panel, Daemon([], name="latency", config=write_config("latency.toml", VIRTUAL_CONFIG)) as daemon:
        client = Client(daemon.socket)
        node = virtual_node(client)
        wait_until(f"motiond to grab {panel.node}",
                   lambda: any(d["node"] == panel.node and d["grabbed"] for d in client.request("devices")["devices"]))
        reader = os.open(node, os.O_RDONLY | os.O_NONBLOCK)
        writer = os.open(panel.node, os.O_WRONLY)
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
                    check(ready, f"frame {index} written to {panel.node} never showed on {node}")
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
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    with open("/sys/devices/system/clocksource/clocksource0/available_clocksource") as source:
        where = "KVM" if "kvm-clock" in source.read() else "TCG (no KVM: QEMU emulates the CPU), debug build"
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


def all_tests():
    """Every test by name, in the order they run."""
    tests = {}
    for path in bundled_recordings():
        name = os.path.relpath(path, REPOSITORY)
        tests["recording " + name] = (lambda path=path: recording_test(path))
    for name in sorted(phantom_expectations()):
        if name in PHANTOMS_NOT_IN_THE_LAB:
            continue
        tests["phantoms " + os.path.relpath(os.path.join(PHANTOMS, name), REPOSITORY)] = (lambda name=name: phantom_recording_test(name))
    tests["hotplug"] = hotplug
    tests["dropped events"] = dropped_events
    tests["grab"] = grab
    tests["permissions"] = permissions
    for path, stretch in virtual_plays():
        tests["virtual " + os.path.relpath(path, REPOSITORY)] = (
            lambda path=path, stretch=stretch: virtual_recording_test(path, stretch, all_at_once=stretch != 1))
    tests["virtual claim and cancel"] = virtual_claim_and_cancel
    tests["virtual lift and land"] = virtual_lift_and_land
    tests["virtual field faults"] = virtual_field_faults
    tests["virtual sigkill"] = virtual_sigkill
    tests["virtual grab"] = virtual_grab
    tests["virtual latency"] = virtual_latency
    return tests
