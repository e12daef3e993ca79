# Sluice: the two commands are `make run` and `make test`. Both install what is missing first
# (scripts/setup.sh: Debian packages + DuckDB) and build what is needed.
#
#   make run          build, then run the demo pipeline (examples/) on the embedded default
#   make test         build, then run the fast tests (unit + SQL logic tests) through ctest
#   make test-all     ... and the slow ones (crash loops, browser tests)
#   make acceptance   the suites that read ../shared (Spark's acceptance cases); fails without it
#   make peers        install the real peers (Spark + Delta, delta-rs, DuckDB, Kafka) into the cache
#                     outside the clone (scripts/peers.sh); a second run does nothing
#   make interop      build, then run the suites against the peers (label interop; needs make peers)
#   make fixtures     rewrite the committed Delta fixtures with real Spark and delta-rs
#   make debug        ASan + UBSan build in build/debug and its fast tests
#   make fuzz         build the fuzz targets and run each for FUZZ_SECONDS (60) over its corpus
#                     (test/fuzz/: libFuzzer with CXX=clang++ CMAKE_FLAGS=-DSLUICE_FUZZ=ON,
#                     else a standalone driver); `make test` replays the corpora
#   make faults       the fault campaign: ROUNDS (1) rounds of test/faults/fault_harness.py (SEED,
#                     STEPS), CAMPAIGN_ROUNDS (1) of test/crash/campaign.sh (KILLS) and each fuzz
#                     target for FAULT_FUZZ_SECONDS (30); docs/reliability.md
#   make bench        build (optimized, $(BUILD_DIR)) and run the Nexmark suite; writes its table
#                     in bench/RESULTS.md (scripts/bench_nexmark.sh)
#   make bench-all    also every micro-benchmark program under bench/ (scripts/bench.sh)
#   make bench-peers  Nexmark q0-q2, q5 on Sluice, Spark and Flink over the same Kafka topic, one JSON
#                     line per engine per query (bench/peers/README.md; needs make peers)
#   make format       clang-format the sources; make format-check fails on a diff
#   make thread-safety-check  clang's -Wthread-safety over the sources that lock (the lock
#                     annotations of common/mutex.h checked; scripts/thread-safety-check.sh)
#   make tidy         clang-tidy with .clang-tidy's checks over src/ (TIDY_DIRS to narrow it, less
#                     the files of TIDY_SKIP; scripts/clang-tidy-check.sh; clang-tidy-14 from make
#                     setup; TIDY_JOBS)
#   make clean        remove build/

BUILD_DIR   ?= build/release
DEBUG_DIR   ?= build/debug
BUILD_TYPE  ?= RelWithDebInfo
JOBS        ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure -j $(JOBS) --timeout 600
SLUICE      := $(BUILD_DIR)/sluice

# ccache keys on paths relative to the clone, so that a fresh clone (CI's) reuses what an earlier
# build of another clone compiled.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

SOURCES := $(shell git ls-files '*.cc' '*.h' 2>/dev/null)

.PHONY: all setup configure build run test test-all acceptance peers interop fixtures debug bench \
        bench-all bench-peers fuzz faults format format-check thread-safety-check tidy clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@scripts/demo.sh $(SLUICE)

# Labels kept out of `make test`: slow and fuzz (test-all), acceptance (needs ../shared), interop
# (peers).
test: build
	ctest --test-dir $(BUILD_DIR) -LE 'slow|fuzz|acceptance|interop' $(CTEST_FLAGS)

test-all: build
	ctest --test-dir $(BUILD_DIR) -LE 'acceptance|interop' $(CTEST_FLAGS)

acceptance: build
	@test -d ../shared || { echo "make acceptance: ../shared is missing beside the clone" >&2; exit 1; }
	ctest --test-dir $(BUILD_DIR) -L acceptance $(CTEST_FLAGS)

peers:
	@scripts/peers.sh

# The interop suites start their servers themselves; one at a time (-j 1): Spark and a broker
# each want the machine's two cores.
interop: build
	@scripts/peers/check.sh
	ctest --test-dir $(BUILD_DIR) -L interop --output-on-failure -j 1 --timeout 1800

fixtures:
	@scripts/peers/check.sh
	@scripts/fixtures/make_all.sh

debug: setup
	cmake -S . -B $(DEBUG_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=ON \
	  -DSLUICE_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(DEBUG_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:detect_container_overflow=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(DEBUG_DIR) -LE 'slow|fuzz|acceptance|interop' $(CTEST_FLAGS)

# The benchmarks use the same optimized build as the tests (RelWithDebInfo: -O2 -g), so that a
# clean machine builds once, and `make bench` builds only the sluice binary: it stays well under
# 20 minutes on 2 cores.
bench: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sluice
	@scripts/bench_nexmark.sh $(SLUICE)

# One fuzz target at a time, each for FUZZ_SECONDS (test/fuzz/CMakeLists.txt, docs/testing.md).
FUZZ_SECONDS ?= 60
fuzz: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target fuzzers
	SLUICE_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest --test-dir $(BUILD_DIR) -L fuzz --output-on-failure \
	  -j 1 --timeout $$(( $(FUZZ_SECONDS) + 600 ))

# The fault campaign (docs/reliability.md): ROUNDS rounds of the fault harness
# (test/faults/fault_harness.py: one pipeline under a seeded schedule of kills, crash points,
# injected I/O errors, zombies, torn files and ENOSPC, every table compared with a batch oracle;
# SEED makes a run reproducible and is printed, each failure prints its round's seed; about 6 s a
# round on 2 cores), then CAMPAIGN_ROUNDS rounds of every crash script of test/crash/
# (campaign.sh, each script its own oracle, KILLS per script), then every fuzz target for
# FAULT_FUZZ_SECONDS (0: none). Fails when any part failed.
ROUNDS ?= 1
STEPS ?= 8
CAMPAIGN_ROUNDS ?= 1
KILLS ?= 5
SEED ?=
FAULT_FUZZ_SECONDS ?= 30
MOCK_KAFKA := $(BUILD_DIR)/src/sources/kafka/sluice_mock_kafka
ENOSPC_PRELOAD := $(BUILD_DIR)/test/libsluice_enospc_preload.so
faults: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sluice sluice_mock_kafka sluice_enospc_preload fuzzers
	@seed="$(SEED)"; seed="$${seed:-$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}"; h=0; c=0; f=0; \
	  python3 test/faults/fault_harness.py --sluice $(SLUICE) --mock-kafka $(MOCK_KAFKA) \
	    --enospc-preload $(ENOSPC_PRELOAD) --rounds $(ROUNDS) --steps $(STEPS) --seed "$$seed" || h=1; \
	  if [ $(CAMPAIGN_ROUNDS) -gt 0 ]; then \
	    test/crash/campaign.sh $(SLUICE) $(MOCK_KAFKA) $(CAMPAIGN_ROUNDS) "$$seed" $(KILLS) || c=1; fi; \
	  if [ $(FAULT_FUZZ_SECONDS) -gt 0 ]; then \
	    SLUICE_FUZZ_SECONDS=$(FAULT_FUZZ_SECONDS) ctest --test-dir $(BUILD_DIR) -L fuzz \
	      --output-on-failure -j 1 --timeout $$(( $(FAULT_FUZZ_SECONDS) + 600 )) || f=1; fi; \
	  ok() { [ $$1 = 0 ] && echo passed || echo FAILED; }; \
	  echo "make faults: seed=$$seed harness $$(ok $$h), campaign ($(CAMPAIGN_ROUNDS) rounds)" \
	    "$$(ok $$c), fuzz ($(FAULT_FUZZ_SECONDS) s/target) $$(ok $$f)"; [ $$h$$c$$f = 000 ]

bench-all: build
	@scripts/bench.sh $(BUILD_DIR)

# Nexmark on Sluice, Spark and Flink, the same events in a real broker's topic (bench/peers).
PEERS_QUERIES ?= q0 q1 q2 q5
PEERS_EVENTS ?= 2000000
bench-peers: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target sluice nexmark_emit
	@scripts/peers/check.sh
	@for q in $(PEERS_QUERIES); do \
	  $(SLUICE) bench peers --query $$q --events $(PEERS_EVENTS) --json || exit 1; done

format:
	clang-format -i $(SOURCES)

format-check:
	clang-format --dry-run --Werror $(SOURCES)

thread-safety-check: configure
	scripts/thread-safety-check.sh $(BUILD_DIR)

tidy: configure
	scripts/clang-tidy-check.sh $(BUILD_DIR)

clean:
	rm -rf build
