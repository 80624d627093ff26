# rpcrdma: thin wrapper around CMake/CTest.  See README.md.
BUILD      ?= build
BUILD_ASAN ?= build-asan
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all build deps asan check unit vm-check demo install clean fuzz

all: build

deps:
	scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_ARGS)

$(BUILD_ASAN)/CMakeCache.txt:
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DRPCRDMA_SANITIZE=ON -DRPCRDMA_VM_TESTS=OFF $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

asan: $(BUILD_ASAN)/CMakeCache.txt
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# Unit tests under ASan/UBSan, natively.
unit: asan
	cd $(BUILD_ASAN) && ctest --output-on-failure -L unit

# Every test: unit tests (ASan build) and the VM tests (normal build).
check: deps build asan
	cd $(BUILD_ASAN) && ctest --output-on-failure -L unit
	cd $(BUILD) && ctest --output-on-failure

# VM tests only.
vm-check: build
	cd $(BUILD) && ctest --output-on-failure -L vm

demo: deps build
	scripts/demo

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
