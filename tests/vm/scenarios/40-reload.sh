#!/bin/bash
# `systemctl reload bwgovd` with a broken drop-in keeps the previous
# configuration whole (a valid change made at the same time is not applied
# either), says why in the journal with file:line, and the service stays
# active; fixing the drop-in and reloading again applies the new one.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
slice=bwgovtest.slice
dropin=/etc/bwgov/$slice.d

cleanup() {
        rm -rf "$dropin"
        systemctl reload "$svc" 2>/dev/null
        systemctl stop "$slice" 2>/dev/null
        rm -f "/etc/systemd/system/$slice"
        systemctl daemon-reload
}

show_has() {
        bwgovctl show "$slice" --json | jq -e "$1"
}

status_has() {
        bwgovctl status --json | jq -e "$1"
}

active_running() {
        local state
        state=$(systemctl show -p ActiveState,SubState --value "$svc" | paste -sd ' ')
        printf '%s\n' "$state"
        [[ $state == "active running" ]]
}

check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"
printf '[Slice]\nCPUQuota=50%%\n' >"/etc/systemd/system/$slice"
systemctl daemon-reload
check "start $slice" systemctl start "$slice"
mkdir -p "$dropin"
printf '[Bandwidth]\nMode=elastic\nCreditMax=60s\n' >"$dropin/10-test.conf"
check "reload with a valid drop-in" systemctl reload "$svc"
check "bwgovd governs $slice with CreditMax=60s" \
        wait_for 20 show_has '.unit.adopted and .config.credit_max_usec == 60000000 and .config.mode == "elastic"' ||
        fail_with_journal "$svc"

# How systemctl reload reaches the daemon depends on systemd: from 253 the
# unit is Type=notify-reload (systemd sends SIGHUP itself and waits for the
# daemon's RELOADING=1 ... READY=1, so the new configuration is in force when
# systemctl returns); 252 has ExecReload=kill -HUP, which returns at once.
sdver=$(systemctl --version | awk 'NR == 1 { print $2 + 0 }')
info "systemd $sdver: Type=$(systemctl show -P Type "$svc"), ExecReload=$(systemctl show -P ExecReload "$svc")"
if ((sdver >= 253)); then
        check_eq "systemd $sdver: $svc is Type=notify-reload" notify-reload systemctl show -P Type "$svc"
        check_eq "no ExecReload= (systemd signals the daemon itself)" "" systemctl show -P ExecReload "$svc"
        check_eq "ReloadSignal= is SIGHUP" 1 systemctl show -P ReloadSignal "$svc"
        printf '[Bandwidth]\nMode=elastic\nCreditMax=61s\n' >"$dropin/10-test.conf"
        c=$(journal_cursor)
        pid_before=$(systemctl show -P MainPID "$svc")
        check "systemctl reload bwgovd (notify-reload)" systemctl reload "$svc"
        # No waiting: systemctl returned after the daemon's READY=1.
        check "CreditMax=61s is in force when systemctl reload returns" \
                show_has '.config.credit_max_usec == 61000000' || fail_with_journal "$svc"
        reloading_seen() {
                unit_log_since "$c" "$svc" | grep -E 'Reloading|Reloaded'
        }
        check "systemd logged the reload (Reloading/Reloaded)" wait_for 10 reloading_seen
        check_eq "the reload did not restart bwgovd" "$pid_before" systemctl show -P MainPID "$svc"
        printf '[Bandwidth]\nMode=elastic\nCreditMax=60s\n' >"$dropin/10-test.conf"
        check "systemctl reload bwgovd (back to CreditMax=60s)" systemctl reload "$svc"
        check "CreditMax=60s is in force when systemctl reload returns" \
                show_has '.config.credit_max_usec == 60000000'
else
        check_eq "systemd $sdver: $svc is Type=notify" notify systemctl show -P Type "$svc"
        has_kill_hup() {
                systemctl show -P ExecReload "$svc" | grep -F 'kill' | grep -F -- '-HUP'
        }
        check "ExecReload= sends SIGHUP (systemd < 253 has no notify-reload)" has_kill_hup
fi

st=$(bwgovctl status --json)
reloads0=$(jq .reloads <<<"$st")
failures0=$(jq .reload_failures <<<"$st")
pid0=$(systemctl show -P MainPID "$svc")
info "before: $reloads0 reloads, $failures0 rejected, MainPID $pid0"

# Line 2 is broken; 20-change.conf is valid and would change CreditMax= and
# Mode= if the reload were applied in part.
printf '[Bandwidth]\nCPUQuotaMax=lots\n' >"$dropin/10-broken.conf"
printf '[Bandwidth]\nCreditMax=5s\nMode=observe\n' >"$dropin/20-change.conf"
c=$(journal_cursor)
check "systemctl reload bwgovd (broken drop-in)" systemctl reload "$svc"

names_file_line() {
        local out
        out=$(unit_log_since "$c" "$svc")
        printf '%s\n' "$out"
        grep -F "10-broken.conf:2" <<<"$out" | grep -q CPUQuotaMax
}
check "the journal names the file and line (10-broken.conf:2, CPUQuotaMax)" wait_for 20 names_file_line ||
        fail_with_journal "$svc"
kept_logged() {
        unit_log_since "$c" "$svc" | grep -i 'keeping the previous configuration'
}
check "the journal says the previous configuration is kept" kept_logged
check "bwgovd is active (running) after the failed reload" wait_for 20 active_running ||
        fail_with_journal "$svc"
check_eq "bwgovd is the same process" "$pid0" systemctl show -P MainPID "$svc"
check "bwgovctl status: one more rejected reload" wait_for 10 status_has ".reload_failures == $failures0 + 1"
check "the old configuration is kept whole (CreditMax=60s, Mode=elastic)" \
        show_has '.config.credit_max_usec == 60000000 and .config.mode == "elastic" and .config.cpu_quota_max == null'
check "$slice is still governed" show_has '.unit.present and .unit.adopted'

reload_ctl() {
        local out rc
        out=$(bwgovctl reload 2>&1)
        rc=$?
        printf 'exit status %d: %s\n' "$rc" "$out"
        ((rc != 0)) && grep -qi "reload failed" <<<"$out"
}
check "bwgovctl reload (varlink) is refused with ReloadFailed" reload_ctl
check "bwgovd is still active after bwgovctl reload" systemctl is-active --quiet "$svc"
check "bwgovctl status: two rejected reloads now" status_has ".reload_failures == $failures0 + 2"

rm -f "$dropin/10-broken.conf"
c=$(journal_cursor)
check "systemctl reload bwgovd (fixed)" systemctl reload "$svc"
check "the new configuration applies (CreditMax=5s, Mode=observe)" \
        wait_for 20 show_has '.config.credit_max_usec == 5000000 and .config.mode == "observe"' ||
        fail_with_journal "$svc"
check "no new rejected reload" status_has ".reload_failures == $failures0 + 2"
reloaded_logged() {
        unit_log_since "$c" "$svc" | grep 'Configuration reloaded'
}
check "the journal says the configuration was reloaded" wait_for 10 reloaded_logged

cleanup
check "bwgovd is still active" systemctl is-active --quiet "$svc" || fail_with_journal "$svc"
