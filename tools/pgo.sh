#!/usr/bin/env bash
# make pgo: the profile-guided build of the benchmarks and the CLI (rustc's
# `-Cprofile-generate` / `-Cprofile-use`, LLVM's PGO; the rustc book, "Profile-guided
# Optimization").
#
#   1. builds hetsched-bench and the CLI instrumented (target/pgo/gen, the bench-lto
#      profile; both in one build, as in step 4: the profile names functions by their
#      symbols, which carry each crate's hash, and that hash changes with the features
#      cargo unifies over the packages built together);
#   2. runs `hetsched-bench train`: the training runs, inputs of the benchmarks' kinds that
#      are none of the benchmarks' own (crates/hetsched-bench/src/main.rs, TRAINING);
#   3. merges the raw profile with the toolchain's own llvm-profdata (rustup's
#      `llvm-tools` component, installed here when it is missing) into
#      target/pgo/hetsched-HASH.profdata;
#   4. builds hetsched-bench and the `hetsched` CLI with that profile (target/pgo/use:
#      target/pgo/use/bench-lto/hetsched-bench and .../hetsched);
#   5. checks that the profile-guided build gives the same bytes as the plain builds:
#      `hetsched-bench dump periodic` and `dump large` (the full ftrace text and the result
#      JSON) against the bench-lto build, and `hetsched run` of the demo (trace and JSON)
#      against the release build.
#
# Nothing is kept between runs: each `make pgo` starts from an empty profile.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    rustup component add llvm-tools >/dev/null 2>&1 || true
fi
[ -x "$profdata" ] || {
    echo "pgo: $profdata is missing and \`rustup component add llvm-tools\` did not install it (\`make bench-plain\` runs the benchmarks on the plain build)"
    exit 2
}
raw="$root/target/pgo/profraw"
rm -rf "$raw"
mkdir -p "$raw"

# 1. instrumented build (its own target directory: RUSTFLAGS would rebuild target/)
RUSTFLAGS="-Cprofile-generate=$raw" cargo build --profile bench-lto --locked -q \
    -p hetsched-bench -p hetsched-cli --target-dir target/pgo/gen
# build scripts run while building also write profiles: start from an empty directory
rm -rf "$raw" && mkdir -p "$raw"

# 2. training
target/pgo/gen/bench-lto/hetsched-bench train

# 3. merge; the file is named by its hash, so that a new profile is a new RUSTFLAGS and
#    cargo rebuilds every crate with it (cargo does not look into the file itself)
"$profdata" merge -o "$raw/merged.profdata" "$raw"/*.profraw
rm -f target/pgo/hetsched-*.profdata
prof="$root/target/pgo/hetsched-$(sha256sum <"$raw/merged.profdata" | head -c 16).profdata"
mv "$raw/merged.profdata" "$prof"
echo "pgo: profile ${prof#"$root"/}"

# 4. the profile-guided build
RUSTFLAGS="-Cprofile-use=$prof" cargo build --profile bench-lto \
    --locked -q -p hetsched-bench -p hetsched-cli --target-dir target/pgo/use

# 5. the same bytes as the plain build: `dump periodic` and `dump large` (the full ftrace
#    text and the result JSON)
cargo build --profile bench-lto --locked -q -p hetsched-bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in periodic large; do
    for b in target/bench-lto/hetsched-bench target/pgo/use/bench-lto/hetsched-bench; do
        "$b" dump "$n" 2>"$tmp/json" | sha256sum | cut -d' ' -f1
        sha256sum <"$tmp/json" | cut -d' ' -f1
    done >"$tmp/hashes"
    if [ "$(sed -n 1,2p "$tmp/hashes")" != "$(sed -n 3,4p "$tmp/hashes")" ]; then
        echo "pgo: the profile-guided build's \`dump $n\` differs from the plain build's"
        cat "$tmp/hashes"
        exit 1
    fi
    echo "pgo: dump $n identical to the plain build ($(head -c 16 "$tmp/hashes")…)"
done
cargo build --release --locked -q -p hetsched-cli
for b in target/release/hetsched target/pgo/use/bench-lto/hetsched; do
    "$b" run --platform hikey960 --workload demo --seed 5 --trace "$tmp/t.txt" \
        --json "$tmp/r.json" >/dev/null
    cat "$tmp/t.txt" "$tmp/r.json" | sha256sum | cut -d' ' -f1
done >"$tmp/hashes"
if [ "$(sed -n 1p "$tmp/hashes")" != "$(sed -n 2p "$tmp/hashes")" ]; then
    echo "pgo: the profile-guided CLI's demo run differs from the release build's"
    exit 1
fi
echo "pgo: hetsched run (demo) identical to the release build ($(head -c 16 "$tmp/hashes")…)"
echo "pgo: target/pgo/use/bench-lto/hetsched-bench, target/pgo/use/bench-lto/hetsched"
