# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by scripts/test, scripts/demo and tests/bench: install whatever Debian packages
# are missing, with one `apt-get update` at most.

BWGOV_BUILD_DEPS=(
        meson ninja-build pkg-config gcc libc6-dev python3 python3-venv
        libsystemd-dev libcgroup-dev libjansson-dev libinih-dev libssl-dev zlib1g-dev
        libbpf-dev bpftool clang llvm libclang-rt-dev
        libcmocka-dev scdoc mandoc man-db
        strace valgrind procps util-linux
        tmux bash-completion zsh fish prometheus
)
# tmux: bwgovctl top's live screen in a real terminal (ctl-top); bash-completion,
# zsh, fish: the shell completions driven in each shell (completions); prometheus:
# only its promtool, for deploy/prometheus' rules (deploy-monitoring); nothing needs
# the server running (on the CI machines /usr/sbin/policy-rc.d keeps it stopped).

# What tests/bench/run needs besides the build: plots, sysbench, callgrind,
# the write trace, and hackbench (rt-tests) for the telemetry overhead.
BWGOV_BENCH_DEPS=(
        gnuplot-nox sysbench valgrind strace rt-tests bpftool
)

bwgov_install_deps() {
        local missing=() p
        for p in "$@"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        if [ "$(id -u)" -ne 0 ]; then
                echo "missing packages: ${missing[*]} (run as root to install them)" >&2
                return 1
        fi
        echo "installing: ${missing[*]}" >&2
        if [ -z "${BWGOV_APT_UPDATED:-}" ]; then
                DEBIAN_FRONTEND=noninteractive apt-get update -qq
                export BWGOV_APT_UPDATED=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
