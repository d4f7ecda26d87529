#!/usr/bin/env bash
# Size and run time of the two trace formats for one run (docs/trace-format.md, "Size and
# cost"): the shipped `demo` workload on hikey960 for 10 s, every event group. Prints a
# Markdown table; run time is the best of three runs of the release CLI, wall clock.
#
#   bash tools/trace-formats.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p hetsched-cli
HS=target/release/hetsched
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { # [--trace FILE] -> best wall time in ms of three runs
    local best=
    for _ in 1 2 3; do
        local t0 t1
        t0=$(date +%s%N)
        "$HS" run hikey960 demo --duration 10s --seed 1 --quiet "$@" >/dev/null
        t1=$(date +%s%N)
        local ms=$(((t1 - t0) / 1000000))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    echo "$best"
}
t_none=$(run)
t_txt=$(run --trace "$out/t.txt")
t_pf=$(run --trace "$out/t.pftrace")
events=$(grep -vc '^#' "$out/t.txt")
s_txt=$(stat -c %s "$out/t.txt")
s_pf=$(stat -c %s "$out/t.pftrace")
echo "| format | events | bytes | bytes/event | best run time (3 runs) |"
echo "|---|---|---|---|---|"
echo "| ftrace text | $events | $s_txt | $((s_txt / events)) | $t_txt ms |"
echo "| Perfetto protobuf | $events | $s_pf | $((s_pf / events)) | $t_pf ms |"
echo "| (no trace) | | | | $t_none ms |"
