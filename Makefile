# FLAMIA: the two commands are `make demo` and `make test`. Both install what
# is missing (scripts/install-deps.sh), configure and build first.
BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test demo clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	@$(MAKE) --no-print-directory deps
	cmake -S . -B $(BUILD) -G Ninja \
	  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit

configure: $(BUILD)/build.ninja

build: deps configure
	ninja -C $(BUILD) -j $(JOBS)

test: build
	@scripts/run-tests.sh $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)
