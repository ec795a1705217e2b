"""The kernel lab's tests, by family: motiond against a real kernel's evdev, uinput and udev.

Each test is what a kiosk would see, checked as a client sees it (the socket protocol,
docs/protocol.md) or as a compositor reads the virtual touchscreen (libinput). The families:

- preparing.py: the recordings as the lab plays them, their replays (computed on the host),
  and `kernel passes recordings`: the kernel passes each prepared file on event for event;
- recordings.py: `recording FILE`, each bundled recording played once, judged as motiond's
  clients hear it and as libinput reads the virtual touchscreen;
- phantoms.py: `phantoms FILE`, the phantom filters' recordings and their counts;
- devices.py: hotplug, SYN_DROPPED, the grab, the node's permissions as shipped;
- virtual_tests.py and field_faults.py: the virtual touchscreen's own cases.

labkit.py has what they are made of (a panel, its player, motiond, a client, the one wait for
frames, the bench one motiond serves a family from), with a deadline on every wait.
"""
import os

import devices
import field_faults
import phantoms
import preparing
import recordings
import virtual_tests
from labkit import REPOSITORY, SCRATCH, Bench, kill_leftovers, recording_files

write_expectations = preparing.write_expectations


def prepare():
    """Once per guest: the tests may run as other users, who need the scratch folder."""
    os.chmod(SCRATCH, 0o1777)


def clean_up():
    """After every test: whatever it left running is killed."""
    kill_leftovers()


def finish():
    """At the end of the run: the bench still running is stopped."""
    Bench.finish()


def estimate(name):
    """About how long a test takes in a guest without KVM (seconds): a recording's length and
    the fixed cost of its panel, or a test's usual time. For sharing the tests among guests."""
    family, _, path = name.partition(" ")
    if family in ("recording", "phantoms"):
        with open(recording_files(os.path.join(REPOSITORY, path))[1]) as source:
            times = [float(line.split()[1]) for line in source if line.startswith("E:")]
        # A dense recording is played slower without KVM (recordings.paces).
        pace = preparing.emulated_paces(os.path.join(REPOSITORY, path))[0] if family == "recording" else 1
        # The panel made and announced, the scene reset, the panel removed: measured without KVM.
        return pace * (times[-1] - times[0] if times else 0) + (1 if family == "recording" else 3)
    return {"kernel": 30, "virtual field faults": 16}.get(family if family == "kernel" else name, 7)


def plan(names, guests):
    """`names` shared among at most `guests` guests for about equal estimated times (the
    longest first, each to the guest with the least so far), each guest's in their order, so
    that a family's tests follow each other and share their motiond."""
    runs = [[] for _ in range(min(guests, len(names)))]
    spent = [0.0] * len(runs)
    for name in sorted(names, key=estimate, reverse=True):
        guest = spent.index(min(spent))
        runs[guest].append(name)
        spent[guest] += estimate(name)
    order = {name: index for index, name in enumerate(names)}
    return [sorted(run, key=order.get) for run in runs if run]


def alone(test):
    """A test with a motiond of its own: no bench's motiond may be reading (and grabbing)
    the panels it makes."""
    def run():
        Bench.finish()
        return test()
    return run


def all_tests():
    """Every test by name, in the order they run: the families that share one motiond (a
    bench) each together."""
    tests = {"kernel passes recordings": alone(preparing.kernel_passes_recordings)}
    for path in preparing.played_recordings():
        tests["recording " + os.path.relpath(path, REPOSITORY)] = (lambda path=path: recordings.recording_test(path))
    for name in sorted(phantoms.phantom_expectations()):
        if name not in phantoms.PHANTOMS_NOT_IN_THE_LAB:
            tests["phantoms " + os.path.relpath(os.path.join(phantoms.PHANTOMS, name), REPOSITORY)] = (
                lambda name=name: phantoms.phantom_recording_test(name))
    tests["hotplug"] = alone(devices.hotplug)
    tests["dropped events"] = alone(devices.dropped_events)
    tests["grab"] = alone(devices.grab)
    tests["permissions"] = alone(devices.permissions)
    tests["virtual lift and land"] = alone(virtual_tests.virtual_lift_and_land)
    tests["virtual field faults"] = alone(field_faults.virtual_field_faults)
    tests["virtual sigkill"] = alone(virtual_tests.virtual_sigkill)
    tests["virtual grab"] = alone(virtual_tests.virtual_grab)
    tests["virtual withdraw"] = alone(virtual_tests.virtual_withdraw)
    tests["virtual latency"] = alone(virtual_tests.virtual_latency)
    return tests
