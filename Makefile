# tessera: the two set-up commands are `make demo` and `make test`. Each installs what is
# missing (scripts/install-deps), configures, builds and runs.
#
#   make demo                 build and run the demo: a short shock-bubble run (writes build/demo/)
#   make test                 build and run every test (preset cpu)
#   make bench SUITE=sched    run one benchmark suite, write build/bench/<suite>.json
#   make asan | tsan          the sanitizer suites
#   make cuda-build           compile every CUDA target of the CUDA preset (no GPU needed)
#   make fuzz                 build the libFuzzer targets (clang) and run each FUZZ_SECONDS from its corpus
#   make install PREFIX=dir   install headers, library and the CMake package

PRESET ?= cpu
SUITE ?= sched
PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD := build/$(PRESET)
# The dist suite runs on two ranks; --bind-to none leaves each rank's threads every core.
MPIRUN := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
	OMPI_MCA_btl_vader_single_copy_mechanism=none mpirun --oversubscribe --bind-to none

# ccache (scripts/install-deps installs it; CMakeLists.txt uses it when found) hits across
# checkouts in different folders, as CI's fresh clone is: paths below this folder are hashed
# relative to it, and the build folder is not hashed into debug builds.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: all deps configure build demo test bench asan tsan cuda-build fuzz install clean

all: build

deps:
	@scripts/install-deps

# Configure only when the build tree is missing: re-running the preset is cheap but noisy.
configure: deps
	@test -f $(BUILD)/build.ninja || cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

demo: build
	$(BUILD)/apps/euler2d/tessera-euler2d --size 160 --t-final 0.2 --png-every 100 --h5-every 100 \
		--out build/demo/euler2d --trace build/demo/euler2d.trace.json

test: build
	ctest --preset $(PRESET) -j $(JOBS)

bench:
	@$(MAKE) --no-print-directory build PRESET=cpu
	@test -x build/cpu/bench/$(SUITE)/tessera-bench-$(SUITE) || { echo "no benchmark suite '$(SUITE)' (see bench/)"; exit 2; }
	@mkdir -p build/bench
	$(if $(filter dist,$(SUITE)),$(MPIRUN) -np 2 ,)build/cpu/bench/$(SUITE)/tessera-bench-$(SUITE) --json build/bench/$(SUITE).json

asan:
	@$(MAKE) --no-print-directory test PRESET=asan

# TSan runs the runtime label only, so it builds only those tests (not the apps and their tests).
tsan:
	@$(MAKE) --no-print-directory configure PRESET=tsan
	cmake --build --preset tsan -j $(JOBS) --target tessera_runtime_tests
	ctest --preset tsan -j $(JOBS)

cuda-build:
	@$(MAKE) --no-print-directory configure PRESET=cuda
	cmake --build --preset cuda -j $(JOBS) --target tessera_cuda_targets

# Each fuzzer starts from its corpus in fuzz/corpus/ (read only) and writes what it finds new to
# a scratch folder; a crash, a sanitizer report or a leak stops it and fails the target.
FUZZ_SECONDS ?= 30
FUZZERS := checkpoint device_spec lb_input app_cli
fuzz:
	@$(MAKE) --no-print-directory configure PRESET=fuzz
	cmake --build --preset fuzz -j $(JOBS) --target tessera_fuzzers
	@for f in $(FUZZERS); do \
	  rm -rf build/fuzz/found/$$f && mkdir -p build/fuzz/found/$$f && \
	  echo "fuzz_$$f: $(FUZZ_SECONDS) s" && \
	  build/fuzz/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/found/$$f- build/fuzz/found/$$f fuzz/corpus/$$f > build/fuzz/found/$$f.log 2>&1; \
	  rc=$$?; tail -4 build/fuzz/found/$$f.log; \
	  if [ $$rc -ne 0 ]; then echo "fuzz_$$f failed: see build/fuzz/found/$$f.log"; exit 1; fi; \
	done

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf build
