#!/usr/bin/env bash
# Byte-identity check for restructuring and pure optimisations: runs a fixed set of
# workloads over several presets and option sets (EAS on and off, CFS, the v4.20
# balancer, RT and locking workloads from rt-app's corpus) and prints one sha256 per
# output file (ftrace text and result JSON), then the same runs of a few cases as
# Perfetto protobuf (`.pftrace`: EAS on and off, HMP, the interactive and sched
# governors, RT and deadline tasks) in both layouts (v59's and `perfetto-legacy`), then
# the `periodic` benchmark dump. Run it before and after a change and diff the two listings:
#
#   bash tools/identity.sh > /tmp/before.txt   # on the old commit
#   bash tools/identity.sh > /tmp/after.txt    # on the new one
#   diff /tmp/before.txt /tmp/after.txt && echo identical
#
# Options are given explicitly where the case depends on them, so the listing stays
# comparable across a change of defaults only for those cases; `default` cases follow
# the defaults of the commit they run on.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p hetsched-cli
HS=target/release/hetsched
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ex=tests/rtapp-examples
n=0
case_() { # name platform workload duration [--set k=v ...]
    local name=$1 plat=$2 wl=$3 dur=$4
    shift 4
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    if "$HS" run --platform "$plat" --workload "$wl" --duration "$dur" --seed 7 \
        --trace "$out/t" --json "$out/j" "${sets[@]}" >/dev/null 2>"$out/err"; then
        printf '%s  %s %s\n' "$(sha256sum <"$out/t" | cut -c1-16)" "$name" trace
        printf '%s  %s %s\n' "$(sha256sum <"$out/j" | cut -c1-16)" "$name" json
    else
        printf 'error  %s: %s\n' "$name" "$(head -c 200 "$out/err")"
    fi
    n=$((n + 1))
}
pformat=perfetto
pcase_() { # name platform workload duration [--set k=v ...]: the trace as .pftrace, in $pformat
    local name=$1 plat=$2 wl=$3 dur=$4
    shift 4
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    local label=pftrace
    [ "$pformat" = perfetto ] || label="pftrace-$pformat"
    if "$HS" run --platform "$plat" --workload "$wl" --duration "$dur" --seed 7 \
        --trace "$out/t.pftrace" --trace-format "$pformat" "${sets[@]}" >/dev/null 2>"$out/err"; then
        printf '%s  %s %s\n' "$(sha256sum <"$out/t.pftrace" | cut -c1-16)" "$name" "$label"
    else
        printf 'error  %s: %s\n' "$name" "$(head -c 200 "$out/err")"
    fi
    n=$((n + 1))
}
for p in hikey960 juno_r0 hikey620 m1pro rk3399 orion_o6 tc2; do
    case_ "demo-$p-default" "$p" demo 3s
    case_ "demo-$p-sugov" "$p" demo 3s cpufreq.governor=schedutil
done
case_ hackbench-rk3399-sugov rk3399 gen:hackbench:groups=2,loops=50 5s cpufreq.governor=schedutil
case_ hackbench-hikey960-cfs hikey960 gen:hackbench:groups=2,loops=50 5s fair.variant=cfs
case_ sysbench-juno-v420 juno_r0 'gen:sysbench-cpu:threads=6,requests=300' 5s balance.version=v4.20 balance.misfit=false
case_ sysbench-juno-v59 juno_r0 'gen:sysbench-cpu:threads=9,requests=300' 5s balance.version=v5.9
case_ periodic-m1pro-sugov-nosw m1pro gen:periodic:duty=30,tasks=5 3s cpufreq.governor=schedutil cpufreq.fast_switch=false
case_ periodic-juno-ue513 juno_r0 gen:periodic:duty=60,tasks=3 3s cpufreq.governor=schedutil pelt.util_est_version=V5_13 eas.em_version=v5_x
for f in browser-long.json mp3-long.json spreading-tasks.json custom-slice.json template.json; do
    case_ "corpus-${f%.json}-hikey960" hikey960 "$ex/$f" 3s
    case_ "corpus-${f%.json}-juno-sugov" juno_r0 "$ex/$f" 3s cpufreq.governor=schedutil
done
for f in "$ex"/tutorial/*.json; do
    b=$(basename "$f" .json)
    case_ "tutorial-$b-hikey960" hikey960 "$f" 2s
done
for pformat in perfetto perfetto-legacy; do
    pcase_ demo-hikey960-default hikey960 demo 3s
    pcase_ demo-juno_r0-noeas juno_r0 demo 3s eas.mode=off
    pcase_ demo-tc2-hmp tc2 demo 3s kernel=v4.4 hmp.enabled=true cpufreq.governor=interactive
    pcase_ periodic-rk3399-sched rk3399 gen:periodic:duty=40,tasks=6 3s cpufreq.governor=sched
    pcase_ corpus-custom-slice-hikey960 hikey960 "$ex/custom-slice.json" 3s
    pcase_ corpus-dvfs-juno juno_r0 "$ex/cpufreq_governor_efficiency/dvfs.json" 3s
done
cargo build --profile bench-lto --locked -q -p hetsched-bench
for b in periodic; do
    target/bench-lto/hetsched-bench dump "$b" 2>"$out/j" | sha256sum | cut -c1-16 | sed "s/\$/  bench-$b trace/"
    printf '%s  bench-%s json\n' "$(sha256sum <"$out/j" | cut -c1-16)" "$b"
done
echo "$n runs"
