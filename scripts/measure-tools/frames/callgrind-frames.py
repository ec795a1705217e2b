#!/usr/bin/python3
"""Counts, with callgrind, the user-space instructions motiond and the floor spend per input
frame at one client subscribed to "*": a replay of K1 and of K2 plays (default 1 and 3) of the
bundled recording, each counted whole by callgrind; the difference of the two counts divided
by the input frames between them ((K2 - K1) x 150) is the cost per input frame, start-up and
shut-down cancelled out. callgrind counts instructions, not time, so the figure does not
depend on what else the machine does.

    callgrind-frames.py --motiond BIN [--repo DIR] [--out DIR] [--plays 1,3] [--only motiond|floor]
                        [--capture FILE] [--retries 3] [--split SYMBOL] [--started TEXT]

BIN: motiond with no DWARF (`strip --strip-debug`: valgrind 3.19 cannot read the Swift
toolchain's DWARF 5). --repo: a checkout whose config/motiond.toml and
data/recordings/atmel-maxtouch-drag-up-down.evemu are used (default this repository); the
configuration's [[tuio]] tables are left out, as scripts/measure leaves them out.

motiond has no "play N times, then stop", and a --loop replay stopped by SIGTERM in the pause
between plays races with the next play. So each run replays one file, written here (--out
/tmp/cgf/pK.evemu): 3 s of nothing (a lone ABS_MT_SLOT 0), a warm-up play 10 times slower
than recorded, then K plays at the recorded speed, each starting 1 s after the previous one's
last frame, as --loop spaces them. No --loop: after the last play nothing more happens.
Why the warm-up: valgrind translates code the first time it runs, which made the first play's
loop late by 200 ms, and the replay coalesces frames that are due while the loop is late (the
work then differs from run to run); the slow warm-up runs every path of a play first, with its
frames far enough apart that none is coalesced.

A run: `valgrind --tool=callgrind --dump-before=ReplayDriver.start() BIN --config CFG
--socket S --replay plays-K.evemu`. The profile comes in two parts: start-up up to
ReplayDriver.start() (with the recording read, assembled into frames and filtered: the replay
plays precomputed frames) in NAME-startup.callgrind, then the replay and the stop in
NAME.callgrind, from which the per-frame figures are. One client (this script, in Python:
not counted) connects once motiond has logged that its replay started (so that the
subscription falls in the second part in every run), subscribes to "*", reads every line, and
once it has read the last play's values (every input frame's screen.contacts, and the card's
state back at rest after the spring's last frame) asks for `stats` and sends SIGTERM. A run is
accepted only if the client read exactly the screen.contacts and card.state values a native
calibration run read, card.position within 3 % (clock frames are on the wall clock: under
valgrind one is now and then missed; analyze.py corrects for them), and `stats` says every
input frame was processed and none coalesced; otherwise it is run again (--retries).

The floor (scripts/measure-tools/floor.c, built as scripts/measure builds it, cc -O2 -Wall)
replays a capture, in scripts/measure's format, of what motiond sent one subscriber during
play 2 of the native calibration run of BIN (or --capture FILE); it plays it K1 and K2 times
and is stopped once the client has read them all (checked by the floor's own count).

The files replayed are /tmp/cgf/pK.evemu, the same path in every run: the replayed device is
named "replay:PATH" in every screen.contacts value, so a longer path costs more per frame.

Writes into --out: plays-K.evemu (copies), the callgrind files (motiond-K.callgrind,
motiond-K-startup.callgrind, floor-K.callgrind), the lines the client read (*.lines), the
logs, the capture, results.json (totals, per-frame figures, what each run read). analyze.py
makes the tables from them; measure-baseline.sh runs both.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMES_PER_PLAY = None  # SYN_REPORTs in the recording

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--motiond", required=True)
parser.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
parser.add_argument("--out", default=os.path.join(HERE, "out"))
parser.add_argument("--plays", default="1,3")
parser.add_argument("--only", choices=["motiond", "floor"])
parser.add_argument("--capture")
parser.add_argument("--retries", type=int, default=3)
parser.add_argument("--slow", type=float, default=1.0,
                    help="the measured plays this many times slower than recorded: on a loaded machine valgrind's loop is late "
                         "at the recorded speed and frames are coalesced (compare only runs made with the same factor)")
parser.add_argument("--valgrind", default="valgrind")
parser.add_argument("--dump-instr", action="store_true",
                    help="count each instruction apart (callgrind --dump-instr=yes), for footprint.py's lines and pages a frame's code spans")
parser.add_argument("--split", default="$s12MotionServer12ReplayDriverC5startyyAA14StartupFailureOYKF",
                    help="the (mangled) function before which callgrind dumps the start-up part (default ReplayDriver.start())")
parser.add_argument("--started", default="replaying", help="what motiond logs once its replay has started")
args = parser.parse_args()
RECORDING = os.path.join(args.repo, "data/recordings/atmel-maxtouch-drag-up-down.evemu")
CONFIG = os.path.join(args.repo, "config/motiond.toml")
os.makedirs(args.out, exist_ok=True)
CALLGRIND = [args.valgrind, "--tool=callgrind", f"--dump-instr={'yes' if args.dump_instr else 'no'}", "--collect-jumps=no",
             "--collect-systime=yes", "--separate-threads=no"]


def log(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def config_without_tuio():
    kept, skipping = [], False
    with open(CONFIG) as file:
        for line in file:
            header = line.strip()
            if header.startswith("["):
                skipping = header == "[[tuio]]"
            if not skipping:
                kept.append(line)
    path = os.path.join(args.out, "motiond-without-tuio.toml")
    with open(path, "w") as file:
        file.writelines(kept)
    return path


def frame_times():
    times, first = [], None
    with open(RECORDING) as file:
        for line in file:
            fields = line.split()
            if len(fields) < 5 or fields[0] != "E:":
                continue
            at = float(fields[1])
            first = at if first is None else first
            if int(fields[2], 16) == 0 and int(fields[3], 16) == 0:
                times.append(at - first)
    return times


class Client:
    """One connection subscribed to "*": every line kept with the time it was read."""

    def __init__(self, path, deadline):
        self.lines, self.pending = [], b""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.001)
        self.sock.sendall(b'{"id":1,"op":"subscribe","streams":["*"]}\n')
        self.sock.settimeout(0.05)
        self.values = {}  # stream -> values with seq > 0 read so far
        self.closed = False

    def poll(self):
        try:
            data = self.sock.recv(1 << 16)
        except socket.timeout:
            return False
        except ConnectionResetError:
            data = b""
        if not data:
            self.closed = True
            return False
        self.pending += data
        *complete, self.pending = self.pending.split(b"\n")
        for raw in complete:
            text = raw.decode()
            self.lines.append(text)
            line = json.loads(text)
            if line.get("event") == "value" and line.get("seq", 0) > 0:
                self.values[line["stream"]] = self.values.get(line["stream"], 0) + 1
        return True

    def stats(self):
        """Asks for `stats` (the frames taken and coalesced) and waits for the answer."""
        self.sock.sendall(b'{"id":2,"op":"stats"}\n')
        seen = len(self.lines)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.closed:
            self.poll()
            for text in self.lines[seen:]:
                line = json.loads(text)
                if line.get("id") == 2:
                    self.lines.remove(text)
                    return line.get("result")
            seen = len(self.lines)
        return None

    def drain(self, timeout):
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            self.poll()
        self.sock.close()


def wait_socket(path, process, deadline, what, logfile):
    while not os.path.exists(path):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            sys.exit(f"{what} did not listen on {path}; see {logfile}")
        time.sleep(0.001)


def stop(process, timeout):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)
        return False
    return True


LEAD = 3.0    # seconds of nothing before the first frame: the client subscribes, the loop is idle
GAP = 1.0     # between plays, as --loop pauses
WARM_UP = 10  # the warm-up play is this many times slower than the recording
RECORDINGS = "/tmp/cgf"  # where the replayed files are: see recording()


def recording(plays):
    """The bundled recording played `plays` times in one file, after a warm-up: LEAD s of
    nothing first (a lone ABS_MT_SLOT 0 at 0, which changes nothing), then the recording
    WARM_UP times slower (its frames far enough apart that the code valgrind translates the
    first time it runs delays none past the next: a frame due while the loop is late is
    coalesced, and the work would differ from run to run), then the plays, each shifted so that
    its first frame comes GAP s after the previous play's last, as --loop plays them.
    Returns the file, the time of the first measured play's first frame in it, the period."""
    header, events = [], []
    with open(RECORDING) as file:
        for line in file:
            (events if line.startswith("E:") else header).append(line)
    first = float(events[0].split()[1])
    length = float(events[-1].split()[1]) - first
    start = LEAD + WARM_UP * length + GAP
    played = args.slow * length
    # The replayed device's node is "replay:" + this path, and every screen.contacts value
    # names it: the path's length is work per frame (about 2 Ir per character per frame), so
    # it is the same short path in every run, whatever --out is (one measurement at a time).
    os.makedirs(RECORDINGS, exist_ok=True)
    path = os.path.join(RECORDINGS, f"p{plays}.evemu")
    with open(path, "w") as file:
        file.writelines(header)
        file.write("E: 0.000000 0003 002f 0000\t# EV_ABS / ABS_MT_SLOT 0 (callgrind-frames.py: the lead-in)\n")
        for play in range(-1, plays):
            for line in events:
                fields = line.split(None, 2)
                at = (LEAD + WARM_UP * (float(fields[1]) - first)) if play < 0 else start + play * (played + GAP) + args.slow * (float(fields[1]) - first)
                file.write(f"E: {at:.6f} {fields[2]}")
    shutil.copy(path, os.path.join(args.out, f"plays-{plays}.evemu"))
    return path, start, played + GAP


def motiond_command(config, plays):
    rec = recording(plays)[0]
    return lambda path: [args.motiond, "--config", config, "--socket", path, "--replay", rec]


def replay_base(values, frames):
    """When the replay started, on the monotonic clock, from its value lines (t, stream, seq,
    text): an input frame's values carry base + the frame's time in the recording, so the base
    is the value most (t - frame time) agree on, as scripts/measure finds its plays' starts."""
    times = sorted({v[0] for v in values})
    votes = sorted(t - offset for t in times for offset in frames)
    clusters, begin = [], 0
    for index in range(1, len(votes) + 1):
        if index == len(votes) or votes[index] - votes[index - 1] > 1e-8:
            clusters.append((index - begin, votes[begin]))
            begin = index
    base = max(clusters)[1]
    return base


def calibrate(config, plays):
    """A native replay of the concatenated recording of `plays` plays: the values of each play
    (the first starts from the configuration's scene, the later ones from where the previous
    left it) and, unless --capture, the floor's capture of play 2 in scripts/measure's format."""
    path = os.path.join(args.out, "calibration.sock")
    if os.path.exists(path):
        os.unlink(path)
    logfile = os.path.join(args.out, "calibration.log")
    rec, start, period = recording(plays)
    with open(logfile, "w") as logf:
        process = subprocess.Popen(motiond_command(config, plays)(path), stdout=subprocess.DEVNULL, stderr=logf)
        wait_socket(path, process, time.monotonic() + 30, "motiond", logfile)
        client = Client(path, time.monotonic() + 30)
        began = time.monotonic()
        while time.monotonic() < began + start + plays * period + 1.5:
            client.poll()
        stats = client.stats()
        stop(process, 10)
        client.drain(5)
    values = []
    for text in client.lines:
        line = json.loads(text)
        if line.get("event") == "value" and line.get("seq", 0) > 0:
            values.append((line["t"], line["stream"], line["seq"], text))
    one = frame_times()
    frames = [LEAD + WARM_UP * f for f in one] + [start + k * period + args.slow * f for k in range(plays) for f in one]
    base = replay_base(values, frames)
    starts = [-float("inf")] + [base + start + k * period for k in range(plays)] + [float("inf")]

    def one_play(a, b):
        return sorted((v for v in values if a - 1e-7 <= v[0] < b - 1e-7), key=lambda v: v[0])

    def counts(lines):
        result = {}
        for _, stream, _, _ in lines:
            result[stream] = result.get(stream, 0) + 1
        return result

    each = [counts(one_play(starts[k], starts[k + 1])) for k in range(plays + 1)]  # the warm-up, then the plays
    if sum(sum(c.values()) for c in each) != len(values):
        sys.exit(f"calibration: {len(values)} values, {sum(sum(c.values()) for c in each)} of them in the plays")
    if any(each[k] != each[1] for k in range(2, plays + 1)):
        log(f"calibration: the plays differ: {each}")
    starts = starts[1:]  # the measured plays' starts
    second = one_play(starts[1], starts[2])
    capture = args.capture
    if not capture:
        capture = os.path.join(args.out, "capture-1x.txt")
        with open(capture, "w") as file:
            file.write(f"# What motiond sent one subscriber of \"*\" during play 2 of {os.path.basename(RECORDING)} at 1x,\n"
                       f"# {args.motiond}: due time (s from the play's start), kind (i: input frame, c: frame clock), line.\n"
                       f"# Written by callgrind-frames.py (scripts/measure's format) for floor.c.\n"
                       f"period {period:.9f}\n")
            for t, _, _, text in second:
                due = t - starts[1]
                kind = "i" if any(abs(due - offset) < 1e-8 for offset in one) else "c"
                file.write(f"{due:.9f} {kind} {text}\n")
    result = {"frames_per_play": len(one), "warm_up_and_plays": each, "stats": stats, "period": period, "capture": capture}
    log(f"calibration: {result}")
    return result


def expected_values(calibration, plays):
    # Every play is the same recording, so a play's values are the most any play of the
    # calibration had: on a loaded machine the native run coalesces a frame now and then,
    # and summing its plays as they came made a valgrind run that merged nothing look short.
    runs = calibration["warm_up_and_plays"]
    best = {stream: max(counts.get(stream, 0) for counts in runs) for stream in set().union(*runs)}
    return {stream: count * (plays + 1) for stream, count in best.items()}


# motiond's profile in two parts: up to ReplayDriver.start() (start-up, with the recording
# read, assembled into frames and filtered: the replay plays precomputed frames), then the
# replay and the stop. The per-frame figures are from the second part.
SPLIT = f"--dump-before={args.split}"


def counted_run(server, plays, command, path, done, check):
    """One run under callgrind, stopped once done(values read); accepted if check(values,
    stats, log file) finds no problem; returns the callgrind file, the values and the stats."""
    name = f"{server}-{plays}"
    out = os.path.join(args.out, f"{name}.callgrind")
    logfile = os.path.join(args.out, f"{name}.log")
    for attempt in range(1, args.retries + 1):
        if os.path.exists(path):
            os.unlink(path)
        for stale in (out, out + ".1"):
            if os.path.exists(stale):
                os.unlink(stale)
        split = [SPLIT] if server == "motiond" else []
        with open(logfile, "w") as logf:
            process = subprocess.Popen(CALLGRIND + split + [f"--callgrind-out-file={out}"] + command(path),
                                       stdout=subprocess.DEVNULL, stderr=logf)
            wait_socket(path, process, time.monotonic() + 600, server, logfile)
            if server == "motiond":
                # Subscribe only once the replay has started (it logs "replaying"), so that the
                # subscription falls in the profile's second part in every run: the socket
                # listens before ReplayDriver.start(), where the first part ends.
                deadline = time.monotonic() + 600
                while args.started not in open(logfile).read():
                    if process.poll() is not None or time.monotonic() > deadline:
                        process.kill()
                        sys.exit(f"motiond did not start its replay; see {logfile}")
                    time.sleep(0.005)
            client = Client(path, time.monotonic() + 60)
            began = time.monotonic()
            limit = began + 120 + 10 * (plays + WARM_UP) * 3.2
            while not done(client.values) and not client.closed and time.monotonic() < limit:
                client.poll()
            read_all_at = time.monotonic()
            stats = client.stats() if server == "motiond" else None
            stopped = stop(process, 600)
            client.drain(30)
        with open(os.path.join(args.out, f"{name}.lines"), "w") as file:
            file.write("\n".join(client.lines) + "\n")
        problems = check(client.values, stats, logfile)
        if server == "motiond":
            if os.path.exists(out + ".1"):
                os.replace(out + ".1", os.path.join(args.out, f"{name}-startup.callgrind"))
            else:
                problems.append(f"no start-up part ({SPLIT} did not trigger)")
        if not stopped:
            problems.append("did not end on SIGTERM")
        ok = not problems
        log(f"{name} attempt {attempt}: {'ok' if ok else 'REJECTED: ' + '; '.join(problems)} "
            f"({read_all_at - began:.1f} s to read {plays} play(s)); values read: {client.values}; "
            f"stats: {stats and {k: stats.get(k) for k in ('frames', 'frames_coalesced')}}")
        if ok:
            return out, client.values, stats
    sys.exit(f"{name}: no acceptable run in {args.retries} attempts")


def total_instructions(path):
    """The totals line of a callgrind file: events Ir sysCount sysTime."""
    with open(path) as file:
        for line in file:
            if line.startswith("events:"):
                events = line.split()[1:]
            if line.startswith("totals:") or line.startswith("summary:"):
                values = [int(v) for v in line.split()[1:]]
                return dict(zip(events, values))
    raise ValueError(f"no totals in {path}")


def main():
    plays = [int(p) for p in args.plays.split(",")]
    assert len(plays) == 2 and plays[0] < plays[1]
    config = config_without_tuio()
    calibration = calibrate(config, max(plays[1], 3))
    frames = calibration["frames_per_play"] * (plays[1] - plays[0])
    results = {"motiond": os.path.abspath(args.motiond), "recording": RECORDING, "config": config, "plays": plays,
               "lead_seconds": LEAD, "gap_seconds": GAP, "calibration": calibration, "frames_between": frames, "valgrind": CALLGRIND}
    sock = os.path.join(args.out, "counted.sock")
    if args.only != "floor":
        runs, read, startup = {}, {}, {}
        for k in plays:
            expected = expected_values(calibration, k)
            # Structural: every input frame's screen.contacts and the card's two states a play
            # (active, then at rest after the spring's last frame: the replay's last value).
            strict = ("screen.contacts", "card.state")

            def done(values, expected=expected):
                return all(values.get(s, 0) >= expected[s] for s in strict)

            def check(values, stats, logfile, k=k, expected=expected):
                problems = [f"{s}: {values.get(s, 0)} values, not {expected[s]}" for s in strict if values.get(s, 0) != expected[s]]
                for s in expected:
                    if s not in strict and abs(values.get(s, 0) - expected[s]) > 0.03 * expected[s]:
                        problems.append(f"{s}: {values.get(s, 0)} values, not about {expected[s]}")
                want = calibration["frames_per_play"] * (k + 1)
                if stats and "frames" not in stats:
                    log("stats has no 'frames': the frames processed are not checked")
                elif not stats or stats.get("frames") != want or stats.get("frames_coalesced", 0) != 0:
                    problems.append(f"stats: {stats and {k: stats.get(k) for k in ('frames', 'frames_coalesced')}}, not {want} frames and none coalesced")
                return problems

            callgrind, read[k], stats = counted_run("motiond", k, motiond_command(config, k), sock, done, check)
            runs[k] = total_instructions(callgrind)
            startup[k] = total_instructions(os.path.join(args.out, f"motiond-{k}-startup.callgrind"))
        results["motiond_totals"] = {str(k): v for k, v in runs.items()}
        results["motiond_values_read"] = {str(k): v for k, v in read.items()}
        results["motiond_startup_totals"] = {str(k): v for k, v in startup.items()}
        # The recording's reading, assembling and filtering, done at start-up by the replay.
        results["motiond_startup_per_frame"] = {e: (startup[plays[1]][e] - startup[plays[0]][e]) / frames for e in startup[plays[0]]}
        results["motiond_per_frame"] = {e: (runs[plays[1]][e] - runs[plays[0]][e]) / frames for e in runs[plays[0]]}
    if args.only != "motiond":
        floor = os.path.join(args.out, "floor")
        subprocess.run(["cc", "-O2", "-Wall", "-o", floor, os.path.join(os.path.dirname(HERE), "floor.c")], check=True)
        capture = calibration["capture"]
        per_play = {}
        with open(capture) as file:
            for line in file:
                fields = line.split(" ", 2)
                if len(fields) == 3 and fields[1] in ("i", "c"):
                    stream = json.loads(fields[2])["stream"]
                    per_play[stream] = per_play.get(stream, 0) + 1
        runs = {}
        for k in plays:
            expected = {s: c * k for s, c in per_play.items()}

            def done(values, expected=expected):
                return sum(values.values()) >= sum(expected.values())

            def check(values, stats, logfile, k=k, expected=expected):
                problems = [] if values == expected else [f"values read {values}, not {expected}"]
                with open(logfile) as file:
                    said = [l.strip() for l in file if l.startswith("floor:")]
                want = f"floor: {k} plays, {sum(expected.values())} values"
                if not (said and said[-1].startswith(want)):
                    problems.append(f"the floor said {said[-1:]!r}, not {want!r}")
                return problems

            command = lambda path: [floor, path, capture]
            runs[k] = total_instructions(counted_run("floor", k, command, sock, done, check)[0])
        results["floor_totals"] = {str(k): v for k, v in runs.items()}
        results["floor_per_frame"] = {e: (runs[plays[1]][e] - runs[plays[0]][e]) / frames for e in runs[plays[0]]}
    if "motiond_per_frame" in results and "floor_per_frame" in results:
        results["ratio_Ir"] = results["motiond_per_frame"]["Ir"] / results["floor_per_frame"]["Ir"]
    with open(os.path.join(args.out, "results.json"), "w") as file:
        json.dump(results, file, indent=2)
    print(json.dumps({k: v for k, v in results.items() if "per_frame" in k or k == "ratio_Ir"}, indent=2))


main()
