#!/bin/bash
# bwgovd as a systemctl-managed service from the installed package: enabled
# and started, READY reached with a STATUS= line, the watchdog configured and
# fed, and the varlink socket handed over by systemd (group bwgov may read,
# others may not).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
sock=bwgovd.socket
sock_path=/run/bwgov/io.bwgov.Governor

# The package's postinst already started the units; start from a stopped
# service (as after installing with --no-start) so that what follows is what
# `systemctl enable --now` alone does.
systemctl stop "$svc" "$sock" 2>/dev/null
check "bwgovd is stopped before the test" wait_for 30 bash -c "! systemctl is-active --quiet $svc"

check "systemctl enable --now $svc" systemctl enable --now "$svc" || fail_with_journal "$svc"
check_eq "$svc is enabled" enabled systemctl is-enabled "$svc"

active_running() {
        local state
        state=$(systemctl show -p ActiveState,SubState --value "$1" | paste -sd ' ')
        printf '%s\n' "$state"
        [[ $state == "active running" ]]
}
# Type=notify: systemd only reports active (running) after READY=1.
check "$svc reached READY (active running)" wait_for 30 active_running "$svc" || fail_with_journal "$svc"
check "$svc is Type=notify or notify-reload" bash -c "systemctl show -P Type $svc | grep -Ex 'notify(-reload)?'"

status_text() {
        local text
        text=$(systemctl show -P StatusText "$svc")
        printf 'StatusText=%s\n' "$text"
        [[ $text =~ ^Governing\ [0-9]+\ of\ [0-9]+\ configured\ cgroups ]]
}
check "StatusText is \"Governing N of M configured cgroups...\"" wait_for 10 status_text
info "$(systemctl show -p StatusText "$svc")"

status_output() {
        local out
        out=$(systemctl status --no-pager --lines=0 "$svc")
        printf '%s\n' "$out"
        grep -q 'Active: active (running)' <<<"$out" && grep -q 'Status: "Governing ' <<<"$out"
}
check "systemctl status shows active (running) and the STATUS line" status_output

# The watchdog: configured in the unit, and fed. systemd stamps
# WatchdogTimestamp on start and on every WATCHDOG=1; sd-event pings between
# 1/2 and 3/4 of WatchdogSec, so the stamp must move within WatchdogSec.
wd_usec=$(systemctl show -P WatchdogUSec "$svc")
check "WatchdogUSec is set (not 0/infinity): $wd_usec" \
        bash -c "[[ '$wd_usec' != 0 && '$wd_usec' != infinity && -n '$wd_usec' ]]"
wd0=$(systemctl show -P WatchdogTimestampMonotonic "$svc")
wd_moved() {
        local now
        now=$(systemctl show -P WatchdogTimestampMonotonic "$svc")
        printf 'WatchdogTimestampMonotonic %s -> %s\n' "$wd0" "$now"
        ((now > wd0))
}
check "the watchdog is fed (WatchdogTimestamp advances within WatchdogSec)" wait_for 40 wd_moved ||
        fail_with_journal "$svc"
no_watchdog_timeout() {
        ! journalctl -b -u "$svc" --no-pager -o cat | grep -i 'watchdog timeout'
}
check "no watchdog timeout in the journal" no_watchdog_timeout
check_eq "$svc has not been restarted" 0 systemctl show -P NRestarts "$svc"

# The socket: enabling and starting the service must bring its socket along
# (otherwise bwgovd binds one itself, which its capability set cannot give
# to group bwgov).
check "$sock is active" systemctl is-active "$sock" || fail_with_journal "$sock"
check_eq "$sock_path is root:bwgov 660" "root bwgov 660" stat -c '%U %G %a' "$sock_path"
check "bwgovd took the socket from systemd" \
        bash -c "journalctl -b -u $svc --no-pager -o cat | grep -q 'on the socket from systemd'" ||
        fail_with_journal "$svc"
check "bwgovctl status works as root" bwgovctl status
check "bwgovctl status --json answers through the socket" \
        bash -c "bwgovctl status --json | jq -e '.pid == $(systemctl show -P MainPID "$svc")'"

bwgov_gid=$(getent group bwgov | cut -d: -f3)
check "group bwgov exists (sysusers)" test -n "$bwgov_gid"
if [[ -n $bwgov_gid ]]; then
        check "a member of group bwgov may read (bwgovctl status as nobody + bwgov)" \
                setpriv --reuid=65534 --regid=65534 --groups="$bwgov_gid" bwgovctl status
        check "a member of group bwgov may not reload" \
                bash -c "! setpriv --reuid=65534 --regid=65534 --groups=$bwgov_gid bwgovctl reload"
fi
check "anyone else is refused" \
        bash -c "! setpriv --reuid=65534 --regid=65534 --clear-groups bwgovctl status"

check "metrics file /run/bwgov/metrics.prom exists" test -s /run/bwgov/metrics.prom
check "state file /var/lib/bwgov/state.json is valid JSON" jq -e . /var/lib/bwgov/state.json
