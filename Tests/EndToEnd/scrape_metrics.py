#!/usr/bin/python3
"""motiond's /metrics and /healthz as a monitoring system reads them.

    scrape_metrics.py BASE_URL EXPECT MOTIONCTL SOCKET

BASE_URL is the web listener's (http://127.0.0.1:PORT), SOCKET motiond's Unix socket.
EXPECT is "replaying" (a recording is replayed; this script subscribes to everything on the
socket and reads it, as a UI would) or "idle" (no touchscreen, no client). Reads the metrics
with Debian's python3-prometheus-client parser, lints them with Prometheus's own promtool
(Debian's prometheus package), and prints one JSON line per check: {"check", "ok",
"detail"}; `motionctl metrics` is parsed too. Every wait has a deadline.
"""
import json
import shutil
import socket as sockets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

base, expect, motionctl, socket = sys.argv[1:5]


def report(check, ok, detail=""):
    # The detail as text: buckets hold +Inf, which JSON cannot.
    print(json.dumps({"check": check, "ok": bool(ok), "detail": detail if isinstance(detail, str) else repr(detail)}), flush=True)


def get(path):
    try:
        with urllib.request.urlopen(base + path, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def parse(text):
    """{family name: (type, [(sample name, labels, value)])}; raises on text that is not the format."""
    return {family.name: (family.type, [(s.name, s.labels, s.value) for s in family.samples])
            for family in text_string_to_metric_families(text)}


def value(families, family, sample=None, **labels):
    for name, sample_labels, number in families.get(family, (None, []))[1]:
        if name == (sample or family) and all(sample_labels.get(k) == v for k, v in labels.items()):
            return number
    return None


def scrape():
    status, headers, text = get("/metrics")
    return status, headers, parse(text)


def lint(text):
    """What `promtool check metrics` says of the text: (ok, detail). Missing promtool fails."""
    promtool = shutil.which("promtool")
    if promtool is None:
        return False, "promtool is not installed: scripts/install-deps installs Debian's prometheus package, which has it"
    run = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    return run.returncode == 0, (run.stdout + run.stderr)[-2000:]


def subscribe_and_read():
    """A client of every stream that reads all it is sent, until the daemon stops."""
    client = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    client.settimeout(60)
    client.connect(socket)
    client.sendall(b'{"id":1,"op":"subscribe","streams":["*"]}\n')
    lines = client.makefile("rb")
    try:
        while line := lines.readline():
            if not subscribed.is_set() and json.loads(line).get("id") == 1:
                subscribed.set()  # the reply: from now on its values are published
    except OSError:
        pass


subscribed = threading.Event()
if expect == "replaying":
    threading.Thread(target=subscribe_and_read, daemon=True).start()
    if not subscribed.wait(30):
        report("the subscriber is answered", False, "no reply to subscribe within 30 s")

status, headers, first = scrape()
report("GET /metrics answers 200 in the text format", status == 200 and headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"),
       [status, headers.get("Content-Type")])

report("promtool check metrics finds nothing wrong with the text", *lint(get("/metrics")[2]))

types = {name: kind for name, (kind, _) in first.items()}
expected_types = {
    "motiond_input_frames": "counter", "motiond_touches": "counter", "motiond_clients": "gauge",
    "motiond_publish_latency_seconds": "histogram", "motiond_published_frames": "counter",
    "motiond_values_coalesced": "counter", "motiond_clients_dropped": "counter", "motiond_devices": "gauge",
    "motiond_devices_skipped": "gauge", "motiond_last_touch_timestamp_seconds": "gauge",
    "motiond_config_reloads": "counter", "motiond_config_reload_failures": "counter",
    "motiond_event_loop_lag_seconds": "gauge", "process_cpu_seconds": "counter",
    "process_resident_memory_bytes": "gauge", "process_start_time_seconds": "gauge",
}
wrong = {name: (types.get(name), kind) for name, kind in expected_types.items() if types.get(name) != kind
         and not (expect == "idle" and name in ("motiond_input_frames", "motiond_touches"))}
report("the families parse, each with its type", not wrong, wrong)
report("process metrics are there", (value(first, "process_resident_memory_bytes") or 0) > 1e6
       # A daemon just started may not have used a clock tick (10 ms) of CPU yet.
       and (value(first, "process_cpu_seconds", "process_cpu_seconds_total") is not None)
       and value(first, "process_cpu_seconds", "process_cpu_seconds_total") >= 0
       and abs((value(first, "process_start_time_seconds") or 0) - time.time()) < 3600,
       [value(first, "process_resident_memory_bytes"), value(first, "process_cpu_seconds", "process_cpu_seconds_total")])

health_status, _, health_text = get("/healthz")
health = json.loads(health_text)

if expect == "replaying":
    def frames(families):
        return sum(v for name, _, v in families.get("motiond_input_frames", (None, []))[1] if name == "motiond_input_frames_total")

    # The replay plays on: counters move between two scrapes (within 30 s).
    deadline = time.monotonic() + 30
    second = first
    while frames(second) <= frames(first) and time.monotonic() < deadline:
        time.sleep(0.2)
        _, _, second = scrape()
    report("input frames counted per device move during the replay", frames(second) > frames(first),
           [frames(first), frames(second), first.get("motiond_input_frames")])
    published = (value(first, "motiond_published_frames", "motiond_published_frames_total"),
                 value(second, "motiond_published_frames", "motiond_published_frames_total"))
    report("published frames move", published[1] is not None and published[0] is not None and published[1] > published[0], published)

    samples = second["motiond_publish_latency_seconds"][1]
    buckets = sorted(((float(labels["le"]), number) for name, labels, number in samples if name.endswith("_bucket")))
    count = value(second, "motiond_publish_latency_seconds", "motiond_publish_latency_seconds_count")
    total = value(second, "motiond_publish_latency_seconds", "motiond_publish_latency_seconds_sum")
    cumulative = all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:]))
    report("the latency histogram is filled: cumulative buckets, +Inf equal to the count, a mean under 0.1 s",
           count and count > 0 and cumulative and buckets[-1] == (float("inf"), count) and 0 < total / count < 0.1,
           [count, total, buckets])
    report("the subscribed client is counted by transport", (value(second, "motiond_clients", transport="unix") or 0) >= 1,
           second.get("motiond_clients"))
    report("one touchscreen is read (the replay)", value(second, "motiond_devices") == 1, second.get("motiond_devices"))
    touched = value(second, "motiond_last_touch_timestamp_seconds")
    report("the last touch is a recent Unix time", touched is not None and 0 <= time.time() - touched < 120, [touched, time.time()])
    report("GET /healthz is 200 and ok with one device", health_status == 200 and health.get("status") == "ok" and health.get("devices") == 1,
           [health_status, health])
else:
    report("no touchscreen: the device gauge is 0", value(first, "motiond_devices") == 0, first.get("motiond_devices"))
    report("GET /healthz is 503 and says why", health_status == 503 and health.get("status") == "unhealthy"
           and health.get("problems") == ["no touchscreen is being read"], [health_status, health])

# The loop's lateness is measured once a second from the start: within 10 s it is a number.
deadline = time.monotonic() + 10
while health.get("loop_lag") is None and time.monotonic() < deadline:
    time.sleep(0.2)
    health = json.loads(get("/healthz")[2])
lag_metric = value(scrape()[2], "motiond_event_loop_lag_seconds")
report("the event loop's lag is measured", isinstance(health.get("loop_lag"), (int, float)) and 0 <= health["loop_lag"] < 0.5
       and lag_metric is not None and lag_metric >= 0, [health.get("loop_lag"), lag_metric])

run = subprocess.run([motionctl, "metrics", "--socket", socket], capture_output=True, text=True, timeout=30)
try:
    families = parse(run.stdout)
    ok = run.returncode == 0 and "motiond_devices" in families and families["motiond_publish_latency_seconds"][0] == "histogram"
except Exception as error:  # the parser's own errors: the text is not the format
    ok = False
report("motionctl metrics prints the same format", ok, [run.returncode, run.stderr[-500:]])
