# rpcrdma: thin wrapper around CMake/CTest.  See README.md.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_TSAN ?= build-tsan
BUILD_ANALYZE ?= build-analyze
BUILD_COV  ?= build-coverage
FUZZ_TIME  ?= 60
DURATION   ?= 90
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc)
# VM tests at once (each guest keeps one host CPU busy): one per CPU.
VM_JOBS    ?= $(shell nproc)
CMAKE_ARGS ?=
# make deb: the packages (and the build's leftovers) go here, not in the
# checkout's parent directory
DEB_DIR    ?= $(BUILD)/deb

.PHONY: all build deps asan tsan analyze coverage check unit vm-check demo install deb deb-check clean fuzz fuzz-smoke fuzz-svc fuzz-nfs4 fuzz-tcp bench-wire bench soak

all: build

deps:
	scripts/install-deps

# A clear word when the tools are missing (a fresh machine: run make deps).
# Each tree is configured until CMake has written its Makefile, so a
# configure that failed (a missing -dev package) runs again next time.
NEED_CMAKE = @command -v cmake >/dev/null || { echo "rpcrdma: cmake not found: run scripts/install-deps (or make deps) first" >&2; exit 1; }

$(BUILD)/Makefile:
	$(NEED_CMAKE)
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

$(BUILD_ASAN)/Makefile:
	$(NEED_CMAKE)
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DRPCRDMA_SANITIZE=ON -DRPCRDMA_VM_TESTS=OFF $(CMAKE_ARGS)

build: $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

asan: $(BUILD_ASAN)/Makefile
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# ThreadSanitizer build: every unit test runs under it (40 of the 58
# programs start threads; the others cost under a second each), and any
# report fails the test (TSan's exit status 66).  No suppressions: the
# unit tests use the fake device, not an uninstrumented provider.  The
# tree also serves VM tests run by hand such as vm/worker-posts-load
# (RPCRDMA_BUILD_DIR=$(BUILD_TSAN)).  Part of make check.
$(BUILD_TSAN)/Makefile:
	$(NEED_CMAKE)
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=Debug -DRPCRDMA_VM_TESTS=OFF \
		"-DCMAKE_C_FLAGS=-fsanitize=thread -g -O1 -Wno-error=maybe-uninitialized" \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread $(CMAKE_ARGS)

tsan: $(BUILD_TSAN)/Makefile
	cmake --build $(BUILD_TSAN) -j $(JOBS)
	cd $(BUILD_TSAN) && TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 $${TSAN_OPTIONS:-}" \
		ctest --output-on-failure -j $(JOBS) -L unit --timeout 1500

# Static analysis: clang's analyzer and cppcheck over src/ and tools/,
# shellcheck over scripts/ and tests/**/*.sh; zero findings beyond the
# justified ones in .analysis/suppressions (scripts/analyze, docs/testing.md).
# Part of make check.
analyze:
	$(NEED_CMAKE)
	scripts/analyze --build $(BUILD_ANALYZE) --jobs $(JOBS)

# Line and branch coverage of src/ from the unit tests and the VM tests
# (COVERAGE_VM=0: the unit tests only).  scripts/coverage-vm runs each VM
# test with its own GCOV_PREFIX in the guest's shared build tree (qemu's 9p
# does not hold the guest's file locks on the host, so guests must not
# write one .gcda at once) and merges them in with gcov-tool; the
# per-directory table goes into docs/testing.md, the HTML report into
# $(BUILD_COV)/coverage/.  COVERAGE_VM_TESTS: a ctest -R regex for a subset;
# COVERAGE_VM_WRAPPER: a command put before each guest's (a VM slot
# wrapper).  -fprofile-update=atomic: the server's threads bump the same
# counters, and with plain increments gcov derived negative counts from
# the torn ones ("branch 3 taken -1", which gcovr refuses).  Not part of
# make check.
COVERAGE_VM ?= 1
COVERAGE_VM_TESTS ?=
COVERAGE_VM_WRAPPER ?=
$(BUILD_COV)/Makefile:
	$(NEED_CMAKE)
	cmake -S . -B $(BUILD_COV) -DCMAKE_BUILD_TYPE=Debug \
		"-DCMAKE_C_FLAGS=--coverage -O0 -fprofile-update=atomic" -DCMAKE_EXE_LINKER_FLAGS=--coverage \
		-DCMAKE_SHARED_LINKER_FLAGS=--coverage $(CMAKE_ARGS)

coverage: $(BUILD_COV)/Makefile
	@command -v gcovr >/dev/null && command -v gcov-tool >/dev/null || { echo "rpcrdma: gcovr or gcov-tool not found: run scripts/install-deps" >&2; exit 1; }
	cmake --build $(BUILD_COV) -j $(JOBS)
	find $(BUILD_COV) -name '*.gcda' -delete
	rm -rf $(BUILD_COV)/coverage
	cd $(BUILD_COV) && ctest --output-on-failure -j $(JOBS) -L unit
	-if [ "$(COVERAGE_VM)" = 1 ]; then scripts/coverage-vm $(BUILD_COV) -j $(VM_JOBS) \
		$(if $(COVERAGE_VM_TESTS),-R '$(COVERAGE_VM_TESTS)') \
		$(if $(COVERAGE_VM_WRAPPER),--wrapper '$(COVERAGE_VM_WRAPPER)'); fi
	RPCRDMA_COVERAGE_FROM="$(if $(filter 1,$(COVERAGE_VM)),unit tests and VM tests$(if $(COVERAGE_VM_TESTS), matching $(COVERAGE_VM_TESTS)),unit tests only)" \
		scripts/coverage $(BUILD_COV) docs/testing.md

# Unit tests under ASan/UBSan, natively.
unit: asan
	cd $(BUILD_ASAN) && ctest --output-on-failure -L unit

# Every test: unit tests (ASan build, then ThreadSanitizer build), static
# analysis, the fuzzers' smoke run and the VM tests (normal build).
# deps first, even under make -j: the builds need what it installs.
check: deps
	$(MAKE) build asan
	cd $(BUILD_ASAN) && ctest --output-on-failure -L unit
	$(MAKE) tsan analyze
	$(MAKE) fuzz-smoke
	cd $(BUILD) && ctest --output-on-failure -j $(VM_JOBS)

# VM tests only.
vm-check: build
	cd $(BUILD) && ctest --output-on-failure -j $(VM_JOBS) -L vm

# The demo says on the terminal what it does in about 40 lines; apt's and
# the build's output, the VM's console and the server's log go to DEMO_LOG.
DEMO_LOG ?= $(BUILD)/demo.log
demo:
	@mkdir -p $(dir $(DEMO_LOG)) && : >$(DEMO_LOG)
	@echo "demo: installing packages and building (output in $(DEMO_LOG))"
	@scripts/install-deps >>$(DEMO_LOG) 2>&1 || { echo "demo: scripts/install-deps failed; its output is in $(DEMO_LOG):" >&2; tail -n 15 $(DEMO_LOG) >&2; exit 1; }
	@$(MAKE) --no-print-directory build >>$(DEMO_LOG) 2>&1 || { echo "demo: the build failed; its output is in $(DEMO_LOG):" >&2; tail -n 15 $(DEMO_LOG) >&2; exit 1; }
	@RPCRDMA_DEMO_LOG=$(abspath $(DEMO_LOG)) RPCRDMA_BUILD_DIR=$(abspath $(BUILD)) scripts/demo

$(BUILD_FUZZ)/Makefile:
	$(NEED_CMAKE)
	cmake -S . -B $(BUILD_FUZZ) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DRPCRDMA_FUZZ=ON -DRPCRDMA_TESTS=OFF -DRPCRDMA_VM_TESTS=OFF

# libFuzzer over the wire codec, both directions, for FUZZ_TIME seconds.
fuzz: $(BUILD_FUZZ)/Makefile
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_wire wire_seeds
	mkdir -p $(BUILD_FUZZ)/seeds $(BUILD_FUZZ)/corpus
	$(BUILD_FUZZ)/tests/fuzz/wire_seeds $(BUILD_FUZZ)/seeds
	$(BUILD_FUZZ)/tests/fuzz/fuzz_wire -max_total_time=$(FUZZ_TIME) -max_len=8192 -artifact_prefix=$(BUILD_FUZZ)/ $(BUILD_FUZZ)/corpus $(BUILD_FUZZ)/seeds

# Benchmarks next to kernel nfsd, the kernel client and perftest: boots the
# test VM once (host mode on RDMA hardware); see bench/README.md.
bench: deps
	$(MAKE) build
	bench/run-bench

# Soak: random mixed load (kernel client and rpcrdma-nfs against rpcrdma-nfsd,
# every byte verified, server memory sampled) for DURATION seconds in one VM;
# results under $(BUILD)/soak/ (docs/soak.md).
soak: build
	RPCRDMA_BUILD_DIR=$(abspath $(BUILD)) scripts/soak $(DURATION)

# Codec micro-benchmark: ns per decode/encode (issue: wire codec).
bench-wire: build
	$(BUILD)/bench/bench_wire

# The four fuzzers built (clang) and run once over their seeds, no
# mutation: part of make check, so a fuzzer that stops building is seen.
fuzz-smoke: $(BUILD_FUZZ)/Makefile
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_wire wire_seeds fuzz_svc fuzz_nfs4 fuzz_tcp_rm
	rm -rf $(BUILD_FUZZ)/smoke && mkdir -p $(BUILD_FUZZ)/smoke/wire $(BUILD_FUZZ)/smoke/nfs4
	$(BUILD_FUZZ)/tests/fuzz/wire_seeds $(BUILD_FUZZ)/smoke/wire
	$(BUILD_FUZZ)/tests/fuzz/fuzz_wire -runs=0 -artifact_prefix=$(BUILD_FUZZ)/smoke/ $(BUILD_FUZZ)/smoke/wire
	$(BUILD_FUZZ)/tests/fuzz/fuzz_svc -runs=0 -artifact_prefix=$(BUILD_FUZZ)/smoke/ tests/fuzz/svc-seeds
	$(BUILD_FUZZ)/tests/fuzz/fuzz_nfs4 -runs=0 -artifact_prefix=$(BUILD_FUZZ)/smoke/ tests/fuzz/nfs4-seeds
	$(BUILD_FUZZ)/tests/fuzz/fuzz_nfs4 -runs=64 -seed=1 -artifact_prefix=$(BUILD_FUZZ)/smoke/ $(BUILD_FUZZ)/smoke/nfs4
	$(BUILD_FUZZ)/tests/fuzz/fuzz_tcp_rm -runs=0 -artifact_prefix=$(BUILD_FUZZ)/smoke/ tests/fuzz/tcp-rm-seeds

# libFuzzer over the server's receive path through the verbs seam.
fuzz-svc: $(BUILD_FUZZ)/Makefile
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_svc
	mkdir -p $(BUILD_FUZZ)/svc-corpus
	$(BUILD_FUZZ)/tests/fuzz/fuzz_svc -max_total_time=$(FUZZ_TIME) -max_len=1025 -artifact_prefix=$(BUILD_FUZZ)/svc- $(BUILD_FUZZ)/svc-corpus tests/fuzz/svc-seeds

# libFuzzer over the NFSv4.1 COMPOUND path (docs/fuzzing.md).
fuzz-nfs4: $(BUILD_FUZZ)/Makefile
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_nfs4
	mkdir -p $(BUILD_FUZZ)/nfs4-corpus
	$(BUILD_FUZZ)/tests/fuzz/fuzz_nfs4 -max_total_time=$(FUZZ_TIME) -max_len=4096 -artifact_prefix=$(BUILD_FUZZ)/nfs4- $(BUILD_FUZZ)/nfs4-corpus tests/fuzz/nfs4-seeds

# libFuzzer over the TCP transport's record-marking reader (docs/fuzzing.md).
fuzz-tcp: $(BUILD_FUZZ)/Makefile
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_tcp_rm
	mkdir -p $(BUILD_FUZZ)/tcp-rm-corpus
	$(BUILD_FUZZ)/tests/fuzz/fuzz_tcp_rm -max_total_time=$(FUZZ_TIME) -max_len=262144 -artifact_prefix=$(BUILD_FUZZ)/tcp-rm- $(BUILD_FUZZ)/tcp-rm-corpus tests/fuzz/tcp-rm-seeds

# Reconfigure first: rpcrdma.pc takes its prefix from the configure step.
install: build
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --install $(BUILD) --prefix $(PREFIX)

# Debian packages (debian/): rpcrdma-server, rpcrdma-client, librpcrdma0,
# librpcrdma-dev (and their -dbgsym), built from a copy of the checkout
# (tracked and new files) in $(DEB_DIR)/src, the .debs in $(DEB_DIR).
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || { echo "rpcrdma: dpkg-buildpackage or dh not found: apt-get install dpkg-dev debhelper (or run scripts/install-deps)" >&2; exit 1; }
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && DEB_BUILD_OPTIONS="nocheck parallel=$(JOBS)" dpkg-buildpackage -us -uc -b
	@ls -1 $(DEB_DIR)/*.deb

# The packages checked: the server's file list, lintian at error level,
# systemd-analyze verify on the unit (scripts/deb-check; also CTest's
# pkg/deb, label pkg).
deb-check: deb
	scripts/deb-check $(DEB_DIR)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_ANALYZE) $(BUILD_COV)
