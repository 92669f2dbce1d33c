#!/bin/bash
# `systemctl stop bwgovd` restores every baseline exactly (cpu.max and
# cpu.max.burst as they were before bwgovd boosted); after `kill -9`
# ExecStopPost= (bwgovd --restore) puts the baseline back and systemd restarts
# the daemon (Restart=on-failure), which keeps the old baseline - a crash
# never turns a boost into the baseline, nor leaves it raised.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
slice=bwgovtest.slice
load=bwgovtest-load.service
dropin=/etc/bwgov/$slice.d
# An operator's burst (systemd 252 has no property for it): bwgovd must give
# it back exactly, not 0.
op_burst=7000

cleanup() {
        systemctl start "$svc" 2>/dev/null
        rm -rf "$dropin"
        systemctl reload "$svc" 2>/dev/null
        systemctl stop "$load" 2>/dev/null
        systemctl reset-failed "$load" 2>/dev/null
        systemctl stop "$slice" 2>/dev/null
        rm -f "/etc/systemd/system/$slice"
        systemctl daemon-reload
}

show_has() {
        bwgovctl show "$slice" --json | jq -e "$1"
}

quota_above() {
        local quota period
        read -r quota period <"$cg/cpu.max"
        printf 'cpu.max %s %s, burst %s\n' "$quota" "$period" "$(cat "$cg/cpu.max.burst")"
        [[ $quota != max ]] && ((quota > $1))
}

# at_baseline: the kernel holds exactly the values from before bwgovd.
at_baseline() {
        local max burst
        max=$(cat "$cg/cpu.max")
        burst=$(cat "$cg/cpu.max.burst")
        printf 'cpu.max %s (want %s), cpu.max.burst %s (want %s)\n' "$max" "$base_max" "$burst" "$base_burst"
        [[ $max == "$base_max" && $burst == "$base_burst" ]]
}

active_running() {
        local state
        state=$(systemctl show -p ActiveState,SubState --value "$svc" | paste -sd ' ')
        printf '%s\n' "$state"
        [[ $state == "active running" ]]
}

state_not_boosted() {
        saved_state | jq -e --arg u "$slice" --argjson b "$base_burst" '.units[$u] |
                .baseline.quota_usec == 50000 and .baseline.burst_usec == $b and
                .written == null and .pending == null'
}

check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"
mkdir -p /etc/bwgov/bwgov.conf.d
# See 20-govern.sh: no host shedding under TCG.
printf '[Governor]\nHostPressureLimit=0%%\n' >/etc/bwgov/bwgov.conf.d/50-vm-test.conf
printf '[Slice]\nCPUQuota=50%%\n' >"/etc/systemd/system/$slice"
systemctl daemon-reload
check "start $slice (CPUQuota=50%)" systemctl start "$slice"
cg=$(unit_cgroup "$slice")
check "an operator sets cpu.max.burst to $op_burst" bash -c "echo $op_burst >$cg/cpu.max.burst"
base_max=$(cat "$cg/cpu.max")
base_burst=$(cat "$cg/cpu.max.burst")
check_eq "baseline before bwgovd: cpu.max" "50000 100000" echo "$base_max"
check_eq "baseline before bwgovd: cpu.max.burst" "$op_burst" echo "$base_burst"

mkdir -p "$dropin"
printf '[Bandwidth]\nMode=elastic\nCreditMax=60s\n' >"$dropin/10-test.conf"
check "reload bwgovd with the drop-in" systemctl reload "$svc"
check "bwgovd adopts 50000/100000 burst $op_burst as the baseline" \
        wait_for 20 show_has ".unit.adopted and .unit.baseline.quota_usec == 50000 and .unit.baseline.burst_usec == $op_burst" ||
        fail_with_journal "$svc"
check "start the workload" systemd-run --quiet --unit="$load" --slice="$slice" \
        stress-ng --cpu 1 --cpu-load 90 --cpu-load-slice 200 --timeout 600
check "the slice is boosted (quota > 50000)" wait_for 60 quota_above 50000 || fail_with_journal "$svc"
info "boosted: cpu.max $(cat "$cg/cpu.max"), burst $(cat "$cg/cpu.max.burst")"

# --- stop restores -------------------------------------------------------------
c=$(journal_cursor)
check "systemctl stop bwgovd (workload still running)" systemctl stop "$svc"
check "stop restored cpu.max and cpu.max.burst exactly" at_baseline || fail_with_journal "$svc"
no_refusal() {
        ! unit_log_since "$c" "$svc" | grep 'not restoring'
}
check "bwgovd did not refuse to restore" no_refusal
check "state.json: baseline kept, nothing written or pending" state_not_boosted
check_eq "bwgovd exited cleanly" success systemctl show -P Result "$svc"

# --- kill -9, restart ------------------------------------------------------------
check "systemctl start bwgovd" systemctl start "$svc" || fail_with_journal "$svc"
check "bwgovd is active (running)" wait_for 30 active_running
check "bwgovd boosts the slice again" wait_for 60 quota_above 50000 || fail_with_journal "$svc"
restarts0=$(systemctl show -P NRestarts "$svc")
pid0=$(systemctl show -P MainPID "$svc")
boosted=$(cat "$cg/cpu.max")
info "before kill -9: MainPID $pid0, cpu.max $boosted, burst $(cat "$cg/cpu.max.burst"), NRestarts $restarts0"
c=$(journal_cursor)
check "kill -9 bwgovd's main process" kill -9 "$pid0"
restarted() {
        local pid restarts
        pid=$(systemctl show -P MainPID "$svc")
        restarts=$(systemctl show -P NRestarts "$svc")
        printf 'MainPID %s (was %s), NRestarts %s (was %s), %s\n' "$pid" "$pid0" "$restarts" "$restarts0" \
                "$(systemctl show -p ActiveState,SubState --value "$svc" | paste -sd ' ')"
        ((pid != 0 && pid != pid0 && restarts == restarts0 + 1)) && active_running >/dev/null
}
check "systemd restarts bwgovd (Restart=on-failure)" wait_for 40 restarted || fail_with_journal "$svc"
put_back() {
        unit_log_since "$c" "$svc" | grep "$slice back at its baseline (restore)"
}
check "ExecStopPost= (bwgovd --restore) put the baseline back after the kill" wait_for 20 put_back ||
        fail_with_journal "$svc"
check "bwgovctl show --json: baseline still 50000 burst $op_burst (not the boost)" \
        wait_for 10 show_has ".unit.adopted and .unit.baseline.quota_usec == 50000 and .unit.baseline.burst_usec == $op_burst"
no_external_change() {
        local out
        out=$(journal_since "$c" ".BWGOV_UNIT == \"$slice\" and .BWGOV_REASON == \"external-change\"")
        printf '%s\n' "$out"
        [[ -z $out ]]
}
check "no external change was recorded for the restart" no_external_change
check "systemctl stop bwgovd after the restart" systemctl stop "$svc"
check "stop after a crash restored cpu.max and cpu.max.burst exactly" at_baseline || fail_with_journal "$svc"

# --- the usual order: the workload ends, then bwgovd stops -------------------
# systemd re-applies a slice's cpu.max when its members change, so stopping
# the workload rewrites cpu.max (not the burst) just before bwgovd stops.
# Interval=10s: no timer tick should see that rewrite before the stop (the
# headroom itself goes in at adoption), so the stop path alone must cope.
printf '[Bandwidth]\nMode=elastic\nCreditMax=60s\nInterval=10s\n' >"$dropin/10-test.conf"
check "systemctl start bwgovd (Interval=10s)" systemctl start "$svc" || fail_with_journal "$svc"
check "bwgovd boosts the slice again" wait_for 60 quota_above 50000 || fail_with_journal "$svc"
info "boosted: cpu.max $(cat "$cg/cpu.max"), burst $(cat "$cg/cpu.max.burst")"
check "stop the workload" systemctl stop "$load"
check "systemctl stop bwgovd right after" systemctl stop "$svc"
check "stop after the workload ended restored cpu.max and cpu.max.burst exactly" at_baseline ||
        fail_with_journal "$svc"

cleanup
check "bwgovd is running again" systemctl is-active --quiet "$svc" || fail_with_journal "$svc"
