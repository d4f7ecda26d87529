#!/usr/bin/env bash
# Size and cost of the trace formats (and Perfetto's two layouts) for one run (docs/trace-format.md, "Size and
# cost"): the shipped `demo` workload on hikey960 for 10 s, every event group. Prints a
# Markdown table: bytes; instructions of the whole run (valgrind's callgrind, when
# installed: stable on a shared machine); wall time, the best of five runs of the
# release CLI (noisy when other work runs).
#
#   bash tools/trace-formats.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p hetsched-cli
HS=target/release/hetsched
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(run hikey960 demo --duration 10s --seed 1 --quiet)
run() { # [--trace FILE] -> best wall time in ms of five runs
    local best=
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N)
        "$HS" "${args[@]}" "$@" >/dev/null
        t1=$(date +%s%N)
        local ms=$(((t1 - t0) / 1000000))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    echo "$best"
}
instr() { # [--trace FILE] -> instructions of one run, or "-" without valgrind
    if command -v valgrind >/dev/null; then
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$HS" "${args[@]}" "$@" 2>&1 \
            >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    else
        echo -
    fi
}
t_none=$(run)
t_txt=$(run --trace "$out/t.txt")
t_pf=$(run --trace "$out/t.pftrace")
t_pl=$(run --trace "$out/l.pftrace" --trace-format perfetto-legacy)
i_none=$(instr)
i_txt=$(instr --trace "$out/t.txt")
i_pf=$(instr --trace "$out/t.pftrace")
i_pl=$(instr --trace "$out/l.pftrace" --trace-format perfetto-legacy)
events=$(grep -vc '^#' "$out/t.txt")
s_txt=$(stat -c %s "$out/t.txt")
s_pf=$(stat -c %s "$out/t.pftrace")
s_pl=$(stat -c %s "$out/l.pftrace")
echo "| format | events | bytes | bytes/event | instructions (run) | best wall time (5 runs) |"
echo "|---|---|---|---|---|---|"
echo "| ftrace text | $events | $s_txt | $((s_txt / events)) | $i_txt | $t_txt ms |"
echo "| Perfetto protobuf | $events | $s_pf | $((s_pf / events)) | $i_pf | $t_pf ms |"
echo "| Perfetto protobuf, \`perfetto-legacy\` | $events | $s_pl | $((s_pl / events)) | $i_pl | $t_pl ms |"
echo "| (no trace) | | | | $i_none | $t_none ms |"
