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

# The real servers and tools of the application benchmark (tests/bench/apps):
# the harness starts and stops them itself; their packaged services are never
# started (see bwgov_install_deps).
BWGOV_APPS_DEPS=(
        apache2 nginx caddy lighttpd lighttpd-mod-deflate postgresql-15 postgresql-client-15 mariadb-server tomcat10 tomcat10-examples default-jre-headless util-linux xz-utils gzip zstd
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
        # Another apt-get may hold the lock for a while: wait for it, not fail.
        if [ -z "${BWGOV_APT_UPDATED:-}" ]; then
                DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
                export BWGOV_APT_UPDATED=1
        fi
        # Packages with services (apache2, nginx, caddy, lighttpd, postgresql, mariadb) start them from their
        # maintainer scripts: a policy-rc.d that refuses every start keeps
        # them down while they are installed, unless the host has its own.
        local policy=/usr/sbin/policy-rc.d own_policy=0 r=0
        if [ ! -e "$policy" ]; then
                printf '#!/bin/sh\n# bwgov: no service starts while packages install\nexit 101\n' > "$policy" &&
                        chmod 755 "$policy" && own_policy=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
                "${missing[@]}" || r=$?
        [ $own_policy -eq 1 ] && rm -f "$policy"
        return $r
}
