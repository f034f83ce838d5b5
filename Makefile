# procmesh: the two commands that matter are `make run` and `make test`.
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
PORT ?= 8080
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
NODE_DIR := $(BUILD)/node

.PHONY: all deps deps-test deps-bench configure build run test test-asan fuzz node bench clean

all: build

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

deps-bench:
	@scripts/deps.sh bench

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: deps configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/procmesh --port $(PORT)

# The glTF validator and the benchmark peers live in the build tree.
node: $(NODE_DIR)/.installed
$(NODE_DIR)/.installed: bench/package.json
	@mkdir -p $(NODE_DIR)
	@cp bench/package.json $(NODE_DIR)/package.json
	@cd $(NODE_DIR) && npm install --no-audit --no-fund --loglevel=error >/dev/null
	@touch $@

# The benches are built too (not run), so a bench that no longer links fails here.
test: deps-test configure node
	@cmake --build $(BUILD) -j $(JOBS) --target all benches
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer.
test-asan:
	@$(MAKE) test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS=-DPM_SANITIZE=ON

# Every route's libFuzzer harness (clang, ASan + UBSan) for FUZZ_SECONDS each;
# `make test` replays the seed corpora and kept crash files (tests/fuzz/).
FUZZ_SECONDS ?= 60
fuzz: deps-test
	@CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPM_FUZZ=ON -DPM_SANITIZE=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzzers
	@tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

bench: deps-bench configure
	@$(MAKE) --no-print-directory node
	@cmake --build $(BUILD) -j $(JOBS) --target procmesh benches
	@bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-fuzz
