#!/bin/sh
# Installs what building and testing chessboardd needs and the machine lacks.
# Usage: scripts/deps.sh PACKAGE...   (Debian / Raspberry Pi OS package names)
# Uses apt-get, through sudo when not root. Changes nothing when everything is there.
set -eu

if ! command -v cargo >/dev/null 2>&1; then
    echo "chessboardd: cargo is missing. Install Rust first: https://rustup.rs" >&2
    echo "  (on a Raspberry Pi: curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh)" >&2
    exit 1
fi

missing=""
for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "chessboardd: these packages are needed:$missing" >&2
    echo "This system has no apt-get: install them with its package manager, then run make again." >&2
    exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "chessboardd: need root to install:$missing (no sudo found); run as root or install them." >&2
    exit 1
fi

echo "chessboardd: installing$missing"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
# shellcheck disable=SC2086
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
