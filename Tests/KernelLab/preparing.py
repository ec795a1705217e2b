"""The recordings as the lab plays them, and what their replays say a kiosk must see.

A recording is prepared (`prepare_recording`) into one evemu file the kernel passes on as it
is; the replays it is compared with are of that same file, computed on the host before the
guest boots (`write_expectations`), where they take a fraction of the time. That the kernel
passes a prepared file on exactly is checked once per kernel and file (`passes_through`), apart
from motiond.
"""
import fcntl
import glob
import hashlib
import json
import os
import struct

import labkit
from labkit import (MOTIONCTL, RECORDINGS, REPOSITORY, SCRATCH, STEP, Player, check, frame_contents, json_lines,
                    recording_files, run)
from virtual_device import VIRTUAL_CONFIG, VIRTUAL_OUTPUT

# Made for the lab: a palm cancelled mid-touch, a palm never shown, a lift, and a finger still
# down at the unplug (its comments say when each happens).
VIRTUAL_CANCELS = os.path.join(REPOSITORY, "Tests", "KernelLab", "recordings", "virtual-cancels.evemu")
# Six fingers and the six ghosts an infrared panel reported with them, which the filters
# remove (Tests/Fixtures/phantoms/README.md): the apps see only the six.
VIRTUAL_GHOSTS = os.path.join(REPOSITORY, "Tests", "Fixtures", "phantoms", "ghosts.evemu")
# A recording with more fingers down at once than this (the Dell Canvas's 5 fingers, the Wacom
# DTH-2242's 10) must show that many touches down at once to libinput, slots beyond four; the
# guest, too slow at its own pace (the kernel dropped events for motiond, or motiond coalesced
# frames and a gesture then differed), plays a recording again this many times slower, and
# the dense ones are replayed that way on the host ahead.
DENSE, SLOWER = 4, 3


def merged_config():
    """The shipped configuration (config/motiond.toml: its elements, gestures and filters)
    with every panel shown on a virtual touchscreen, and every element letting its touches
    through to the apps as well (`claim_touches = false`): one play then proves both what
    motiond's clients hear and what the apps read, each against its replay."""
    with open(os.path.join(REPOSITORY, "config", "motiond.toml")) as source:
        shipped = source.read()
    lines = []
    for line in shipped.splitlines():
        lines.append(line)
        if line.strip() == "[[device]]":
            lines.append(f'virtual_touchscreen = "{VIRTUAL_OUTPUT}"')
        elif line.strip() == "[[element]]":
            lines.append("claim_touches = false")
    table = VIRTUAL_CONFIG[VIRTUAL_CONFIG.index("[[virtual_touchscreen]]"):]
    return "\n".join(lines) + "\n\n" + table


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

    With `stretch`, every event's time after the first is that many times as far from it: the
    recording played slower, for a guest too slow to read it at its own pace (see
    `recording_test`). (Times themselves multiplied went past the latest time motiond reads,
    2^32 s, at six times a recording stamped in 2013.)"""
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
    first = None
    for line in as_the_kernel_passes(recorded, axes):
        if stretch != 1:
            fields = line.split(None, 2)
            first = float(fields[1]) if first is None else first
            line = f"E: {first + (float(fields[1]) - first) * stretch:.6f} {fields[2]}"
        lines.append(line)
    prepared = os.path.join(directory, prepared_name(path, stretch))
    with open(prepared, "w") as out:
        out.write("\n".join(lines) + "\n")
    return prepared


def prepared_name(path, stretch=1):
    return os.path.relpath(path, REPOSITORY).replace("/", "__") + (f".x{stretch}" if stretch != 1 else "") + ".evemu"


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



def evemu_events(path):
    """(type, code, value) of an evemu file's events, in order."""
    with open(path) as source:
        return [(int(fields[2], 16), int(fields[3], 16), int(fields[4]))
                for fields in (line.split() for line in source if line.startswith("E:"))]



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




def played_recordings():
    """Every recording the lab plays through motiond: the bundled ones and the two made for the
    virtual touchscreen's cancels and ghosts."""
    return bundled_recordings() + [VIRTUAL_CANCELS, VIRTUAL_GHOSTS]


def phantom_recordings():
    """The phantom filters' recordings (phantoms.py plays them)."""
    return sorted(glob.glob(os.path.join(REPOSITORY, "Tests", "Fixtures", "phantoms", "*.evemu")))


def dense(path):
    return most_fingers(path) > DENSE


def emulated_paces(path):
    """How many times slower a recording is played in an emulated CPU, first and then if the
    guest could not keep up. A dense recording starts slower: at their own pace the Dell
    Canvas's 5 fingers and the Wacom's 10 made the kernel drop events for the guest's debug
    build in every run on a loaded two-core host, and the Wacom three times slower in one run
    of two, so a recording of more than five fingers starts six times slower."""
    if not dense(path):
        return 1, SLOWER
    first = SLOWER * (2 if most_fingers(path) > 5 else 1)
    return first, 2 * first


def replay(recording, config):
    """What motionctl's replay of a prepared recording with `config` says a kiosk must see:
    how many frames the panel sent (`--raw`), the contacts the apps must be shown (each the
    filters kept, in landing order, with its positions and end), how many fingers the panel
    had, and every value and gesture event motiond's engine publishes (`simulate`; None when
    a finger is still down at the end)."""
    def frames(*flags):
        return frame_contents(json_lines(run([MOTIONCTL, "frames", recording, "--json", "--config", config, *flags]), "the replay"))
    frames_raw = frames("--raw")
    raw = replayed_contacts(frames_raw)
    # A finger still down when the recording ends is cancelled by the unplug live; the engine's
    # replay would wait for it for ever. Only the apps' side is judged of such a recording.
    simulated = None
    if all(contact["end"] for contact in raw):
        simulated = json_lines(run([MOTIONCTL, "simulate", recording, "--config", config, "--events", "--json"],
                                   seconds=4 * STEP), "simulate")
    return {"frames": len(frames_raw), "fingers": len(raw), "contacts": replayed_contacts(frames()), "simulated": simulated}


def prepared(path, stretch=1):
    """The recording prepared: the host's copy when it made one before the guest booted
    (LAB_EXPECTED; Python is slow in an emulated CPU), else made here in SCRATCH."""
    directory = os.environ.get("LAB_EXPECTED")
    if directory:
        kept = os.path.join(directory, prepared_name(path, stretch))
        if os.path.exists(kept):
            return kept
    return prepare_recording(path, SCRATCH, stretch)


def write_expectations(directory):
    """The recordings prepared and replayed before the guest boots (on the host the replays
    take a fraction of the time), for `expectation` to read in the guest. Only the dense
    recordings, which an emulated CPU always plays slower (recordings.paces), are replayed
    slower ahead."""
    os.makedirs(directory, exist_ok=True)
    config = os.path.join(directory, "recordings.toml")
    with open(config, "w") as out:
        out.write(merged_config())
    for path in played_recordings():
        for stretch in sorted({1, *emulated_paces(path)}) if dense(path) else (1,):
            file = prepare_recording(path, directory, stretch)
            with open(file + ".json", "w") as out:
                json.dump(replay(file, config), out)
    for path in phantom_recordings():
        prepare_recording(path, directory)


def expectation(path, config, stretch=1):
    """The prepared recording and its `replay`: from the host's run when there was one
    (LAB_EXPECTED), else made here (a slower play the host did not foresee)."""
    recording = prepared(path, stretch)
    directory = os.environ.get("LAB_EXPECTED")
    kept = directory and os.path.join(directory, os.path.basename(recording) + ".json")
    if kept and os.path.exists(kept):
        with open(kept) as source:
            return recording, json.load(source)
    return recording, replay(recording, config)


# --- The kernel passes a prepared recording on as it is -------------------------------------

# uinput's ioctls (linux/uinput.h) and the bits each evemu "B:" line's type sets.
UI_DEV_CREATE, UI_DEV_SETUP, UI_ABS_SETUP, UI_SET_PROPBIT = 0x5501, 0x405C5503, 0x401C5504, 0x4004556E
UI_SET_BIT = {0x00: 0x40045564, 0x01: 0x40045565, 0x02: 0x40045566, 0x03: 0x40045567, 0x04: 0x40045568,
              0x05: 0x4004556D, 0x11: 0x40045569, 0x12: 0x4004556A, 0x15: 0x4004556B}


def ui_get_sysname(length):
    return 0x80000000 | (length << 16) | (0x55 << 8) | 44


class UinputPanel:
    """A device made from an evemu description straight through /dev/uinput, for as long as
    it is open: no process to start and nothing to wait for (the kernel makes the node within
    the ioctl), where `Panel` (evemu-device) takes a fraction of a second a device in an
    emulated CPU. udev and motiond have no part in what it is used for."""

    def __init__(self, description):
        name, ids, bits, properties, axes = "", [0, 0, 0, 0], {}, [], []
        with open(description) as source:
            for line in source:
                kind, _, rest = line.partition(": ")
                fields = rest.split()
                if kind == "N":
                    name = rest.strip()
                elif kind == "I":
                    ids = [int(field, 16) for field in fields]
                elif kind == "P":
                    properties += [int(field, 16) for field in fields]
                elif kind == "B":
                    bits.setdefault(int(fields[0], 16), []).extend(int(field, 16) for field in fields[1:])
                elif kind == "A":
                    axes.append([int(fields[0], 16)] + [int(field) for field in fields[1:]])
        self.descriptor = os.open("/dev/uinput", os.O_WRONLY | os.O_NONBLOCK)
        try:
            for event_type, mask in bits.items():
                codes = [index * 8 + bit for index, byte in enumerate(mask) for bit in range(8) if byte >> bit & 1]
                if event_type in UI_SET_BIT:
                    for number in codes:
                        fcntl.ioctl(self.descriptor, UI_SET_BIT[event_type], number)
                if event_type and codes:
                    # A type with codes is a type of the device, as evemu-device (libevdev)
                    # makes it, whether or not the description's "B: 00" says so.
                    fcntl.ioctl(self.descriptor, UI_SET_BIT[0], event_type)
            for number in (index * 8 + bit for index, byte in enumerate(properties) for bit in range(8) if byte >> bit & 1):
                fcntl.ioctl(self.descriptor, UI_SET_PROPBIT, number)
            for code, minimum, maximum, fuzz, flat, *resolution in axes:
                fcntl.ioctl(self.descriptor, UI_ABS_SETUP, struct.pack("HHiiiiii", code, 0, 0, minimum, maximum, fuzz, flat,
                                                                      resolution[0] if resolution else 0))
            fcntl.ioctl(self.descriptor, UI_DEV_SETUP, struct.pack("HHHH80sI", *ids[:4], name.encode()[:79], 0))
            fcntl.ioctl(self.descriptor, UI_DEV_CREATE)
            sysname = fcntl.ioctl(self.descriptor, ui_get_sysname(64), bytes(64)).split(b"\0", 1)[0].decode()
            events = glob.glob(f"/sys/devices/virtual/input/{sysname}/event*")
            check(events, f"uinput made {sysname} with no event node")
            self.node = "/dev/input/" + os.path.basename(events[0])
        except Exception:
            os.close(self.descriptor)
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        os.close(self.descriptor)  # the kernel removes the device with its last descriptor


def passed_on(prepared):
    """What the kernel's input core passes on of a prepared recording, written to a device
    made from its description: each frame is written to the node and what it passed read
    back at once (the kernel hands an event to every reader, the writer too, before the
    write returns), so no pace is needed and no buffer overflows. (type, code, value) of each."""
    read = []
    with UinputPanel(prepared) as panel:
        descriptor = os.open(panel.node, os.O_RDWR | os.O_NONBLOCK)
        try:
            for _, events in Player(panel.node, prepared).frames:
                os.write(descriptor, b"".join(Player.EVENT.pack(0, 0, *event) for event in events))
                while True:
                    try:
                        data = os.read(descriptor, Player.EVENT.size * 64)
                    except BlockingIOError:
                        break
                    for offset in range(0, len(data), Player.EVENT.size):
                        read.append(Player.EVENT.unpack(data[offset:offset + Player.EVENT.size])[2:])
        finally:
            os.close(descriptor)
    return read


def passes_through(paths, cache_in, cache_out):
    """Checks that the kernel passes every prepared recording on as it is (the comparisons of
    the recordings' tests rest on it), once per kernel release and file: verdicts found in
    `cache_in` (the host's, from earlier runs) are not tried again; new ones go to
    `cache_out`. Returns (how many were tried, how many were known, the differences)."""
    release = os.uname().release
    known = {}
    if cache_in and os.path.exists(cache_in):
        with open(cache_in) as source:
            known = json.load(source).get(release, {})
    tried, differences, verdicts = 0, [], {}
    for path in paths:
        file = prepared(path)
        with open(file, "rb") as source:
            digest = hashlib.sha256(source.read()).hexdigest()
        if known.get(digest) == "passed on as it is":
            continue
        tried += 1
        expected, seen = evemu_events(file), passed_on(file)
        if seen == expected:
            verdicts[digest] = "passed on as it is"
            continue
        index = next((i for i, (a, b) in enumerate(zip(seen, expected)) if a != b), min(len(seen), len(expected)))
        differences.append(f"{os.path.relpath(path, REPOSITORY)}: the kernel passed on {len(seen)} events, the file has"
                           f" {len(expected)}; the first difference at event {index}: {seen[index:index + 3]} against"
                           f" {expected[index:index + 3]}")
    if cache_out:
        with open(cache_out, "w") as out:
            json.dump({release: verdicts}, out)
    return tried, len(paths) - tried, differences


def kernel_passes_recordings():
    """The test: every recording the lab plays, prepared, is passed on by this kernel event
    for event (type, code and value, in order)."""
    paths = played_recordings() + phantom_recordings()
    cache_in = os.environ.get("LAB_PASSTHROUGH_CACHE")
    tried, known, differences = passes_through(paths, cache_in, labkit.OUT and os.path.join(labkit.OUT, "passthrough.json"))
    check(not differences, "\n".join(differences))
    return (f"{len(paths)} recordings passed on event for event by {os.uname().release}:"
            f" {tried} tried now, {known} known from an earlier run")
