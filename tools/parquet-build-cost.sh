#!/usr/bin/env bash
# What writing Parquet from Rust would cost: the clean release build time of a scratch
# crate that depends only on `parquet` with its `arrow` writer (the features a table
# writer needs), in a temporary directory with its own target/. docs/sweeps.md quotes it.
# Usage: bash tools/parquet-build-cost.sh [PARQUET_VERSION]   (default: the newest)
set -euo pipefail
version="${1:-*}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src"
cat > "$dir/Cargo.toml" <<TOML
[package]
name = "parquet-cost"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
parquet = { version = "$version", default-features = false, features = ["arrow", "snap"] }
arrow-array = "*"
arrow-schema = "*"
TOML
echo 'fn main() { let _ = parquet::file::properties::WriterProperties::builder(); }' > "$dir/src/main.rs"
cd "$dir"
cargo fetch --quiet
cargo tree --quiet --prefix none --no-dedupe -e normal | sort -u | wc -l | xargs echo "crates in the tree:"
start=$(date +%s)
cargo build --release --quiet
end=$(date +%s)
echo "clean release build: $((end - start)) s on $(nproc) cores"
