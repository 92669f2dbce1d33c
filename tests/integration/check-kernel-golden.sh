#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Golden test of `bwgovctl check-kernel`: human and --json output on fixture
# trees (cgroup root, host root with /proc/version, /proc/pressure and
# /boot/config-*) against a fixture manifest, plus the exit codes, and that
# the human output fits 100 columns. No root.
# Run with BWGOV_UPDATE_GOLDEN=1 to rewrite the golden files.
set -u

# meson may pass a path relative to the build directory.
BWGOVCTL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") || exit 1
FIXTURES=$2
GOLDEN="$FIXTURES/kcheck/golden"
OUT=$(mktemp -d /tmp/bwgov-test-check-kernel-XXXXXX) || exit 1
trap 'rm -rf "$OUT"' EXIT
failed=0

# Relative paths keep the output independent of where the tree lives.
cd "$FIXTURES" || exit 1

check() {
        name=$1 expected_rc=$2
        shift 2
        NO_COLOR=1 "$BWGOVCTL" check-kernel --no-probe "$@" >"$OUT/$name" 2>"$OUT/$name.stderr"
        rc=$?
        if [ "$rc" -ne "$expected_rc" ]; then
                echo "FAIL: $name: exit code $rc, expected $expected_rc"
                cat "$OUT/$name.stderr"
                failed=1
        fi
        # The human output fits 100 columns (issue 17, finding 10: it was
        # about 330 wide); --json is one value per line, any width.
        case $name in
        *.txt)
                wide=$(awk 'length($0) > 100 { print FILENAME ":" FNR ": " length($0) " columns" }' "$OUT/$name")
                if [ -n "$wide" ]; then
                        echo "FAIL: $name: lines over 100 columns:"
                        echo "$wide"
                        failed=1
                fi
                ;;
        esac
        if [ "${BWGOV_UPDATE_GOLDEN:-0}" = 1 ]; then
                cp "$OUT/$name" "$GOLDEN/$name"
        elif ! diff -u "$GOLDEN/$name" "$OUT/$name"; then
                echo "FAIL: $name differs from $GOLDEN/$name"
                failed=1
        else
                echo "ok: $name"
        fi
}

M=kcheck/manifest/manifest.json
check debian61-hybrid.txt 0 --manifest=$M --cgroup-root=kcheck/hybrid --host-root=kcheck/host-debian61
check debian61-hybrid.json 0 --manifest=$M --cgroup-root=kcheck/hybrid --host-root=kcheck/host-debian61 --json
check old-v2.txt 1 --manifest=$M --cgroup-root=kcheck/v2-old --host-root=kcheck/host-old
check old-v2.json 1 --manifest=$M --cgroup-root=kcheck/v2-old --host-root=kcheck/host-old --json
# v2: the bandwidth files are found in a child cgroup with cpu.max.
check new-v2.txt 0 --manifest=$M --cgroup-root=kcheck/v2-new --host-root=kcheck/host-debian61 \
        --proc-version=kcheck/proc-version-6.18
# An explicit /proc/version file wins over the host root's.
check ubuntu-version.txt 1 --manifest=$M --cgroup-root=kcheck/v2-old --host-root=kcheck/host-old \
        --proc-version=kcheck/proc-version-ubuntu
check broken-manifest.txt 2 --manifest=kcheck/broken/manifest.json --cgroup-root=kcheck/hybrid \
        --host-root=kcheck/host-debian61
check broken-manifest.json 2 --manifest=kcheck/broken/manifest.json --cgroup-root=kcheck/hybrid \
        --host-root=kcheck/host-debian61 --json
check missing-manifest.json 2 --manifest=kcheck/nonexistent.json --cgroup-root=kcheck/hybrid \
        --host-root=kcheck/host-debian61 --json

# Usage errors.
"$BWGOVCTL" check-kernel --no-such-option >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: unknown option did not exit 2"; failed=1; }
"$BWGOVCTL" no-such-verb >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: unknown verb did not exit 2"; failed=1; }
"$BWGOVCTL" --version | grep -q '^bwgovctl ' || { echo "FAIL: --version"; failed=1; }
"$BWGOVCTL" --help | grep -q 'check-kernel' || { echo "FAIL: --help"; failed=1; }
"$BWGOVCTL" check-kernel --help | grep -q -- '--manifest=PATH' || { echo "FAIL: check-kernel --help"; failed=1; }

exit $failed
