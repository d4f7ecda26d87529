# hetsched — two commands on a fresh machine: `make demo` and `make test`.
# Everything installed lives in this checkout: target/ (cargo), .venv (Python API),
# .venv-lisa (LISA 3.1.0 for the trace check).

CARGO   ?= cargo
PYTHON  ?= python3
VENV    := .venv
VPY     := $(VENV)/bin/python
HETSCHED := target/release/hetsched
# Perfetto's Python package: its perfetto_trace_pb2 decodes our .pftrace in the tests.
PERFETTO_PY := perfetto==0.59.1

.PHONY: demo build test lint dts rust-test py-test lisa-test bench bench-plain pgo bench-count bench-peers python clean reproduce-check chromium fuzz

## demo: build the CLI and run the built-in two-cluster scenario on hikey960
demo: build
	@mkdir -p out
	$(HETSCHED) run --platform hikey960 --workload demo --trace out/demo-trace.txt --json out/demo.json
	@echo "results: out/demo.json   trace (LISA/Perfetto): out/demo-trace.txt"

build:
	$(CARGO) build --release --locked -p hetsched-cli

## test: lints, every Rust test, the Python API tests, and LISA reading a real trace
test: lint rust-test py-test lisa-test
	@echo "make test: all passed"

# lint: formatting, clippy, and the developers' docs (private items too) without a broken
# link; the CLI's binary shares the library's name, so rustdoc leaves it out (its docs are
# its --help)
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --workspace --exclude hetsched-cli --no-deps --document-private-items

# Property tests use a fixed seed here so that CI is reproducible; explore new cases
# with another one: `make rust-test PROPTEST_RNG_SEED=$$RANDOM`.
PROPTEST_RNG_SEED ?= 20261121
export PROPTEST_RNG_SEED

# The kernel's own device trees for the real-board import tests (once per clone; installs
# dtc and cpp with apt-get when missing).
dts:
	bash tools/linux-dts.sh >/dev/null

rust-test: dts
	$(CARGO) test --locked --workspace --exclude hetsched-py

$(VPY):
	$(PYTHON) -m venv $(VENV) || $(PYTHON) -m virtualenv $(VENV) || \
	  { echo "make: cannot create $(VENV): install the venv module (Debian: apt-get install python3-venv)"; exit 1; }
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet "maturin>=1.5,<2" pandas numpy pytest ruff mypy "$(PERFETTO_PY)"

# The sweeps' optional extras (hetsched[ray], Parquet): pyarrow, and Ray where it installs
# (Python >= 3.10); tests/python/test_sweep.py runs a local Ray cluster when it is there.
$(VENV)/.sweep-extras: | $(VPY)
	$(VPY) -m pip install --quiet pyarrow
	@if $(VPY) -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then \
	  $(VPY) -m pip install --quiet "ray==2.60.0"; \
	else echo "make: Ray needs Python >= 3.10; the Ray sweep test will be skipped"; fi
	touch $@

# The reports' extras: matplotlib for hs.plot, Playwright to drive Debian's chromium in
# tests/python/test_report_browser.py (`playwright install` cannot download a browser here).
$(VENV)/.report-extras: | $(VPY)
	$(VPY) -m pip install --quiet "matplotlib>=3.10,<4" "playwright>=1.63,<2"
	touch $@

## chromium: Debian's chromium for the report's browser test, when it is missing and apt
## is there (as root); otherwise the test skips and says why
chromium:
	@if [ -x /usr/bin/chromium ] || [ -x /usr/lib/chromium/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y chromium || { apt-get update && apt-get install -y chromium; } || \
	  echo "make: could not install chromium; the browser test will be skipped"; \
	else echo "make: no /usr/bin/chromium and no apt-get as root: the browser test will be skipped"; fi

python: $(VPY) $(VENV)/.sweep-extras $(VENV)/.report-extras
	@$(VPY) -m pip show --quiet perfetto >/dev/null 2>&1 || $(VPY) -m pip install --quiet "$(PERFETTO_PY)"
	# installed as users install it: `pip install .` (the maturin backend, release build)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VPY) -m pip install --quiet --no-build-isolation .

py-test: python build chromium
	$(VENV)/bin/ruff check python tests/python tools
	$(VENV)/bin/ruff format --check python tests/python tools
	$(VENV)/bin/pytest -q
	$(VPY) -m mypy.stubtest hetsched._core

lisa-test: build python
	bash tools/lisa-venv.sh
	.venv-lisa/bin/python -m pytest -q -p no:cacheprovider tests/python/lisa

## reproduce-check: every `hetsched reproduce` experiment at full size (release), failing
## when a reproduction criterion of docs/experiments.md is not met; reports in out/.
## Not part of `make test` (see README, "Reproducing the series", for how long it takes).
reproduce-check: build
	@mkdir -p out
	$(HETSCHED) reproduce all --jobs 2 --check --json out/reproduce.json

## bench: the pinned benchmarks of crates/hetsched-bench (never part of `make test`), on
## the profile-guided build (`make pgo`); --check-target exits 1 when a target of issue 19
## is missed (docs/benchmarks.md). `make bench-plain`: the same on the plain bench-lto build.
BENCH_NAMES := periodic periodic-perf periodic-ondemand periodic-conservative \
  periodic-interactive periodic-sched periodic-trace periodic-pftrace hour large large-wide sweep \
  --check-target
bench: pgo
	@for n in $(BENCH_NAMES); do target/pgo/use/bench-lto/hetsched-bench $$n || exit $$?; done

bench-plain:
	$(CARGO) build --profile bench-lto --locked -p hetsched-bench
	@for n in $(BENCH_NAMES); do target/bench-lto/hetsched-bench $$n || exit $$?; done

## pgo: the profile-guided build of hetsched-bench and the CLI (tools/pgo.sh): trained on
## inputs that are none of the benchmarks', checked byte-identical to the plain build;
## target/pgo/use/bench-lto/hetsched is the fastest `hetsched` this repository builds
pgo:
	bash tools/pgo.sh

## bench-count: instructions per event of the main benchmarks under callgrind (valgrind)
bench-count:
	bash tools/bench-count.sh

## bench-peers: hetsched beside SimSo (PyPI, in .venv-peers) on the `periodic` task set
bench-peers:
	$(PYTHON) tools/bench-peers.py

## fuzz: each cargo-fuzz target of fuzz/ for FUZZ_SECONDS (needs a nightly toolchain and
## cargo-fuzz; says so in one line when either is missing). New inputs go to fuzz/work/;
## a crash is written to fuzz/artifacts/TARGET/ and fails the target. `make test` replays
## fuzz/corpus/ and fuzz/artifacts/ on stable (crates/hetsched/tests/fuzz_corpus.rs).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= rtapp platform options gen noise devicetree
fuzz:
	@if ! rustup run nightly rustc --version >/dev/null 2>&1; then \
	  echo "make fuzz: no nightly toolchain (rustup toolchain install nightly); no fuzzing done"; exit 0; fi; \
	if ! $(CARGO) +nightly fuzz --version >/dev/null 2>&1; then \
	  echo "make fuzz: cargo-fuzz is not installed (cargo install cargo-fuzz); no fuzzing done"; exit 0; fi; \
	cd fuzz && for t in $(FUZZ_TARGETS); do \
	  mkdir -p work/$$t && \
	  echo "make fuzz: $$t for $(FUZZ_SECONDS) s" && \
	  $(CARGO) +nightly fuzz run $$t work/$$t corpus/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
	    || exit 1; \
	done

clean:
	$(CARGO) clean
	rm -rf $(VENV) .venv-lisa .venv-peers out
