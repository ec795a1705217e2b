#!/usr/bin/python3
"""Per-frame tables from callgrind-frames.py's output: the difference of the K2-play and the
K1-play runs, per function (inclusive and self instructions), per stage of the path, and the
calls per frame to malloc and its kin, to the locks, to the Swift runtime's hot entries, and
the system calls.

    analyze.py [--out DIR] [--server motiond|floor] [--top 25] [--markdown FILE]

Reads DIR/results.json and DIR/SERVER-K.callgrind. Function names are demangled with
swift-demangle --simplified. The stages are assigned by name (STAGES below); a function no
rule names (the Swift runtime, libc, memcpy, retain and release, generic metadata...) has its
own instructions shared among its callers in proportion to what each call cost inclusively,
up the call graph until a named function is reached, so that the stages add up to the total.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

sys.setrecursionlimit(100000)

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
parser.add_argument("--server", default="motiond")
parser.add_argument("--top", type=int, default=25)
parser.add_argument("--startup", action="store_true", help="motiond's start-up part instead (up to ReplayDriver.start(): the recording "
                    "read, assembled into frames and filtered), per frame of the recording")
parser.add_argument("--markdown")
parser.add_argument("--tree", type=float, default=0, help="print the call tree below the event loop, down to calls costing this many Ir per frame")
parser.add_argument("--callers", help="print the callers and callees of the functions whose demangled name contains this")
parser.add_argument("--names", action="store_true", help="list every function with its per-frame self and inclusive cost and stage")
args = parser.parse_args()


class Profile:
    """One callgrind file: self cost per function, call edges with their inclusive cost and
    count. Functions are keyed by name (their object aside)."""

    def __init__(self, path):
        self.events = []
        self.self_cost = collections.defaultdict(lambda: None)
        self.edges = {}  # (caller, callee) -> [calls, cost vector]
        self.objects = {}
        self.totals = None
        names, objs = {}, {}
        fn = ob = cob = cfn = None
        pending_calls = None
        # How many positions begin a cost line: one (the line) unless callgrind counted each
        # instruction apart (`--dump-instr=yes`: "positions: instr line"), as footprint.py needs.
        positions = 1

        def name_of(table, text):
            match = re.match(r"\((\d+)\)(?: (.*))?$", text)
            if not match:
                return text
            if match.group(2) is not None:
                table[match.group(1)] = match.group(2)
            return table[match.group(1)]

        def add(vector, values):
            for i, v in enumerate(values):
                vector[i] += v

        with open(path) as file:
            for raw in file:
                line = raw.rstrip("\n")
                if not line:
                    continue
                c = line[0]
                if c.isdigit() or c in "+-*":
                    parts = line.split()
                    values = [int(v) for v in parts[positions:]] + [0] * (len(self.events) - len(parts) + positions)
                    if pending_calls is not None:
                        key = (fn, cfn)
                        edge = self.edges.setdefault(key, [0, [0] * len(self.events)])
                        edge[0] += pending_calls
                        add(edge[1], values)
                        pending_calls = None
                    else:
                        vector = self.self_cost[fn]
                        if vector is None:
                            vector = self.self_cost[fn] = [0] * len(self.events)
                        add(vector, values)
                    continue
                key, _, value = line.partition("=")
                if key == "fn":
                    fn = name_of(names, value)
                    self.objects.setdefault(fn, ob)
                elif key == "cfn":
                    cfn = name_of(names, value)
                elif key == "ob":
                    ob = name_of(objs, value)
                elif key == "cob":
                    cob = name_of(objs, value)
                    self.objects.setdefault("\0" + str(cob), cob)
                elif key == "calls":
                    pending_calls = int(value.split()[0])
                elif line.startswith("positions:"):
                    positions = len(line.split()) - 1
                elif line.startswith("events:"):
                    self.events = line.split()[1:]
                elif line.startswith("totals:") or line.startswith("summary:"):
                    self.totals = [int(v) for v in line.split()[1:]]
                # fl= fi= fe= cfi= cfl= jump= and headers: not needed
        self.self_cost = {k: v for k, v in self.self_cost.items() if v is not None}

    def inclusive(self):
        """Self plus the inclusive cost of every call out, recursive calls (to itself) left out."""
        result = {name: list(v) for name, v in self.self_cost.items()}
        for (caller, callee), (_, cost) in self.edges.items():
            if caller == callee:
                continue
            vector = result.setdefault(caller, [0] * len(self.events))
            for i, v in enumerate(cost):
                vector[i] += v
        return result

    def calls_to(self):
        counts = collections.Counter()
        for (caller, callee), (calls, _) in self.edges.items():
            counts[callee] += calls
        return counts


def demangle(names):
    names = list(names)
    try:
        out = subprocess.run(["swift-demangle", "--simplified"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
        demangled = out.split("\n")
        if len(demangled) >= len(names):
            return dict(zip(names, demangled))
    except (OSError, subprocess.CalledProcessError):
        pass
    return {n: n for n in names}


# Stages, by the demangled name: the first rule that matches. None: not a stage of its own
# (runtime, libc, generic helpers): its cost goes to its callers.
STAGES = [
    ("TUIO", r"TUIO"),
    ("metrics/status/log", r"DaemonMetrics|CatalogMetrics|MetricCatalog|Prometheus|Histogram|CounterHandler|TimerHandler|RecorderHandler|"
                           r"\bCounter\b|\bGauge\b|ProcessStatistics|LoopLagProbe|loopLagMeasured|DaemonHealth|DaemonStatus|InputLog|"
                           r"JournalLogHandler|Logger|LogHandler|SceneKeeper|StateFile|keepScene|sceneChanged"),
    ("input (replay driver; live: reader, assembler, filters)", r"ReplayDriver|ReplayTimer|RecordingReplay|TouchFrameAssembler|ContactFilters|"
                                                               r"FrameCoalescing|libevdev|mtdev|InputThread|Evemu|EvdevReader|DeviceIdentity"),
    ("hand-off to the loop (InputQueue, locks)", r"InputQueue"),
    ("publishing (Publisher, value lines, ChannelOutput, writes)",
     r"Publisher|ValueLine|FrameLines|writeValueLine|writeJSON|writeDecimal|writePublished|writeContacts|writeStateEvent|ChannelOutput|"
     r"SocketDescriptor|ClientHub|ClientConnections|SubscriptionIndex|ClientSession|SlowClientRule|"
     r"ReportSink|Daemon\.publish|ByteBuffer|^send$|^send@"),
    ("engine (routing, recognizers, interactions, springs, collection)",
     r"MotionEngine|ScreenContacts|EngineTimer|Recognizer|Gesture|ContactTracker|ContactRoute|VelocityEstimator|Interaction|Spring|Tossable|Draggable|"
     r"DirectlyManipulable|AttractMode|Scene|Router|FrameReport|FrameEvent|PublishedStreams|PublishedProperty|PublishedUpdate|"
     r"MotionObservable|MotionRuntime|ReactiveProperty|GatedSubscription|EventStream|Subscription|MotionObserver|"
     r"FrameClock|FrameEndCallbacks|EventLoopFrameScheduler|Daemon\.process|Daemon\.tick|TouchscreenState|ElementInput|"
     r"Daemon\.engine"),
    ("NIO event loop, timers, epoll", r"SelectableEventLoop|Selector|Epoll|epoll_wait|TimerFd|timerfd|eventfd|ScheduledTask|"
                                      r"NIOScheduledCallback|LoopTask|UnderlyingTask|MetricsDelegate|Heap\.|Heap<|\bHeap\b|NIOLock|"
                                      r"ConditionLock|EventLoop|Posix\.read|NIODeadline|NIOThread|MultiThreadedEventLoopGroup"),
]


def stage_of(name):
    for stage, pattern in STAGES:
        if re.search(pattern, name):
            return stage
    return None


def main():
    with open(os.path.join(args.out, "results.json")) as file:
        results = json.load(file)
    k1, k2 = results["plays"]
    frames = results["frames_between"]
    part = "-startup" if args.startup else ""
    a = Profile(os.path.join(args.out, f"{args.server}-{k1}{part}.callgrind"))
    b = Profile(os.path.join(args.out, f"{args.server}-{k2}{part}.callgrind"))
    events = b.events
    ir = events.index("Ir")
    names = set(a.self_cost) | set(b.self_cost) | {c for _, c in b.edges} | {c for _, c in a.edges}
    pretty = demangle(sorted(names))

    def diff(x, y):
        keys = set(x) | set(y)
        zero = [0] * len(events)
        return {k: [(y.get(k, zero)[i] - x.get(k, zero)[i]) / frames for i in range(len(events))] for k in keys}

    self_pf = diff(a.self_cost, b.self_cost)
    incl_pf = diff(a.inclusive(), b.inclusive())
    total_pf = [(b.totals[i] - a.totals[i]) / frames for i in range(len(events))]
    calls_a, calls_b = a.calls_to(), b.calls_to()
    calls_pf = {k: (calls_b.get(k, 0) - calls_a.get(k, 0)) / frames for k in set(calls_a) | set(calls_b)}

    # Stage shares: named functions are their stage; the others take their callers' shares,
    # weighted by each call's inclusive Ir in the longer run.
    callers = collections.defaultdict(list)
    for (caller, callee), (_, cost) in b.edges.items():
        if caller != callee and cost[ir] > 0:
            callers[callee].append((caller, cost[ir]))
    shares, progress = {}, set()
    unattributed = "other (thread start, unattributed)"

    def share(name):
        if name in shares:
            return shares[name]
        if name in progress:
            return None  # a cycle: this caller's weight is left out
        stage = stage_of(pretty.get(name, name))
        if stage is not None:
            shares[name] = {stage: 1.0}
            return shares[name]
        progress.add(name)
        result, weight = collections.Counter(), 0
        for caller, cost in callers.get(name, []):
            upper = share(caller)
            if upper is None:
                continue
            weight += cost
            for s, f in upper.items():
                result[s] += f * cost
        progress.discard(name)
        shares[name] = {s: f / weight for s, f in result.items()} if weight else {unattributed: 1.0}
        return shares[name]

    stages = collections.Counter()
    direct = collections.Counter()
    for name, vector in self_pf.items():
        for s, f in share(name).items():
            stages[s] += vector[ir] * f
        direct[stage_of(pretty.get(name, name)) or "(runtime/libc, shared to callers)"] += vector[ir]

    # Clock frames (the springs' frames, on the event loop's timer at [daemon] frame_rate) are
    # on the wall clock: under valgrind a late loop runs one fewer now and then. Each missing
    # clock frame is one card.position value fewer than the native calibration read; the figure
    # corrected for them adds back what a clock frame costs (TimedFrameClock.frame() inclusive).
    correction = None
    read = results.get(f"{args.server}_values_read")
    if read and not args.startup:
        plays = results["calibration"]["warm_up_and_plays"]

        def expected(k):
            return sum(p.get("card.position", 0) for p in plays[:k + 1])

        missing = {k: expected(k) - read[str(k)].get("card.position", 0) for k in (k1, k2)}
        clock = [n for n in b.self_cost if pretty.get(n, n) == "TimedFrameClock.frame()"]
        if clock:
            calls = b.calls_to()[clock[0]]
            per_clock_frame = b.inclusive()[clock[0]][0] / calls if calls else 0
            correction = {"missing_clock_frames": missing, "Ir_per_clock_frame": per_clock_frame,
                          "corrected_Ir_per_frame": None}
    out = []
    w = out.append
    w(f"### {args.server}{' start-up' if args.startup else ''}: {total_pf[ir]:,.0f} instructions per input frame "
      f"(({k2} - {k1}) plays, {frames} frames: totals {a.totals[ir]:,} and {b.totals[ir]:,})")
    w("")
    if correction:
        m = correction["missing_clock_frames"]
        corrected = total_pf[ir] + (m[k2] - m[k1]) * correction["Ir_per_clock_frame"] / frames
        correction["corrected_Ir_per_frame"] = corrected
        w(f"Clock frames missed under valgrind (card.position values fewer than natively): {m[k1]} in the {k1}-play run, {m[k2]} in the "
          f"{k2}-play run; at {correction['Ir_per_clock_frame']:,.0f} Ir a clock frame, the figure with them is {corrected:,.0f} Ir per input frame.")
        w("")
        with open(os.path.join(args.out, f"{args.server}-correction.json"), "w") as file:
            json.dump(correction, file, indent=2)
    if "sysCount" in events:
        sc = events.index("sysCount")
        by = sorted(((v[sc], n) for n, v in self_pf.items() if abs(v[sc]) >= 0.005), reverse=True)
        w(f"System calls per frame: {total_pf[sc]:.2f} (callgrind's sysCount; under valgrind clock_gettime is a system "
          f"call, natively the vDSO answers it): " + ", ".join(f"{re.sub(r'@.*$', '', pretty.get(n, n))} {c:.2f}" for c, n in by))
        w("")
    w("Calls per input frame:")
    w("")
    w("| function | calls per frame |")
    w("|---|---:|")
    for fname in ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "free", "swift_allocObject", "swift_slowAlloc",
                  "swift_deallocObject", "pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_unlock", "pthread_cond_signal",
                  "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "swift_retain", "swift_release", "swift_bridgeObjectRetain",
                  "swift_bridgeObjectRelease", "swift_beginAccess", "swift_endAccess", "swift_getGenericMetadata",
                  "swift_conformsToProtocol", "swift_getWitnessTable", "swift_once", "swift_dynamicCast", "swift_isUniquelyReferenced_nonNull_native",
                  "__memcpy_avx_unaligned_erms", "__memmove_avx_unaligned_erms", "__memset_avx2_unaligned_erms", "clock_gettime",
                  "epoll_wait", "epoll_ctl", "send", "read", "write", "timerfd_settime", "eventfd_write", "eventfd_read"]:
        matches = [k for k in calls_pf if re.sub(r"@.*$", "", k) == fname or pretty.get(k, k) == fname]
        if matches:
            w(f"| {fname} | {sum(calls_pf[k] for k in matches):.2f} |")
    w("")
    w("Stages (each function's own instructions; those of the runtime and libc shared among their callers, "
      "in proportion to the callers' inclusive cost):")
    w("")
    w("| stage | Ir per frame | share | of which in the stage's own functions |")
    w("|---|---:|---:|---:|")
    for s, v in sorted(stages.items(), key=lambda kv: -kv[1]):
        w(f"| {s} | {v:,.0f} | {100 * v / total_pf[ir]:.1f} % | {direct.get(s, 0):,.0f} |")
    w(f"| (runtime/libc functions, before sharing) | {direct.get('(runtime/libc, shared to callers)', 0):,.0f} | "
      f"{100 * direct.get('(runtime/libc, shared to callers)', 0) / total_pf[ir]:.1f} % | |")
    w("")

    def short(name):
        text = pretty.get(name, name)
        return text if len(text) <= 150 else text[:147] + "..."

    for title, table in (("inclusive", incl_pf), ("self", self_pf)):
        w(f"Top {args.top} functions by {title} instructions per frame:")
        w("")
        w("| # | Ir/frame | % | stage | function |")
        w("|---:|---:|---:|---|---|")
        ranked = sorted(table.items(), key=lambda kv: -kv[1][ir])
        if title == "inclusive":  # the thread's start and the loop's run() wrap everything: left out
            ranked = [(n, v) for n, v in ranked if v[ir] < 0.95 * total_pf[ir]]
        ranked = ranked[:args.top]
        for n, (name, vector) in enumerate(ranked, 1):
            stage = stage_of(pretty.get(name, name)) or "-"
            w(f"| {n} | {vector[ir]:,.0f} | {100 * vector[ir] / total_pf[ir]:.1f} | {stage.split(' (')[0]} | `{short(name).replace('|', '/')}` |")
        w("")
    edges_pf = collections.defaultdict(lambda: [0.0, 0.0])  # (caller, callee) -> [calls, Ir] per frame
    for sign, profile in ((-1, a), (1, b)):
        for key, (calls, cost) in profile.edges.items():
            edges_pf[key][0] += sign * calls / frames
            edges_pf[key][1] += sign * cost[ir] / frames
    children = collections.defaultdict(list)
    parents = collections.defaultdict(list)
    for (caller, callee), (calls, cost) in edges_pf.items():
        if caller != callee:
            children[caller].append((cost, calls, callee))
            parents[callee].append((cost, calls, caller))
    if args.tree:
        w("Call tree below the event loop's tick (inclusive Ir per frame, calls per frame; calls under "
          f"{args.tree:,.0f} Ir left out; a function's own instructions as 'self'):")
        w("")
        w("```")
        roots = [n for n in b.self_cost if pretty.get(n, n).startswith("SelectableEventLoop.runOneLoopTick")] or \
                [n for n in b.self_cost if pretty.get(n, n).startswith("SelectableEventLoop.run()")]

        expanded = set()

        def walk(name, depth, path):
            for cost, calls, callee in sorted(children[name], key=lambda e: -e[0]):
                if cost < args.tree or callee in path:
                    continue
                again = callee in expanded and any(c >= args.tree for c, _, _ in children[callee])
                w(f"{'  ' * depth}{cost:9,.0f}  {calls:6.2f}x  {short(callee)}  (self {self_pf.get(callee, [0] * len(events))[ir]:,.0f}"
                  f"{', inclusive ' + format(incl_pf[callee][ir], ',.0f') + ', its callees above' if again else ''})")
                if depth < 14 and callee not in expanded:
                    expanded.add(callee)
                    walk(callee, depth + 1, path | {callee})

        for root in roots:
            w(f"{incl_pf[root][ir]:9,.0f}  {short(root)}  (self {self_pf[root][ir]:,.0f})")
            walk(root, 1, {root})
        w("```")
        w("")
    if args.callers:
        for name in sorted(self_pf, key=lambda n: -incl_pf.get(n, [0] * len(events))[ir]):
            if args.callers not in pretty.get(name, name):
                continue
            w(f"{short(name)}: self {self_pf[name][ir]:,.0f}, inclusive {incl_pf.get(name, [0] * len(events))[ir]:,.0f} Ir/frame")
            for cost, calls, caller in sorted(parents[name], key=lambda e: -e[0])[:12]:
                w(f"    <- {cost:9,.0f} {calls:7.2f}x  {short(caller)}")
            for cost, calls, callee in sorted(children[name], key=lambda e: -e[0])[:12]:
                w(f"    -> {cost:9,.0f} {calls:7.2f}x  {short(callee)}")
    text = "\n".join(out)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as file:
            file.write(text + "\n")
    if args.names:
        with open(os.path.join(args.out, f"{args.server}-functions.tsv"), "w") as file:
            file.write("self_Ir_per_frame\tinclusive_Ir_per_frame\tcalls_per_frame\tstage\tfunction\n")
            for name, vector in sorted(self_pf.items(), key=lambda kv: -kv[1][ir]):
                file.write(f"{vector[ir]:.1f}\t{incl_pf.get(name, [0] * len(events))[ir]:.1f}\t{calls_pf.get(name, 0):.2f}\t"
                           f"{stage_of(pretty.get(name, name)) or '-'}\t{pretty.get(name, name)}\n")


main()
