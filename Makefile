# chessboardd: `make demo` to hear a game, `make test` to run every test.
# Both install the system packages they need first (apt-get, with sudo when not root).

CARGO ?= cargo
SHELL := /bin/bash
# Debian / Raspberry Pi OS packages: ALSA and libespeak-ng for speech (bindgen needs libclang);
# the espeak-ng program for the latency comparison and the tests.
BUILD_PACKAGES := pkg-config libasound2-dev libclang-dev libespeak-ng-dev espeak-ng-data
TEST_PACKAGES := espeak-ng systemd chromium fonts-dejavu-core liblouis-bin mosquitto openssl stockfish
# The computer opponent of `demo --opponent engine` (and [opponent] by default).
DEMO_PACKAGES := stockfish

.PHONY: all deps deps-build deps-demo build demo test check lint bench bench-tempo bench-matcher bench-restarts bench-opponent bench-web clean

all: build

# What building (and the demo) needs; the tests need more (a browser, a broker, ...).
deps-build:
	@sh scripts/deps.sh $(BUILD_PACKAGES)

deps:
	@sh scripts/deps.sh $(BUILD_PACKAGES) $(TEST_PACKAGES)

deps-demo:
	@sh scripts/deps.sh $(DEMO_PACKAGES)

build: deps-build
	$(CARGO) build --release

# The sample game; `./target/release/chessboardd demo --opponent engine` plays against Stockfish.
demo: build deps-demo
	./target/release/chessboardd demo

# Lint first, then every test (scripts/test.sh: three test programs at a time); the last line
# sums up all test programs. The properties' random cases come from a fixed seed, so that every
# run (here and in CI) tests the same cases: `PROPTEST_RNG_SEED=random make test` (or another
# number) searches afresh.
test: deps lint
	@PROPTEST_RNG_SEED=$${PROPTEST_RNG_SEED:-2026} CARGO=$(CARGO) scripts/test.sh; status=$$?; \
	awk '/^test result:/ { p += $$4; f += $$6 } END { printf "tests: %d passed, %d failed\n", p, f }' target/test.log; \
	exit $$status

# The quick lane for the edit-compile loop: fmt, clippy, the unit tests, the layers and the scenarios (no
# boards on pseudo-terminals, no daemons, no browser). `make test` runs everything, as CI does.
check: lint
	$(CARGO) test --lib --test layers --test scenarios --test pulled_cables --test dead_positions

# fmt and clippy come with rustup's default profile; skipped with a note where they are missing.
lint:
	@if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --all -- --check; \
	else echo "note: rustfmt not installed, format check skipped"; fi
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(CARGO) clippy --all-targets -- -D warnings; \
	else echo "note: clippy not installed, lint skipped"; fi

bench:
	$(CARGO) bench --bench replay

# The engine at people's tempo: games and moves read exactly, games with a wrong move left,
# corrections, games recorded to the end, replies from 40 to 300 ms, with each fault model (none,
# lost-next, lost-periodic, late, swaps, combined, pulls: the README's table). A subset:
# ./target/release/chessboardd bench tempo --faults late,combined --tempo 40 $(GAMES)
GAMES := $(addprefix tests/data/games/,anastasian-lewis.pgn kasparov-deep-blue-1997.pgn \
	molinari-bordais-1979.pgn nepomniachtchi-liren-game1.pgn seed-example.pgn selfplay-400.pgn)
bench-tempo: build
	./target/release/chessboardd bench tempo $(GAMES)

# Side by side with a position matcher (python-chess, in a virtual environment under target/):
# what each reads with each fault model at each tempo, and the time of each over 200 games.
bench-matcher: build
	scripts/bench-matcher.sh

# The daemon killed with SIGKILL and started again 0 to 5 s later while the players go on (DIY, DGT
# and ChessLink boards on pseudo-terminals): records right, in an order the board could not tell,
# with a wrong move left, stopped short (scripts/bench-restarts.py; RUNS=N for more or fewer).
RUNS := 12
bench-restarts: build
	python3 scripts/bench-restarts.py --runs $(RUNS)

# Playing against the computer: the time from the player's move to the computer's move
# announced at each strength (p50), and the engine's CPU use between moves (the README's figures).
bench-opponent: deps-demo
	$(CARGO) test --test opponent -- --ignored --nocapture answer_times

# The web view under 1,000 viewers (issue 17): a game of 97 plies at people's tempo played twice,
# alone and watched by 500 event streams and 500 pollers; prints the announcement delay of both
# and the p99 the viewers add (the README's figure). The test build, as `make test` runs it.
bench-web:
	WEB_LOAD_GAME=tests/data/games/nepomniachtchi-liren-game1.pgn \
		$(CARGO) test --test web_load -- --nocapture

clean:
	$(CARGO) clean

# --- Installing as a system service -----------------------------------------------------------
# make install                          build, then install under /usr/local (as root: sudo make install)
# make install DESTDIR=/tmp/x PREFIX=/usr   stage the files for a package or an image
# make uninstall                        remove them again (the config, the games and the user stay)
# make deb                              a Debian package (target/debian/chessboardd_*.deb) by cargo-deb
#
# Where the files go. systemd and udev also search /usr/local/lib/{systemd/system,sysusers.d,
# modules-load.d,udev/rules.d}, so the default PREFIX works without touching /usr. The config is
# always /etc/chessboardd/config.toml (the path in the unit), never overwritten once there.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
CONFDIR ?= /etc/chessboardd
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d

.PHONY: install uninstall deb

# Builds first where cargo is on the PATH; `sudo make install` in a shell where root has no cargo
# installs the binary `make` built before. Applies the new user, udev rules and unit only on the
# running system (DESTDIR empty); the user and group are made by systemd-sysusers, which needs no
# running systemd (so this works in an image being built in a chroot as well). The unit
# chessboardd-broadcast, for the one club machine that gathers a round, is installed, not enabled.
install:
	@if command -v $(CARGO) >/dev/null 2>&1; then $(MAKE) --no-print-directory build; \
	elif [ -x target/release/chessboardd ]; then echo "note: no cargo here; installing target/release/chessboardd built before"; \
	else echo "chessboardd: no cargo here and no target/release/chessboardd: run make first" >&2; exit 1; fi
	# (Stripped: the release build keeps debug info for profiling, ten times the size.)
	install -D -m 0755 -s target/release/chessboardd $(DESTDIR)$(BINDIR)/chessboardd
	@if [ -e $(DESTDIR)$(CONFDIR)/config.toml ]; then \
		echo "keeping $(DESTDIR)$(CONFDIR)/config.toml (the new reference is config/chessboardd.toml)"; \
	else echo "install -D -m 0644 config/chessboardd.toml $(DESTDIR)$(CONFDIR)/config.toml"; \
		install -D -m 0644 config/chessboardd.toml $(DESTDIR)$(CONFDIR)/config.toml; fi
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|^ExecStart=/usr/bin/chessboardd |ExecStart=$(BINDIR)/chessboardd |' systemd/chessboardd.service \
		> $(DESTDIR)$(UNITDIR)/chessboardd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/chessboardd.service
	sed 's|^ExecStart=/usr/bin/chessboardd |ExecStart=$(BINDIR)/chessboardd |' systemd/chessboardd-broadcast.service \
		> $(DESTDIR)$(UNITDIR)/chessboardd-broadcast.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/chessboardd-broadcast.service
	install -D -m 0644 systemd/chessboardd.sysusers $(DESTDIR)$(SYSUSERSDIR)/chessboardd.conf
	install -D -m 0644 systemd/chessboardd.modules-load $(DESTDIR)$(MODULESLOADDIR)/chessboardd.conf
	install -D -m 0644 udev/60-chessboardd.rules $(DESTDIR)$(UDEVRULESDIR)/60-chessboardd.rules
	@if [ -z "$(DESTDIR)" ]; then \
		if command -v systemd-sysusers >/dev/null 2>&1; then \
			echo "systemd-sysusers $(SYSUSERSDIR)/chessboardd.conf"; systemd-sysusers $(SYSUSERSDIR)/chessboardd.conf; \
		else echo "note: no systemd-sysusers: create the user chessboardd (groups gpio dialout audio input) yourself"; fi; \
	fi
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		echo "systemctl restart systemd-modules-load.service"; systemctl restart systemd-modules-load.service || true; \
		echo "udevadm control --reload && udevadm trigger (gpio, tty)"; \
		udevadm control --reload && udevadm trigger --action=change --subsystem-match=gpio --subsystem-match=tty || true; \
		echo "systemctl daemon-reload"; systemctl daemon-reload; \
		echo "Installed. Choose the board in $(CONFDIR)/config.toml ([board]; a DGT board on USB is found by itself), then: sudo systemctl enable --now chessboardd"; \
		echo "(On the machine that gathers a round: set [mqtt] url there, then sudo systemctl enable --now chessboardd-broadcast)"; \
	elif [ -z "$(DESTDIR)" ]; then echo "note: systemd is not running here: udev rules and the unit apply at the next boot"; fi

uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		for u in chessboardd chessboardd-broadcast; do \
			echo "systemctl disable --now $$u"; systemctl disable --now $$u.service || true; done; fi
	rm -f $(DESTDIR)$(BINDIR)/chessboardd $(DESTDIR)$(UNITDIR)/chessboardd.service \
		$(DESTDIR)$(UNITDIR)/chessboardd-broadcast.service \
		$(DESTDIR)$(SYSUSERSDIR)/chessboardd.conf $(DESTDIR)$(MODULESLOADDIR)/chessboardd.conf \
		$(DESTDIR)$(UDEVRULESDIR)/60-chessboardd.rules
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
		systemctl daemon-reload; udevadm control --reload || true; fi
	@echo "kept: $(CONFDIR)/config.toml, the games in /var/lib/chessboardd and /var/lib/chessboardd-broadcast and the user chessboardd (remove them by hand)"

# cargo-deb (3.x installs systemd/chessboardd.sysusers with its postinst hook); installed into
# ~/.cargo/bin when missing.
# dpkg-dev's dpkg-shlibdeps fills in the library dependencies ($auto in Cargo.toml).
deb:
	@sh scripts/deps.sh $(BUILD_PACKAGES) dpkg-dev
	@$(CARGO) deb --version >/dev/null 2>&1 || $(CARGO) install cargo-deb --locked
	$(CARGO) deb
