#!/usr/bin/env bash
# make bench-count: instructions per event of the main benchmarks, counted by callgrind
# (the stable measure on a shared machine: wall-clock figures move with the load).
#
#   bash tools/bench-count.sh                      # periodic periodic-perf periodic-trace periodic-pftrace large
#   BENCH_COUNT="periodic large" bash tools/bench-count.sh
#   BENCH_BUILD=pgo bash tools/bench-count.sh        # the profile-guided build (make pgo)
#
# One line per benchmark: instructions (the whole process: set-up, run and result), the
# events it reports (heap events plus ticks) and their ratio; then issue 19's target for
# `periodic` (<= 1,500 instructions per event), informative (the exit status is 0).
# `large` takes several minutes under callgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench-count: valgrind is not installed (apt-get install valgrind)"; exit 2; }
if [ "${BENCH_BUILD:-}" = pgo ]; then
    bash tools/pgo.sh >/dev/null
    B=target/pgo/use/bench-lto/hetsched-bench
else
    cargo build --profile bench-lto --locked -q -p hetsched-bench
    B=target/bench-lto/hetsched-bench
fi
names=${BENCH_COUNT:-"periodic periodic-perf periodic-trace periodic-pftrace large"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in $names; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$B" "$n" >"$tmp/out" 2>"$tmp/err"
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err" | tail -1)
    ev=$(sed -n 's/.* \([0-9]*\) events, .*/\1/p' "$tmp/out" | head -1)
    awk -v n="$n" -v b="${BENCH_BUILD:-plain}" -v ir="$ir" -v ev="$ev" 'BEGIN {
        printf "count %s (%s): %.3f G instructions, %d events, %.0f instructions per event\n", n, b, ir / 1e9, ev, ir / ev
        if (n == "periodic")
            printf "target periodic <= 1500 instructions per event: %s (%.0f)\n", (ir / ev <= 1500 ? "PASS" : "FAIL"), ir / ev
    }'
done
