# chessboardd: `make demo` to hear a game, `make test` to run every test.
# Both install the system packages they need first (apt-get, with sudo when not root).

CARGO ?= cargo
SHELL := /bin/bash
# Debian / Raspberry Pi OS packages: ALSA and libespeak-ng for speech (bindgen needs libclang);
# the espeak-ng program for the latency comparison and the tests.
BUILD_PACKAGES := pkg-config libasound2-dev libclang-dev libespeak-ng-dev espeak-ng-data
TEST_PACKAGES := espeak-ng

.PHONY: all deps build demo test lint bench clean

all: build

deps:
	@sh scripts/deps.sh $(BUILD_PACKAGES) $(TEST_PACKAGES)

build: deps
	$(CARGO) build --release

demo: build
	./target/release/chessboardd demo

# Lint first, then every test; the last line sums up all test binaries.
test: deps lint
	@set -o pipefail; $(CARGO) test --all-targets 2>&1 | tee target/test.log
	@awk '/^test result:/ { p += $$4; f += $$6 } END { printf "tests: %d passed, %d failed\n", p, f }' target/test.log

# fmt and clippy come with rustup's default profile; skipped with a note where they are missing.
lint:
	@if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --all -- --check; \
	else echo "note: rustfmt not installed, format check skipped"; fi
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(CARGO) clippy --all-targets -- -D warnings; \
	else echo "note: clippy not installed, lint skipped"; fi

bench:
	$(CARGO) bench --bench replay

clean:
	$(CARGO) clean
