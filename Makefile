# Thin wrappers over CMake: `make`, `make test`, `make bench`, `make install PREFIX=...`.
BUILD ?= build
PREFIX ?= /usr/local

all: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $$(nproc)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD)

test: all
	cd $(BUILD) && ctest --output-on-failure

bench: all
	$(BUILD)/memhier bench --json $(BUILD)/bench.json

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)

.PHONY: all test bench install clean
