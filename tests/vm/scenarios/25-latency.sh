#!/bin/bash
# The run-queue telemetry under systemd: bwgovd.service loads its BPF
# programs inside its sandbox (CAP_BPF, CAP_PERFMON, bpf() allowed), and for a
# slice held at CPUQuota=20% with a busy service in it, `bwgovctl latency`
# shows waits, most of them throttled, agreeing with cpu.stat's throttled time;
# the metrics file carries the histogram.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
slice=bwgovlat.slice
load=bwgovlat-load.service
dropin=/etc/bwgov/$slice.d
# The histogram is looked for in metrics.prom once the load has run: rewritten
# every second, not every MetricsInterval=10s.
metrics_conf=/etc/bwgov/bwgov.conf.d/50-vm-latency-metrics.conf

cleanup() {
        rm -rf "$dropin" "$metrics_conf"
        systemctl reload "$svc" 2>/dev/null
        systemctl stop "$load" 2>/dev/null
        systemctl reset-failed "$load" 2>/dev/null
        systemctl stop "$slice" 2>/dev/null
        rm -f "/etc/systemd/system/$slice"
        systemctl daemon-reload
}


check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"
telemetry() {
        bwgovctl status --json | jq -e '.telemetry == true'
}
check "bwgovctl status: the telemetry is loaded in the sandbox" telemetry || fail_with_journal "$svc"

printf '[Slice]\nCPUQuota=20%%\n' >"/etc/systemd/system/$slice"
check "systemctl daemon-reload" systemctl daemon-reload
check "start $slice (CPUQuota=20%)" systemctl start "$slice"
cg=$(unit_cgroup "$slice")
mkdir -p "$dropin" "${metrics_conf%/*}"
printf '[Governor]\nMetricsInterval=1s\n' >"$metrics_conf"
# Observe: decide, never write, so the 20 % stays and the group is throttled.
printf '[Bandwidth]\nMode=observe\n' >"$dropin/10-test.conf"
check "systemctl reload bwgovd" systemctl reload "$svc" || fail_with_journal "$svc"
available() {
        bwgovctl latency "$slice" --json | jq -e '.available'
}
check "bwgovctl latency: telemetry available for $slice" wait_for 20 available || fail_with_journal "$svc"

check "start a busy service in $slice" \
        systemd-run --quiet --unit="$load" --slice="$slice" stress-ng --cpu 1 --timeout 600
check "the workload runs" wait_for 10 systemctl is-active --quiet "$load"
sleep 2
t0=$(awk '/^throttled_usec/ { print $2 }' "$cg/cpu.stat")
w0=$(bwgovctl latency "$slice" --json | jq '.total.throttled_wait_usec')
sleep 10
t1=$(awk '/^throttled_usec/ { print $2 }' "$cg/cpu.stat")
w1=$(bwgovctl latency "$slice" --json | jq '.total.throttled_wait_usec')
info "throttled: cpu.stat $(((t1 - t0) / 1000)) ms, run-queue throttled wait $(((w1 - w0) / 1000)) ms (10 s)"
waits() {
        bwgovctl latency "$slice" --json |
                jq -e '.total.waits > 0 and .total.p99_usec != null and .total.throttled_share > 0.5'
}
check "bwgovctl latency --json: waits, a p99, mostly throttled" waits
# Under TCG the clocks are emulated: the agreement is checked loosely here and
# tightly on the host (tests/integration/live_latency.py).
agrees() {
        printf 'cpu.stat %s us, telemetry %s us\n' "$((t1 - t0))" "$((w1 - w0))"
        awk -v a="$((w1 - w0))" -v b="$((t1 - t0))" 'BEGIN { exit !(b > 0 && a > 0.5 * b && a < 1.5 * b) }'
}
check "the throttled wait agrees with cpu.stat's throttled_usec within 50 %" agrees
text() {
        local out
        out=$(bwgovctl latency "$slice")
        printf '%s\n' "$out"
        grep -q 'Percentiles: p50' <<<"$out" && grep -q 'Throttled:' <<<"$out"
}
check "bwgovctl latency prints percentiles and the throttled share" text
check "metrics carry the run-queue histogram" \
        grep -qE "^bwgov_runqueue_wait_seconds_bucket\{unit=\"$slice\",le=\"\+Inf\"\} [1-9]" /run/bwgov/metrics.prom
explained() {
        bwgovctl explain "$slice" --json | jq -e '.decision.inputs.rq_wait_p99_usec != null'
}
check "bwgovctl explain --json: the decision saw the run-queue p99" wait_for 10 explained
systemctl stop "$load"
cleanup
