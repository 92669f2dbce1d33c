#!/bin/bash
# A crash loop into the start limit leaves nothing behind (issue 30): a
# drop-in has an ExecStartPost= kill bwgovd 5 s after each start while
# Contention=gang holds one of two busy slices frozen; after each exit
# ExecStopPost=bwgovd --restore thaws it, and after the last one, once
# systemd gives up (start-limit-hit), nothing is frozen and every cpuset is
# as systemd set it. (26-contention and 27-protect: systemctl kill -s KILL.)
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
slices=(bwgovxa.slice bwgovxb.slice)
conf=/etc/bwgov/bwgov.conf.d/50-crash-loop.conf
loop=/etc/systemd/system/$svc.d/50-crash-loop.conf

cleanup() {
        local s
        rm -f "$conf" "$loop"
        rmdir "$(dirname "$loop")" 2>/dev/null
        systemctl daemon-reload
        systemctl reset-failed "$svc" 2>/dev/null
        for s in "${slices[@]}"; do
                rm -rf "/etc/bwgov/$s.d"
                systemctl stop "load-${s%.slice}.service" 2>/dev/null
                systemctl reset-failed "load-${s%.slice}.service" 2>/dev/null
                systemctl stop "$s" 2>/dev/null
                rm -f "/etc/systemd/system/$s"
        done
        systemctl daemon-reload
        systemctl restart "$svc" 2>/dev/null
}
# A scenario that times out is sent SIGTERM: the drop-in must not outlive it.
trap cleanup EXIT
trap 'exit 143' TERM

ncpus=$(nproc)
for s in "${slices[@]}"; do
        printf '[Slice]\nCPUWeight=100\nAllowedCPUs=0-%d\n' "$((ncpus - 1))" >"/etc/systemd/system/$s"
done
check "systemctl daemon-reload" systemctl daemon-reload
declare -A cg orig
for s in "${slices[@]}"; do
        check "start $s" systemctl start "$s"
        cg[$s]=$(unit_cgroup "$s")
        check "a busy service in $s" systemd-run --quiet --unit="load-${s%.slice}" --slice="$s" \
                stress-ng --cpu "$ncpus" --timeout 600
        mkdir -p "/etc/bwgov/$s.d"
        printf '[Bandwidth]\nClass=throughput\n' >"/etc/bwgov/$s.d/10-test.conf"
        orig[$s]="$(cat "${cg[$s]}/cgroup.freeze") $(cat "${cg[$s]}/cpuset.cpus")"
done
mkdir -p "$(dirname "$conf")" "$(dirname "$loop")"
printf '[Governor]\nContention=gang\nContentionInterval=300ms\n' >"$conf"
printf '[Unit]\nStartLimitIntervalSec=300\nStartLimitBurst=3\n[Service]\nExecStartPost=/bin/sh -c %s\n' \
        "'sleep 5; kill -9 \$MAINPID'" >"$loop"
check "systemctl daemon-reload (a drop-in that kills bwgovd 5 s after each start)" systemctl daemon-reload
c=$(journal_cursor)
# --no-block: each start job fails with its crash.
check "systemctl restart bwgovd" systemctl restart --no-block "$svc"
# systemd 252 keeps the last crash's Result= (signal) when the restart it
# queues is refused: the journal says it ("Start request repeated too
# quickly"), and the unit stays failed.
start_limit() {
        systemctl show -p ActiveState,SubState,Result,NRestarts "$svc" | paste -sd ' '
        [[ $(systemctl show -P ActiveState "$svc") == failed ]] &&
                unit_log_since "$c" "$svc" | grep -E 'Start request repeated too quickly|start-limit-hit'
}
check "the crash loop runs into the start limit" wait_for 150 start_limit || fail_with_journal "$svc" 80
thaws() {
        local n
        n=$(unit_log_since "$c" "$svc" | grep -cE 'cgroup\.freeze 1 -> 0 \(restore\)')
        printf '%s thaws by bwgovd --restore\n' "$n"
        ((n > 0))
}
check "ExecStopPost= thawed what the crashed daemons held" thaws || fail_with_journal "$svc" 80
restored() {
        local s now
        for s in "${slices[@]}"; do
                now="$(cat "${cg[$s]}/cgroup.freeze") $(cat "${cg[$s]}/cpuset.cpus")"
                printf '%s: %s (was %s)\n' "$s" "$now" "${orig[$s]}"
                [[ $now == "${orig[$s]}" ]] || return 1
        done
}
check "after the last crash every freezer and cpuset is as systemd left it" restored
