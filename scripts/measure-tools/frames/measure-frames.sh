#!/bin/sh
# Counts motiond's and the floor's user-space instructions per input frame with callgrind, and
# writes the tables (see README.md).
#
#     measure-frames.sh MOTIOND [OUT] [REPO]
#
# MOTIOND: the package's motiond (`make binaries`: .build/release/motiond), with or without
# debug information: a copy made with `strip --strip-debug` (valgrind 3.19 cannot read the
# Swift toolchain's DWARF 5) is what is counted, OUT/motiond. OUT: where everything goes
# (default ./out-<date>). REPO: the checkout whose config/motiond.toml and bundled recording
# are played (default this repository). CAPTURE=FILE in the environment: the floor replays that
# capture (e.g. out-6cba3b5/capture-1x.txt) instead of one made from this motiond; the floor's
# count depends on the time stamps' digits in its capture (about +-3 % from one capture to
# another), so compare floors with the same capture. SLOW=N: the measured plays N times slower
# than recorded, for a loaded machine (compare only runs with the same N). Takes about 5 minutes.
set -eu
HERE=$(dirname "$(readlink -f "$0")")
BIN=${1:?usage: measure-frames.sh MOTIOND [OUT] [REPO]}
OUT=${2:-./out-$(date +%Y%m%d-%H%M%S)}
REPO=${3:-$(readlink -f "$HERE/../../..")}
mkdir -p "$OUT"
strip --strip-debug "$BIN" -o "$OUT/motiond"
python3 "$HERE/callgrind-frames.py" --motiond "$OUT/motiond" --out "$OUT" --repo "$REPO" --dump-instr ${CAPTURE:+--capture "$CAPTURE"} ${SLOW:+--slow "$SLOW"}
python3 "$HERE/analyze.py" --out "$OUT" --tree 300 --names --markdown "$OUT/motiond.md" > /dev/null
python3 "$HERE/analyze.py" --out "$OUT" --startup --markdown "$OUT/motiond-startup.md" > /dev/null
python3 "$HERE/analyze.py" --out "$OUT" --server floor --markdown "$OUT/floor.md" > /dev/null
# The lines and pages of code a frame runs (the runs count each instruction apart).
{ python3 "$HERE/footprint.py" "$OUT"; echo; python3 "$HERE/footprint.py" "$OUT" --server floor --top 10; } > "$OUT/footprint.txt"
# callgrind_annotate's own views of the longer runs, demangled (each function's whole counts
# for that run, not per frame: analyze.py's tables are the per-frame differences).
for run in motiond-3 floor-3; do
    callgrind_annotate --inclusive=yes --threshold=99 "$OUT/$run.callgrind" 2>/dev/null | swift-demangle --simplified > "$OUT/$run.inclusive.txt"
    callgrind_annotate --threshold=99 "$OUT/$run.callgrind" 2>/dev/null | swift-demangle --simplified > "$OUT/$run.self.txt"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
r = json.load(open(f"{out}/results.json"))
c = json.load(open(f"{out}/motiond-correction.json")) if __import__("os").path.exists(f"{out}/motiond-correction.json") else {}
m, f = r["motiond_per_frame"]["Ir"], r["floor_per_frame"]["Ir"]
mc = c.get("corrected_Ir_per_frame", m)
print(f"motiond {m:,.0f} Ir per input frame ({mc:,.0f} with the clock frames valgrind missed), "
      f"floor {f:,.0f}, ratio {mc / f:.2f}; start-up (recording read, assembled, filtered) {r['motiond_startup_per_frame']['Ir']:,.0f} per frame")
print(open(f"{out}/footprint.txt").readline().rstrip())
print(f"tables: {out}/motiond.md, {out}/motiond-startup.md, {out}/floor.md, {out}/footprint.txt")
PY
