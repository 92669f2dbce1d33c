#!/bin/bash
# Guest side of tests/vm/run, started from the 9p share by bwgov-vm-test.service.
# Installs the payload, runs every scenario in lexical order (each under its own
# timeout), then writes DONE. The unit's launcher powers the VM off afterwards.
set -uo pipefail

export BWGOV_VM_SHARE=/mnt/share
export BWGOV_VM_LIB=$BWGOV_VM_SHARE/lib.sh
export BWGOV_VM_RESULTS=$BWGOV_VM_SHARE/results
export BWGOV_PAYLOAD=$BWGOV_VM_SHARE/payload
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8

# BWGOV_VM_SCENARIO_TIMEOUT, BWGOV_VM_SCENARIOS (space-separated globs)
# shellcheck source=/dev/null
. "$BWGOV_VM_SHARE/config"

export BWGOV_VM_SCENARIO=setup
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$BWGOV_VM_LIB"

info "guest: kernel $(uname -r), $(systemctl --version | head -n 1), $(nproc) CPUs"
info "guest: userspace reached after $(cut -d ' ' -f 1 /proc/uptime) s of uptime"

# Two idle trace-event probes (two tracefs instances, recording off) on each
# tracepoint bwgovd's run-queue programs attach to. With two probes already
# there, attaching and detaching a third changes neither the tracepoint's
# static key nor its static call, so bwgovd's start and stop patch no kernel
# text. Multi-threaded TCG races with that patching: another vCPU runs the
# breakpoint after the patch is done and the guest dies on "Oops: int3" in
# __schedule (seen twice, as bwgovd started or stopped). KVM and real CPUs do
# not; this only keeps the emulator out of the results.
hold_tracepoints() {
        local tracing=/sys/kernel/tracing inst ev held=0
        [[ -d $tracing/instances ]] || mount -t tracefs tracefs "$tracing" 2>/dev/null || true
        for inst in bwgov-vm-hold-a bwgov-vm-hold-b; do
                mkdir -p "$tracing/instances/$inst" 2>/dev/null || continue
                echo 0 >"$tracing/instances/$inst/tracing_on" 2>/dev/null || true
                for ev in sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new \
                        sched/sched_stat_runtime cgroup/cgroup_rmdir; do
                        echo 1 2>/dev/null >"$tracing/instances/$inst/events/$ev/enable" && held=$((held + 1))
                done
        done
        info "guest: $held of 10 trace-event probes held, so that bwgovd's BPF attach patches no kernel text"
}
hold_tracepoints

shopt -s nullglob
debs=("$BWGOV_PAYLOAD"/*.deb)
if ((${#debs[@]} > 0)); then
        export BWGOV_VM_SCENARIO=payload
        check "install payload: ${debs[*]##*/}" dpkg -i "${debs[@]}"
        # dpkg -i leaves a package unconfigured when a dependency is missing.
        for deb in "${debs[@]}"; do
                pkg=$(dpkg-deb -f "$deb" Package)
                # shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
                check_eq "payload package $pkg is installed" "ii " \
                        dpkg-query -W -f '${db:Status-Abbrev}' "$pkg"
        done
fi

selected() {
        local name=$1 glob globs
        read -r -a globs <<<"${BWGOV_VM_SCENARIOS:-}"
        ((${#globs[@]} > 0)) || return 0
        for glob in "${globs[@]}"; do
                # shellcheck disable=SC2053
                [[ $name == $glob ]] && return 0
        done
        return 1
}

ran=0
for script in "$BWGOV_VM_SHARE"/scenarios/*.sh; do
        name=$(basename "$script" .sh)
        selected "$name" || continue
        ran=$((ran + 1))
        export BWGOV_VM_SCENARIO=$name
        _bwgov_vm_emit BEGIN "$name"
        start=$SECONDS
        timeout --kill-after=10 "$BWGOV_VM_SCENARIO_TIMEOUT" \
                bash "$script" </dev/null >"$BWGOV_VM_SHARE/out/$name.log" 2>&1
        rc=$?
        _bwgov_vm_last=PASS
        if ((rc == 124 || rc == 137)); then
                fail "scenario timed out after ${BWGOV_VM_SCENARIO_TIMEOUT}s" \
                        "$(tail -n 50 "$BWGOV_VM_SHARE/out/$name.log")"
        elif ((rc != 0)); then
                fail "scenario exited with status $rc" \
                        "$(tail -n 50 "$BWGOV_VM_SHARE/out/$name.log")"
        elif ! awk -F '\t' -v n="$name" '($1 == "PASS" || $1 == "FAIL") && $2 == n { f = 1 }
                                         END { exit !f }' "$BWGOV_VM_RESULTS"; then
                fail "scenario recorded no checks"
        fi
        _bwgov_vm_emit END "rc=$rc $((SECONDS - start))s"
done

export BWGOV_VM_SCENARIO=teardown
((ran > 0)) || fail "no scenario ran (selection: '${BWGOV_VM_SCENARIOS:-all}')"
journalctl -b --no-pager -o short-monotonic >"$BWGOV_VM_SHARE/out/journal.txt" 2>&1
systemd-analyze blame >"$BWGOV_VM_SHARE/out/blame.txt" 2>&1
systemctl --failed --no-legend --plain >"$BWGOV_VM_SHARE/out/failed-units.txt" 2>&1
info "guest: tests finished at $(cut -d ' ' -f 1 /proc/uptime) s of uptime"
_bwgov_vm_emit DONE ""
sync
