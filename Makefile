# Thin wrapper over CMake. Every target first makes sure the Debian packages are
# present (scripts/install-deps.sh is idempotent and quiet when nothing is missing).
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
CRESCENT   := $(BUILD)/bin/crescent
# Debian's interpreter, named explicitly: another python3 (without numpy, torch
# or pybind11) may come first on PATH. The module is built for this one.
PYTHON     := /usr/bin/python3

.PHONY: all deps build wheel test-build test test-unit test-integration test-python test-chaos chaos e2e test-asan test-tsan test-fuzz fuzz bench run screenshot format tidy clean

all: build

deps:
	@bash scripts/install-deps.sh

CONFIGURE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCRESCENT_PYTHON=$(PYTHON) $(CMAKE_ARGS) >/dev/null

build: deps
	@$(CONFIGURE)
	@cmake --build $(BUILD) -j $(JOBS)

# What the release tree's tests run, and no more: the `crescent` binary and
# the Python module (test-integration adds its test binaries); not perf/'s
# programs, which no test runs (about a minute of compiling on 2 cores).
test-build: deps
	@$(CONFIGURE)
	@cmake --build $(BUILD) -j $(JOBS) --target crescent _crescent _node

# A wheel, $(DIST)/crescent-<version>-<python tag>-<platform>.whl: the `crescent`
# package (every module of python/crescent, the extensions), and the `crescent`
# binary behind a console entry point, packaged from the CMake tree BUILD_DIR
# (default $(BUILD); staged in BUILD_DIR/wheel) by Debian's `python3 -m build`
# with setuptools, offline. It is for Debian 12's Python and libraries (the
# binary and extensions link the system's gRPC, protobuf, ...): install it with
# `pip install --no-index dist/crescent-*.whl` (README.md, "Python").
BUILD_DIR ?= $(BUILD)
DIST      ?= dist
wheel: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCRESCENT_PYTHON=$(PYTHON) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target crescent _crescent _node
	@bash scripts/build_wheel.sh $(BUILD_DIR) $(DIST) $(PYTHON)

# The whole suite, each test built and run once where it checks the most:
# the integration tests (real crescent processes) and the Python tests on the
# release build that users run; the unit tests under ASan+UBSan (all but the
# "race" ones); the concurrent tests under TSan (labels: declared with each
# test in its directory's crescent_add_tests call); every fuzz target on fresh
# inputs for a few seconds.
test: test-integration test-python test-chaos test-asan test-tsan test-fuzz

# Every unit and integration test on the release build (a quick check while
# working; `make test` runs the unit tests under the sanitizers instead).
test-unit: build
	@cmake --build $(BUILD) -j $(JOBS) --target unit_tests integration_tests
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The integration tests mostly wait on their processes (timeouts, leases,
# heartbeats: cluster_fault_test takes 2.3 s of CPU in 32 s), so twice JOBS
# run at once.
ITEST_JOBS ?= $(shell expr $(JOBS) \* 2)
test-integration: test-build
	@cmake --build $(BUILD) -j $(JOBS) --target integration_tests
	ctest --test-dir $(BUILD) --output-on-failure -j $(ITEST_JOBS) -L integration

# pytest over the `crescent` module in $(BUILD)/python (the binding, the SGLang
# HiCache adapter crescent.hicache, a tiny E2E run), against real
# `crescent serve` / `crescent master` processes from $(BUILD)/bin.
test-python: test-build
	PYTHONPATH=$(BUILD)/python CRESCENT_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q -p no:cacheprovider tests/python

# The chaos checker (tests/chaos, docs/testing.md): a master, three store nodes
# and four client workers as real processes, on network-namespace hosts when
# run as root (loopback otherwise), under seeded faults. `test-chaos` is the
# one-minute run of `make test`; `chaos` runs for CHAOS_SECONDS with CHAOS_SEED
# and prints faults, operations and violations (exit 1 on any). CHAOS_FAULTS
# (comma-separated kinds) narrows the fault mix of either; naming leader_kill,
# leader_partition or etcd_kill runs three masters on a three-member etcd
# instead (`test-chaos` runs such a minute too, and a leader partition test).
# CHAOS_DURABILITY is the master's --log-sync (always, or N ms; with a data dir
# and a persistent segment per node), or off (neither).
CHAOS_SECONDS    ?= 300
CHAOS_SEED       ?= 1
CHAOS_FAULTS     ?=
CHAOS_DURABILITY ?= always
test-chaos: test-build
	PYTHONPATH=$(BUILD)/python CRESCENT_BUILD=$(abspath $(BUILD)) CHAOS_FAULTS=$(CHAOS_FAULTS) \
	    CHAOS_DURABILITY=$(CHAOS_DURABILITY) $(PYTHON) -m pytest -q -s -p no:cacheprovider tests/chaos

chaos: build
	PYTHONPATH=$(BUILD)/python CRESCENT_BIN=$(abspath $(CRESCENT)) $(PYTHON) tests/chaos/run_chaos.py \
	    --seconds $(CHAOS_SECONDS) --seed $(CHAOS_SEED) --durability $(CHAOS_DURABILITY) \
	    $(if $(CHAOS_FAULTS),--faults $(CHAOS_FAULTS))

# The end-to-end harness (python/crescent_e2e): a small GQA model (CPU, float32)
# serving a multi-turn workload with prefix reuse through crescent.hicache, three
# ways: without an L3 store, over a `redis-server` and over a `crescent serve`,
# both started by the harness. Prints one table (hit ratio, TTFT mean and p90,
# throughput, logits against the no-store run; docs/sglang.md); exits non-zero
# on a logit mismatch. E2E_BACKENDS=crescent runs Crescent alone (its own
# table). More flags with E2E_ARGS, e.g. with TRACE set to the public Mooncake
# FAST'25 synthetic trace (synthetic_trace.jsonl): E2E_ARGS="--trace $$TRACE --requests 40".
E2E_ARGS     ?=
E2E_BACKENDS ?= redis,crescent
e2e: build
	PYTHONPATH=$(BUILD)/python:python $(PYTHON) -m crescent_e2e --model small \
	    --requests 24 --turns 4 --backend $(E2E_BACKENDS) --crescent-bin $(CRESCENT) $(E2E_ARGS)

# The sanitizer trees (CMAKE_BUILD_TYPE=Sanitize: -Og -g1, assertions on)
# build only the libraries and the unit tests they run.
test-asan: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=Sanitize -DCRESCENT_SANITIZE=address -DCRESCENT_TESTS_ONLY=ON >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS) --target memory_tests
	ctest --test-dir $(BUILD)-asan --output-on-failure -j $(JOBS) -L unit -LE race

test-tsan: deps
	@cmake -S . -B $(BUILD)-tsan -DCMAKE_BUILD_TYPE=Sanitize -DCRESCENT_SANITIZE=thread -DCRESCENT_TESTS_ONLY=ON >/dev/null
	@cmake --build $(BUILD)-tsan -j $(JOBS) --target concurrent_tests
	ctest --test-dir $(BUILD)-tsan --output-on-failure -j $(JOBS) -L concurrent

# The libFuzzer targets of tests/fuzz (docs/building.md, "Fuzzing"), built with
# clang in $(BUILD)-fuzz and run one after another, FUZZ_SECONDS each (or
# FUZZ_RUNS inputs each; FUZZ_TARGETS="wire trace" picks some); prints the
# inputs run per target. `make test` replays their checked-in corpus (the
# *_fuzz_replay unit tests).
FUZZ_SECONDS ?= 60
fuzz: deps
	FUZZ_BUILD=$(BUILD)-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) \
	    FUZZ_TARGETS="$(FUZZ_TARGETS)" JOBS=$(JOBS) bash scripts/fuzz.sh

# The part of `make test` that fuzzes: every target for FUZZ_TEST_SECONDS on
# fresh inputs (libFuzzer picks a new seed each run), beside the corpus replay
# of test-asan, so that a change which breaks an invariant the corpus does not
# reach is still caught.
FUZZ_TEST_SECONDS ?= 5
test-fuzz: deps
	FUZZ_BUILD=$(BUILD)-fuzz FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) FUZZ_RUNS= FUZZ_TARGETS= \
	    JOBS=$(JOBS) bash scripts/fuzz.sh

# Micro-benchmarks, the in-process master load test, the simulator on the
# bundled trace, then `crescent bench all` (baseline, put-get over TCP and shared
# memory, exists, and the same workloads through a real redis-server) at a size
# that finishes in a few minutes; its JSON lands in $(BUILD)/bench.json.
BENCH_ARGS ?= --size 64KiB,1MiB,4MiB --batch 16 --clients 1 --reps 3 --bytes-per-client 64MiB
bench: build
	@for b in $(BUILD)/bin/*_bench; do echo "== $$b"; $$b --benchmark_min_time=0.2 || exit 1; done
	$(BUILD)/bin/master_perf --objects 1000000 --threads 2 --seconds 1
	$(CRESCENT) sim --trace tests/data/small_trace.jsonl --capacity 5%,10% --policy fifo,lru,sieve,s3fifo,prefix-lru,belady
	$(CRESCENT) bench all $(BENCH_ARGS) --json $(BUILD)/bench.json

# The embedded store: master + one store node on 127.0.0.1 (gRPC 50051, HTTP 9003).
# Builds only the `crescent` binary (and the libraries it links): no perf
# program, no Python module. Pass flags with ARGS, e.g. `make run ARGS="--segment-size 4GiB"`.
run: deps
	@$(CONFIGURE)
	@cmake --build $(BUILD) -j $(JOBS) --target crescent
	$(CRESCENT) serve $(ARGS)

# A PNG of the status page (GET / on the admin port) of a live serve under a
# few seconds of load, taken with headless Chromium: $(BUILD)/status-page.png.
screenshot: build
	PYTHONPATH=$(BUILD)/python $(PYTHON) scripts/screenshot.py --build $(BUILD)

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

tidy: build
	@git ls-files 'src/*.cc' | grep -v _test.cc | xargs clang-tidy -p $(BUILD) --quiet

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-fuzz $(DIST)
