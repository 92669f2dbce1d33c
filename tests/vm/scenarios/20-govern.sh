#!/bin/bash
# A slice with CPUQuota=50% and a bwgov drop-in: with a full credit bucket
# bwgovd rests the slice's cpu.max at four times the baseline systemd set before
# any load; a bursty workload over the baseline started with systemd-run
# --slice= spends the credit, and the quota comes back to exactly the
# baseline when it is spent; bwgovctl shows each step through the socket.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
slice=bwgovtest.slice # no dash: a dash would nest it in bwgovtest-*.slice parents
load=bwgovtest-load.service
dropin=/etc/bwgov/$slice.d

cleanup() {
        rm -rf "$dropin"
        systemctl reload "$svc" 2>/dev/null
        systemctl stop "$load" 2>/dev/null
        systemctl reset-failed "$load" 2>/dev/null
        systemctl stop "$slice" 2>/dev/null
        rm -f "/etc/systemd/system/$slice"
        systemctl daemon-reload
}

check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"

# Host-level CPU pressure under TCG is an emulation artefact (hundreds of ms/s
# with one busy vCPU); shedding would withdraw every boost while this scenario
# looks for one. HostPressureLimit=0% turns shedding off. The metrics
# checked below are rewritten every second, not every MetricsInterval=10s.
mkdir -p /etc/bwgov/bwgov.conf.d
printf '[Governor]\nHostPressureLimit=0%%\nMetricsInterval=1s\n' >/etc/bwgov/bwgov.conf.d/50-vm-test.conf

printf '[Slice]\nCPUQuota=50%%\n' >"/etc/systemd/system/$slice"
check "systemctl daemon-reload" systemctl daemon-reload
check "start $slice (CPUQuota=50% from a unit file)" systemctl start "$slice"
cg=$(unit_cgroup "$slice")
check_eq "systemd set the slice's cpu.max" "50000 100000" cat "$cg/cpu.max"
base_burst=$(cat "$cg/cpu.max.burst")
info "baseline: cpu.max $(cat "$cg/cpu.max"), cpu.max.burst $base_burst"

mkdir -p "$dropin"
# A small bucket, so that the scenario sees it run dry.
printf '[Bandwidth]\nMode=elastic\nCreditMax=5s\n' >"$dropin/10-test.conf"
check "systemctl reload bwgovd" systemctl reload "$svc" || fail_with_journal "$svc"

adopted() {
        bwgovctl show "$slice" --json | jq -e '.unit.present and .unit.adopted'
}
check "bwgovd adopts $slice after the reload" wait_for 20 adopted || fail_with_journal "$svc"
check "bwgovctl show: baseline is systemd's 50000/100000" \
        bash -c "bwgovctl show $slice --json | jq -e '.unit.baseline.quota_usec == 50000 and .unit.baseline.period_usec == 100000'"
check "bwgovctl show: the drop-in is in effect (elastic, CreditMax=5s)" \
        bash -c "bwgovctl show $slice --json | jq -e '.config.mode == \"elastic\" and .config.credit_max_usec == 5000000'"

# With a full bucket the headroom is there before any load: the quota rests
# at CPUQuotaMax= (four times the baseline by default), the burst at the quota.
quota_is() {
        local quota period
        read -r quota period <"$cg/cpu.max"
        printf 'cpu.max %s %s, cpu.max.burst %s\n' "$quota" "$period" "$(cat "$cg/cpu.max.burst")"
        [[ $quota == "$1" ]]
}
check "the resting headroom is in place before any load (cpu.max 200000 100000)" wait_for 20 quota_is 200000 ||
        fail_with_journal "$svc"
check_eq "the resting burst = the baseline quota" 50000 cat "$cg/cpu.max.burst"
rest_logged() {
        journalctl -b -o json --no-pager BWGOV_UNIT="$slice" |
                jq -e -s 'any(.[]; .BWGOV_REASON == "resting-headroom" and .BWGOV_QUOTA_NEW == "200000")' >/dev/null
}
check "the journal records it (BWGOV_UNIT=, BWGOV_REASON=resting-headroom)" wait_for 10 rest_logged
state_is() {
        local out
        out=$(bwgovctl status)
        printf '%s\n' "$out"
        grep -E "^$slice +$1 +elastic " <<<"$out"
}
check "bwgovctl status lists $slice as resting" wait_for 10 state_is resting

# Bursty, 200 ms of busy loop then idle, 90 % of one CPU on average: far over
# the 0.5 CPU baseline. It runs on the headroom and spends the 5 s of credit
# in about 12 s; then the quota is exactly the baseline.
check "start a bursty workload with systemd-run --slice=$slice" \
        systemd-run --quiet --unit="$load" --slice="$slice" \
        stress-ng --cpu 1 --cpu-load 90 --cpu-load-slice 200 --timeout 600
check "the workload runs in $slice" wait_for 10 systemctl is-active --quiet "$load"
spending() {
        bwgovctl show "$slice" --json | jq -e '.credit.spend_rate > 0 and .headroom.active and .unit.state == "spending"'
}
check "bwgovctl show: spending credit, active" wait_for 20 spending
check "bwgovctl explain $slice" bwgovctl explain "$slice"
check "the credit runs dry: the quota is back at exactly 50000" wait_for 90 quota_is 50000 ||
        fail_with_journal "$svc"
exhausted_logged() {
        journalctl -b -o json --no-pager BWGOV_UNIT="$slice" |
                jq -e -s 'any(.[]; .BWGOV_REASON == "credit-exhausted" and .BWGOV_QUOTA_NEW == "50000")' >/dev/null &&
                journalctl -b -o cat --no-pager BWGOV_UNIT="$slice" | grep -m1 credit-exhausted
}
check "the journal records why (BWGOV_REASON=credit-exhausted)" wait_for 10 exhausted_logged
check "bwgovctl show --json: credit exhausted, headroom level 0" \
        bash -c "bwgovctl show $slice --json | jq -e '.credit.exhausted and .headroom.level == 0 and .unit.state == \"exhausted\"'"
check "bwgovctl history $slice has the credit-exhausted write" \
        bash -c "bwgovctl history $slice --json | jq -e 'any(.entries[]; .applied and .rule == \"credit-exhausted\")'"
# Still overloaded: it stays at the baseline, nothing is written.
writes0=$(bwgovctl show "$slice" --json | jq .counters.writes)
sleep 10
check_eq "no writes in 10 s of overload at the baseline" "$writes0" bash -c "bwgovctl show $slice --json | jq .counters.writes"
check "still exactly 50000" quota_is 50000

# What the kernel holds and what bwgovctl reports must agree. bwgovd may write
# between the two reads: retry until the kernel's value is stable around the
# call.
status_matches_kernel() {
        local before after json
        before="$(cat "$cg/cpu.max") $(cat "$cg/cpu.max.burst")"
        json=$(bwgovctl status --json) || return 1
        after="$(cat "$cg/cpu.max") $(cat "$cg/cpu.max.burst")"
        printf 'kernel: %s / %s\n%s\n' "$before" "$after" "$json"
        [[ $before == "$after" ]] || return 1
        read -r quota period burst <<<"$after"
        jq -e --arg u "$slice" --argjson q "$quota" --argjson p "$period" --argjson b "$burst" '
                .units[] | select(.name == $u) |
                .current.quota_usec == $q and .current.period_usec == $p and
                .current.burst_usec == $b and .baseline.quota_usec == 50000' <<<"$json" >/dev/null
}
check "bwgovctl status --json shows the values the kernel holds" wait_for 20 status_matches_kernel
check "no write errors under the unit's sandboxing (counters.write_errors == 0)" \
        bash -c "bwgovctl show $slice --json | jq -e '.counters.write_errors == 0 and .counters.writes > 0'"
check "metrics name the unit" grep -q "unit=\"$slice\"" /run/bwgov/metrics.prom
check "metrics show the credit and the headroom" \
        grep -qE "^bwgov_headroom_level\{unit=\"$slice\"\} 0$" /run/bwgov/metrics.prom
state_keeps_baseline() {
        # shellcheck disable=SC2016 # a jq variable
        saved_state | jq -e --arg u "$slice" '.units[$u].baseline.quota_usec == 50000'
}
check "the saved state (state.json and its journal) keeps the baseline 50000" state_keeps_baseline
check_eq "systemd's own view of the slice is unchanged" 500ms systemctl show -P CPUQuotaPerSecUSec "$slice"
systemctl stop "$load"

# Leaving the configuration restores the baseline.
rm -rf "$dropin"
check "reload without the drop-in" systemctl reload "$svc"
cpu_max_is() {
        local got
        got=$(cat "$cg/cpu.max")
        printf 'cpu.max: %s (want %s)\n' "$got" "$1"
        [[ $got == "$1" ]]
}
check "the unit left the configuration: cpu.max back to 50000 100000" wait_for 20 cpu_max_is "50000 100000" ||
        fail_with_journal "$svc"
check_eq "cpu.max.burst back to its baseline" "$base_burst" cat "$cg/cpu.max.burst"

cleanup
check "cleanup: $load is gone" bash -c "! systemctl is-active --quiet $load"
check "bwgovd is still active" systemctl is-active --quiet "$svc" || fail_with_journal "$svc"
