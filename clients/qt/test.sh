#!/usr/bin/env bash
# Configures, builds (out of tree, in .build/qt) and tests the Qt client, the QML module
# Motiond, against a real motiond: MOTIOND names it (default: .build/debug/motiond, which
# `swift build` makes). Exits non-zero, saying why, when a step fails or the tests take
# longer than their timeout (QT_TEST_TIMEOUT seconds, 180 by default).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=.build/qt
timeout_seconds="${QT_TEST_TIMEOUT:-180}"
export MOTIOND="${MOTIOND:-$PWD/.build/debug/motiond}"

if [ ! -x "$MOTIOND" ]; then
  echo "clients/qt/test.sh: no motiond at $MOTIOND: run swift build first, or set MOTIOND" >&2
  exit 1
fi
if ! cmake -S clients/qt -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1; then
  cat "$build.configure.log" >&2
  echo "clients/qt/test.sh: cmake could not configure clients/qt (scripts/install-deps installs Qt 6)" >&2
  exit 1
fi
if ! cmake --build "$build" -j"$(nproc)"; then
  echo "clients/qt/test.sh: the build of clients/qt failed" >&2
  exit 1
fi
status=0
QT_QPA_PLATFORM=offscreen timeout --kill-after=10 "$timeout_seconds" "$build/tst_motiond" || status=$?
case "$status" in
  0) ;;
  124|137) echo "clients/qt/test.sh: the tests did not finish within $timeout_seconds s" >&2; exit 1 ;;
  *) if [ "$status" -gt 128 ]; then
       echo "clients/qt/test.sh: the test runner died of signal $((status - 128))" >&2
     else
       echo "clients/qt/test.sh: $status of the Qt client's tests failed (above: FAIL!)" >&2
     fi
     exit 1 ;;
esac
