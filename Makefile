# podnet: `make run` sets up, builds (Release) and runs the default scenario;
# `make test` sets up, builds and runs the whole test suite through ctest, then
# replays the fuzz corpora under ASan + UBSan (scripts/test-sanitize.sh --replay)
# and runs the flow engine's threaded tests under TSan (scripts/test-tsan.sh).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup configure build run test test-sanitize bench fuzz docs hostile clean

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/podnet run

# The suite, then the fuzz corpora replayed under ASan + UBSan (scripts/test-sanitize.sh --replay, build-replay/),
# then the flow engine's threaded tests under TSan (scripts/test-tsan.sh, build-tsan/).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@bash scripts/test-sanitize.sh --replay $(REPLAY_BUILD) $(JOBS)
	@bash scripts/test-tsan.sh $(TSAN_BUILD) $(JOBS)

# The documentation site: docs/ with the scenario key reference generated from this
# build's podnet, checked by `mkdocs build --strict`, in $(BUILD)/docs-site/site/.
docs: build
	@bash scripts/docs-site.sh $(BUILD)

# The hostile-input campaign at full size (tests/hostile/campaign.py; ctest runs its small size).
hostile: build
	python3 tests/hostile/campaign.py $(BUILD)/podnet --size full

bench: build
	@for b in $(BUILD)/bench/*_bench; do [ -x "$$b" ] && "$$b"; done

# libFuzzer targets with ASan + UBSan (clang), each run FUZZ_SECONDS on its corpus
# (or until FUZZ_RUNS executions, capped by FUZZ_SECONDS).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
fuzz:
	@bash scripts/setup.sh --fuzz
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPODNET_FUZZ=ON \
	  -DPODNET_TESTS=OFF -DPODNET_BENCH=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all
	@FUZZ_RUNS=$(FUZZ_RUNS) bash scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer.
SANITIZE_BUILD ?= build-sanitize
REPLAY_BUILD ?= build-replay
TSAN_BUILD ?= build-tsan
test-sanitize: setup
	@bash scripts/test-sanitize.sh $(SANITIZE_BUILD) $(JOBS)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) $(SANITIZE_BUILD) $(REPLAY_BUILD) $(TSAN_BUILD)
