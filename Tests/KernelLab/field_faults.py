"""Field faults and their near misses (faults.py), drawn from a seed, played on a grabbed
panel under motiond with a virtual touchscreen and read with libinput.
"""
import math
import os
import random

import faults
import labkit
from labkit import (SCRATCH, Client, Daemon, LabFailure, Panel, check, device_event, note, processed,
                    wait_for_frames, wait_until, write_config)
from virtual_device import (MT_TOOL, SCREEN_HEIGHT, SCREEN_WIDTH, VIRTUAL_CONFIG, VIRTUAL_OUTPUT, VIRTUAL_TOLERANCE,
                            DebugEvents, StampedEvents, contact_tracks, distance, on_screen, pair_touches,
                            track_problems, virtual_node)

# The stuck filter's time in the faults' own configuration: the shipped 30 s would make the
# test minutes long. (VIRTUAL_CONFIG, which the other virtual tests share, keeps the default.)
FAULTS_STUCK_AFTER = 1.5
FAULTS_CONFIG = VIRTUAL_CONFIG.replace(f'virtual_touchscreen = "{VIRTUAL_OUTPUT}"\n',
                                       f'virtual_touchscreen = "{VIRTUAL_OUTPUT}"\nstuck_after = {FAULTS_STUCK_AFTER}\n')
# How long after the stuck finger landed (the panel's kernel stamp of its landing, as motiond
# published it) the virtual device may cancel it (the kernel's stamp of MT_TOOL_PALM there):
# no sooner than stuck_after, and later only by the guest's latency in firing the timer.
STUCK_EARLY, STUCK_LATE = 0.01, 0.6
# The seed the faults are drawn from unless MOTIOND_TEST_SEED says another.
DEFAULT_SEED = 1


def lab_seed():
    """The faults' seed: the suite's one seed, MOTIOND_TEST_SEED (a number, 1 unless set;
    `random` draws one), which scripts/kernel-test hands over as OUT/seed, having drawn it
    where asked to, so that the number printed draws the same faults again."""
    given = os.environ.get("MOTIOND_TEST_SEED")
    if not given and labkit.OUT and os.path.exists(os.path.join(labkit.OUT, "seed")):
        given = open(os.path.join(labkit.OUT, "seed")).read().strip()
    if given == "random":
        return random.SystemRandom().randrange(1 << 32)
    return int(given) if given else DEFAULT_SEED


def virtual_field_faults():
    """Field faults and their near misses (Tests/KernelLab/faults.py), drawn from a seed,
    played on a grabbed panel under motiond with a virtual touchscreen and read with libinput:
    the stuck finger cancelled about stuck_after after it landed, the palm never shown, the
    finger that grew into a palm cancelled, the jump's first part cancelled and no touch
    moving more than the jump limit between two events; each near miss shown whole, as
    screen.contacts published it, and lifted; no touch left down; each fault counted once in
    stats' `filtered`."""
    seed = lab_seed()
    directory = os.path.join(labkit.OUT or SCRATCH, "faults")
    os.makedirs(directory, exist_ok=True)
    recording, drawn = faults.generate(seed, directory, FAULTS_STUCK_AFTER)
    episodes = drawn["episodes"]
    note(f"faults seed {seed}: {[episode['name'] for episode in episodes]} at {drawn['rate_hz']} Hz")
    samples = fault_samples(recording, len(episodes))
    played = play_faults(recording, directory)
    shown, tracks = played["shown"], played["tracks"]
    problems = []
    if played["down"] or played["left_down"]:
        problems.append(f"left down at the end: {played['down']} touch(es) in libinput, screen.contacts {played['left_down']}")
    by_episode = {index: [] for index in samples}
    for touch in shown:
        index = owner(touch, samples)
        if index is None:
            problems.append(f"libinput showed a touch at {touch['positions'][0]} where no finger of the recording was")
        else:
            by_episode[index].append(touch)
    pairs, unpaired = pair_touches(shown, tracks)
    if unpaired:
        problems.append(f"motiond published {len(unpaired)} contact(s) libinput never showed: {[tracks[c][:2] for c in unpaired]}")
    jumps, coalesced_steps = jump_problems(shown, samples, episodes)
    problems += jumps
    said, wrong = episode_verdicts(episodes, by_episode, samples, pairs, tracks, played)
    problems += wrong
    expected = {"stuck": 1, "palms": 2, "jumps": 1}
    counted = {key: played["filtered"].get(key) for key in expected}
    if counted != expected:
        problems.append(f"stats' filtered counted {counted}, not each fault once {expected} (all: {played['filtered']})")
    said_lines = played["touch_lines"].splitlines()
    if len(said_lines) > 60:
        said_lines = said_lines[:20] + [f"… ({len(said_lines) - 50} lines)"] + said_lines[-30:]
    check(not problems, "\n".join(problems) + "\nlibinput said:\n" + "\n".join(said_lines) + f"\nfilters: {played['filters']}"
          + f"\n(seed {seed}: MOTIOND_TEST_SEED={seed} draws them again; the recording: {recording})")
    return (f"seed {seed}, {drawn['rate_hz']} Hz, {len(episodes)} fingers in the order {', '.join(e['name'] for e in episodes)}: "
            + "; ".join(f"{name} {said[name]}" for name in faults.FAULTS + faults.NEAR_MISSES)
            + f"; filtered {counted}; motiond took in {played['frames']} frames, {played['coalesced']} coalesced"
            + (f" ({coalesced_steps} moves past the jump limit between two events over coalesced frames)" if coalesced_steps else "")
            + f"; {recording}")


# Positions in screen pixels, as motiond maps the panel's units onto the whole screen.
SCALE_X, SCALE_Y = SCREEN_WIDTH / (faults.XMAX + 1), SCREEN_HEIGHT / (faults.YMAX + 1)
PX_PER_MM = faults.UNITS * min(SCALE_X, SCALE_Y)
JUMP_PX = faults.JUMP_MM * faults.UNITS * max(SCALE_X, SCALE_Y)


def fault_samples(recording, count):
    """Each episode's finger positions in screen pixels, frame by frame (one finger at a time)."""
    samples = {index: [] for index in range(count)}
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
                point = (x * SCALE_X, y * SCALE_Y)
                if not samples[episode] or samples[episode][-1] != point:
                    samples[episode].append(point)
    return samples


def owner(touch, samples):
    """The episode a touch libinput showed belongs to: the one with a position where it landed
    (the episodes are one finger at a time, each landing elsewhere)."""
    first = touch["positions"][0]
    nearest = min(samples, key=lambda index: min(distance(first, on_screen(point)) for point in samples[index]))
    return nearest if min(distance(first, on_screen(point)) for point in samples[nearest]) <= 1.0 else None


def play_faults(recording, directory):
    """Plays the faults to a motiond of their own, libinput and a stamped reader on the virtual
    touchscreen; what they saw."""
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
            # How many frames motiond counts, the filters decide: done when the count stays.
            frames, _ = wait_for_frames(client, before)
            try:
                wait_until("libinput to see every touch end", lambda: watcher.touches() and watcher.fingers_down() == 0, seconds=10)
            except LabFailure:
                pass
            stats = client.request("stats")
            played = {"filtered": stats.get("filtered", {}).get(panel.node, {}), "frames": frames,
                      "coalesced": stats["frames_coalesced"] - coalesced_before,
                      "left_down": client.request("get", stream="screen.contacts")["value"],
                      "down": watcher.fingers_down(), "filters": device["filters"]}
            stamped.close()
        client.next_event(device_event("removed", panel.node), what=f"motiond to let go of {panel.node}")
        watcher.stop()
        client.drain()
        check(daemon.stop() == 0, f"motiond's exit status at SIGTERM:\n{daemon.log_text()}")
    played.update(shown=watcher.touches(), tracks=contact_tracks(client.events), events=client.events,
                  touch_lines=watcher.touch_lines(),
                  cancel_stamps=[stamp for stamp, kind, code, value in stamped.events if (kind, code, value) == (3, MT_TOOL, 2)])
    return played


def jump_problems(shown, samples, episodes):
    """No touch moves farther than the jump limit between two of its events, unless motiond,
    behind in a slow guest, coalesced frames between them (docs/protocol.md, Slow clients) in
    none of which the finger jumped: the recording's frames between the two positions each
    move less than the limit. The problems, and how many such coalesced moves there were."""
    problems, coalesced_steps = [], 0
    for touch in shown:
        index = owner(touch, samples)
        if index is None:
            continue
        track = samples[index]
        at = []
        for position in touch["positions"]:
            start = at[-1] if at else 0
            found = next((i for i in range(start, len(track)) if distance(position, on_screen(track[i])) <= VIRTUAL_TOLERANCE), None)
            at.append(start if found is None else found)
        for (a, b), (i, j) in zip(zip(touch["positions"], touch["positions"][1:]), zip(at, at[1:])):
            if math.dist(a, b) <= JUMP_PX:
                continue
            recorded = max((math.dist(track[k], track[k + 1]) for k in range(i, j)), default=math.inf)
            if j > i + 1 and recorded <= JUMP_PX:
                coalesced_steps += 1
                continue
            problems.append(f"{episodes[index]['name']}: a touch moved {math.dist(a, b) / PX_PER_MM:.1f} mm between two events,"
                            f" from {a} to {b} (the jump limit is {faults.JUMP_MM:.0f} mm; the finger's recorded frames"
                            f" there: {j - i}, the longest {recorded / PX_PER_MM:.1f} mm)")
    return problems, coalesced_steps


def episode_verdicts(episodes, by_episode, samples, pairs, tracks, played):
    """What became of each episode's finger against what its kind must become: (what each
    kind did, for the result; the problems)."""
    published = {id(touch): tracks[contact] for touch, contact in pairs}
    said, problems = {}, []
    for index, episode in enumerate(episodes):
        touches = by_episode[index]
        what = f"{episode['name']} {episode['drawn']}"
        verdict = EPISODE_RULES[episode["name"] if episode["fault"] else "near miss"]
        outcome = verdict(episode, touches, samples[index], published, pairs, played)
        if outcome.startswith("!"):
            problems.append(f"{what}: {outcome[1:]}")
        else:
            said[episode["name"]] = outcome
        for touch in touches:
            track = published.get(id(touch))
            why = track_problems(touch["positions"], track) if track else "never published"
            if why and episode["fault"]:
                problems.append(f"{what}: a touch libinput showed is not as published: {why}")
    return said, problems


def stuck_verdict(episode, touches, samples, published, pairs, played):
    """Cancelled on the virtual device about stuck_after after it landed on the panel: from
    the kernel's stamp of its landing (the `t` motiond published it with) to the stamp of the
    virtual device's MT_TOOL_PALM for it."""
    ends = [touch["end"] for touch in touches]
    cancelled = [touch for touch in played["shown"] if touch["end"] == "cancel"]
    if ends != ["cancel"]:
        return f"!libinput's touches ended {ends}, not one TOUCH_CANCEL"
    if len(played["cancel_stamps"]) != len(cancelled):
        return f"!libinput cancelled {len(cancelled)} touches, the virtual device sent MT_TOOL_PALM {len(played['cancel_stamps'])} times"
    contact = dict((id(touch), contact) for touch, contact in pairs).get(id(touches[0]))
    landed = next((event["t"] for event in played["events"] if event.get("event") == "value" and event.get("stream") == "screen.contacts"
                   and any(item["id"] == contact for item in event["value"])), None)
    if landed is None:
        return "!never published on screen.contacts"
    after = played["cancel_stamps"][cancelled.index(touches[0])] - landed
    if not FAULTS_STUCK_AFTER - STUCK_EARLY <= after <= FAULTS_STUCK_AFTER + STUCK_LATE:
        return f"!cancelled on the virtual device {after:.2f} s after it landed on the panel, not about stuck_after = {FAULTS_STUCK_AFTER} s"
    return f"cancelled {after:.2f} s after landing"


def palm_verdict(episode, touches, samples, published, pairs, played):
    if touches:
        return f"!shown, {len(touches)} touch(es) ending {[touch['end'] for touch in touches]}; a palm from its landing is never shown"
    return "never shown"


def grown_palm_verdict(episode, touches, samples, published, pairs, played):
    ends = [touch["end"] for touch in touches]
    if ends != ["cancel"]:
        return f"!libinput's touches ended {ends}, not one TOUCH_CANCEL"
    return f"{len(touches[0]['positions'])} positions then TOUCH_CANCEL"


def jump_verdict(episode, touches, samples, published, pairs, played):
    ends = [touch["end"] for touch in touches]
    if ends != ["cancel", "up"]:
        return f"!libinput's touches ended {ends}, not a TOUCH_CANCEL (before the jump) then a TOUCH_UP (after it)"
    return (f"{episode['drawn']['jump_mm']} mm: {len(touches[0]['positions'])} positions then TOUCH_CANCEL,"
            f" {len(touches[1]['positions'])} then TOUCH_UP")


def near_miss_verdict(episode, touches, samples, published, pairs, played):
    """Shown whole, as published, from where the finger landed to where it lifted, and lifted."""
    ends = [touch["end"] for touch in touches]
    if ends != ["up"]:
        return f"!a near miss, but libinput's touches ended {ends}, not one TOUCH_UP"
    touch = touches[0]
    track = published.get(id(touch))
    why = track_problems(touch["positions"], track) if track else "never published"
    if not why and (distance(track[0], samples[0]) > 0.01 or distance(track[-1], samples[-1]) > 0.01):
        why = f"published from {track[0]} to {track[-1]}, the finger went from {samples[0]} to {samples[-1]}"
    return f"!{why}" if why else f"{len(touch['positions'])} positions then TOUCH_UP"


EPISODE_RULES = {"stuck": stuck_verdict, "palm": palm_verdict, "palm-grown": grown_palm_verdict, "jump": jump_verdict,
                 "near miss": near_miss_verdict}
