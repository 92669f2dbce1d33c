#!/bin/bash
# systemd owns cpu.max of its units and rewrites it from CPUQuota= on
# daemon-reload and set-property without comparing. bwgovd must re-base on
# the value it did not write and never fight. Precisely, after systemd
# rewrites the cpu.max of a boosted slice:
#   1. bwgovd logs BWGOV_REASON=external-change for the slice with
#      BWGOV_QUOTA_NEW= systemd's value, once per rewrite;
#   2. bwgovctl show --json reports systemd's value as the baseline and one
#      more external change;
#   3. in the next 10 s there is no further external change (no write-back
#      loop), and bwgovd's first write after the re-base starts from
#      systemd's value (BWGOV_QUOTA_OLD=) - a fresh boost from the new
#      baseline, not the old boost written back; every write stays within
#      2 x the new baseline (no CPUQuotaMax= is configured);
#   4. what the kernel holds then is systemd's value or such a fresh boost,
#      and it is what bwgovctl reports.
# set-property --runtime CPUQuota=30% must additionally reach the kernel at
# all: systemd's write fails with EINVAL when cpu.max.burst (which bwgovd
# manages and systemd 252 does not) exceeds the new quota.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
slice=bwgovtest.slice
load=bwgovtest-load.service
dropin=/etc/bwgov/$slice.d

cleanup() {
        rm -rf "$dropin"
        systemctl reload "$svc" 2>/dev/null
        systemctl stop "$load" 2>/dev/null
        systemctl reset-failed "$load" 2>/dev/null
        systemctl stop "$slice" 2>/dev/null
        rm -rf "/etc/systemd/system/$slice" "/run/systemd/system.control/$slice.d"
        systemctl daemon-reload
}

# external_changes CURSOR: print the external-change entries for the slice
# since CURSOR as "QUOTA_OLD QUOTA_NEW BURST_OLD BURST_NEW" lines.
external_changes() {
        journal_since "$1" ".BWGOV_UNIT == \"$slice\" and .BWGOV_REASON == \"external-change\"" |
                jq -r '"\(.BWGOV_QUOTA_OLD) \(.BWGOV_QUOTA_NEW) \(.BWGOV_BURST_OLD) \(.BWGOV_BURST_NEW)"'
}

# rebased_to CURSOR QUOTA: an external change to QUOTA was logged since CURSOR.
rebased_to() {
        local lines
        lines=$(external_changes "$1")
        printf 'external changes since the cursor (old new burst_old burst_new):\n%s\n' "${lines:-none}"
        awk -v q="$2" '$2 == q { f = 1 } END { exit !f }' <<<"$lines"
}

# writes_after CURSOR: bwgovd's own writes for the slice since CURSOR,
# "REASON QUOTA_OLD QUOTA_NEW BURST_OLD BURST_NEW", external changes excluded.
writes_after() {
        journal_since "$1" ".BWGOV_UNIT == \"$slice\" and .BWGOV_REASON != null and .BWGOV_REASON != \"external-change\"" |
                jq -r '"\(.BWGOV_REASON) \(.BWGOV_QUOTA_OLD) \(.BWGOV_QUOTA_NEW) \(.BWGOV_BURST_OLD) \(.BWGOV_BURST_NEW)"'
}

# no_fight CURSOR BASELINE LIMIT: exactly one external change since CURSOR;
# bwgovd's first write after it starts from BASELINE; no write above LIMIT.
no_fight() {
        local n writes first_old ext_cursor
        n=$(external_changes "$1" | wc -l)
        ext_cursor=$(journal_since "$1" ".BWGOV_UNIT == \"$slice\" and .BWGOV_REASON == \"external-change\"" |
                jq -r .__CURSOR | head -n 1)
        [[ -n $ext_cursor ]] || { echo "no external change logged"; return 1; }
        writes=$(writes_after "$ext_cursor")
        printf 'external changes: %s\nbwgovd writes since (reason quota_old quota_new burst_old burst_new):\n%s\n' \
                "$n" "${writes:-none}"
        ((n == 1)) || { echo "expected exactly one external change"; return 1; }
        first_old=$(awk 'NR == 1 { print $2 }' <<<"$writes")
        if [[ -n $first_old && $first_old != "$2" ]]; then
                echo "the first write after the re-base started from $first_old, not from systemd's $2"
                return 1
        fi
        awk -v lim="$3" '$3 != "max" && $3 > lim { print "write above the limit: " $0; bad = 1 }
                         $3 == "max" { print "write of max: " $0; bad = 1 } END { exit bad }' <<<"$writes"
}

# kernel_agrees LOW HIGH: the kernel's quota is within [LOW, HIGH] and equals
# what bwgovctl reports as current (retried: bwgovd may write in between).
kernel_agrees() {
        local before after json quota period
        before=$(cat "$cg/cpu.max")
        json=$(bwgovctl show "$slice" --json) || return 1
        after=$(cat "$cg/cpu.max")
        read -r quota period <<<"$after"
        printf 'kernel: %s / %s, bwgovctl current: %s\n' "$before" "$after" "$(jq -c .unit.current <<<"$json")"
        [[ $before == "$after" && $quota != max ]] || return 1
        ((quota >= $1 && quota <= $2)) || return 1
        jq -e --argjson q "$quota" --argjson p "$period" \
                '.unit.current.quota_usec == $q and .unit.current.period_usec == $p' <<<"$json" >/dev/null
}

show_has() {
        bwgovctl show "$slice" --json | jq -e "$1"
}

check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"
mkdir -p /etc/bwgov/bwgov.conf.d
# See 20-govern.sh: no host shedding under TCG.
printf '[Governor]\nHostPressureLimit=0%%\n' >/etc/bwgov/bwgov.conf.d/50-vm-test.conf
printf '[Slice]\nCPUQuota=50%%\n' >"/etc/systemd/system/$slice"
systemctl daemon-reload
check "start $slice (CPUQuota=50%)" systemctl start "$slice"
cg=$(unit_cgroup "$slice")
mkdir -p "$dropin"
printf '[Bandwidth]\nMode=elastic\nCreditMax=60s\n' >"$dropin/10-test.conf"
check "systemctl reload bwgovd with the drop-in" systemctl reload "$svc"
check "bwgovd adopts $slice" wait_for 20 show_has '.unit.adopted and .unit.baseline.quota_usec == 50000' ||
        fail_with_journal "$svc"
check "start the workload" systemd-run --quiet --unit="$load" --slice="$slice" \
        stress-ng --cpu 1 --cpu-load 90 --cpu-load-slice 200 --timeout 600

quota_above() {
        local quota period
        read -r quota period <"$cg/cpu.max"
        printf 'cpu.max %s %s, burst %s\n' "$quota" "$period" "$(cat "$cg/cpu.max.burst")"
        [[ $quota != max ]] && ((quota > $1))
}
check "the slice is boosted (quota > 50000)" wait_for 60 quota_above 50000 || fail_with_journal "$svc"

# --- systemd rewrites the same quota ----------------------------------------
# systemd 252 rewrites cpu.max of every realized unit on daemon-reload; 257
# leaves it alone there (checked below) and rewrites it on set-property,
# unchanged value or not. Either rewrite puts systemd's 50000 over the boost.
sdver=$(systemctl --version | awk 'NR == 1 { print $2 + 0 }')
if ((sdver <= 252)); then
        what="daemon-reload"
        rewrite=(systemctl daemon-reload)
else
        what="set-property CPUQuota=50% (unchanged)"
        rewrite=(systemctl set-property --runtime "$slice" CPUQuota=50%)
        ext0=$(bwgovctl show "$slice" --json | jq .counters.external_changes)
        c=$(journal_cursor)
        check "systemctl daemon-reload" systemctl daemon-reload
        sleep 5
        check "systemd $sdver: daemon-reload leaves the boosted slice alone (no external change in 5 s)" \
                show_has ".counters.external_changes == $ext0"
        check "the slice is still boosted" quota_above 50000
fi
ext0=$(bwgovctl show "$slice" --json | jq .counters.external_changes)
info "before $what: cpu.max $(cat "$cg/cpu.max"), burst $(cat "$cg/cpu.max.burst"), external changes $ext0"
c=$(journal_cursor)
check "systemctl ${rewrite[*]:1}" "${rewrite[@]}"
check "bwgovd re-bases on systemd's rewrite (external-change, BWGOV_QUOTA_NEW=50000)" \
        wait_for 20 rebased_to "$c" 50000 || fail_with_journal "$svc"
check "bwgovctl show: baseline still 50000, one more external change" \
        show_has ".unit.baseline.quota_usec == 50000 and .unit.baseline.period_usec == 100000 and
                  .counters.external_changes == $ext0 + 1"
sleep 10
check "no fight for 10 s after $what: one external change, fresh boost from 50000, nothing above 200000" \
        no_fight "$c" 50000 200000 || fail_with_journal "$svc"
check "the kernel holds systemd's 50000 or a fresh boost <= 200000, as bwgovctl reports" \
        wait_for 10 kernel_agrees 50000 200000
check_eq "systemd's CPUQuota is unchanged" 500ms systemctl show -P CPUQuotaPerSecUSec "$slice"
info "10 s after $what: cpu.max $(cat "$cg/cpu.max"), burst $(cat "$cg/cpu.max.burst")"

# --- set-property ------------------------------------------------------------
check "the slice is boosted again before set-property" wait_for 60 quota_above 50000
ext0=$(bwgovctl show "$slice" --json | jq .counters.external_changes)
info "before set-property: cpu.max $(cat "$cg/cpu.max"), burst $(cat "$cg/cpu.max.burst")"
c=$(journal_cursor)
check "systemctl set-property --runtime $slice CPUQuota=30%" \
        systemctl set-property --runtime "$slice" CPUQuota=30%
systemd_applied() {
        ! journal_since "$c" '._PID == "1"' | jq -r .MESSAGE | grep -F "Failed to set 'cpu.max'"
}
check "bwgovd re-bases on the new quota (external-change, BWGOV_QUOTA_NEW=30000)" \
        wait_for 20 rebased_to "$c" 30000 || fail_with_journal "$svc"
# Checked after the wait: PID 1's message may reach the journal late.
# While bwgovd holds a raised burst the kernel refuses systemd's lower quota
# (EINVAL in PID 1); bwgovd must then put systemd's value in place itself.
systemd_or_bwgovd_applied() {
        systemd_applied || journal_since "$c" '._SYSTEMD_UNIT == "bwgovd.service"' | jq -r .MESSAGE |
                grep -Eq "systemd-intent|refused-write"
}
# bwgovd learns it from systemd's CPUQuota= (systemd-intent) or, quicker,
# from the kernel's refusal of PID 1's write (refused-write, BPF).
check "systemd's 30% reached the kernel (written by PID 1, or by bwgovd as systemd-intent or refused-write after PID 1 got EINVAL)" \
        systemd_or_bwgovd_applied
check "bwgovctl show --json: baseline 30000, quota limit 120000 (4 x baseline)" \
        show_has '.unit.baseline.quota_usec == 30000 and .limits.quota_limit_usec == 120000'
sleep 10
check "no fight for 10 s after set-property: one external change, fresh boost from 30000, nothing above 120000" \
        no_fight "$c" 30000 120000 || fail_with_journal "$svc"
check "the kernel holds 30000 or a fresh boost <= 120000, as bwgovctl reports" \
        wait_for 10 kernel_agrees 30000 120000
check_eq "systemd's CPUQuota is 30%" 300ms systemctl show -P CPUQuotaPerSecUSec "$slice"
info "10 s after set-property: cpu.max $(cat "$cg/cpu.max"), burst $(cat "$cg/cpu.max.burst")"

cleanup
check "bwgovd is still active" systemctl is-active --quiet "$svc" || fail_with_journal "$svc"
