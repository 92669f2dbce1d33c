#!/bin/bash
# The VM itself: systemd as PID 1, cgroup v2 with the cpu controller, and systemd
# writing cpu.max from CPUQuota= for services and slices, as bwgov expects.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

slice=bwgov-vm-test.slice
svc=bwgov-vm-boot-sleep.service

check_eq "systemd is PID 1" systemd cat /proc/1/comm

system_state() {
        local state
        state=$(timeout 120 systemctl is-system-running --wait)
        printf '%s\n' "$state"
        [[ $state == running || $state == degraded ]]
}
check "system boots to running or degraded" system_state
state=$(systemctl is-system-running)
info "system state: $state"
if [[ $state != running ]]; then
        info "failed units: $(systemctl --failed --no-legend --plain | awk '{ print $1 }' | xargs)"
fi
info "boot: $(systemd-analyze time 2>/dev/null | head -n 1)"

check_eq "cgroup2 is mounted on /sys/fs/cgroup" cgroup2fs stat -f -c %T /sys/fs/cgroup
check "cgroup2 offers the cpu controller" grep -qw cpu /sys/fs/cgroup/cgroup.controllers
info "controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"

check "systemd-run starts a service in $slice with CPUQuota=50%" \
        systemd-run --quiet --unit="$svc" --slice="$slice" -p CPUQuota=50% sleep 30
check "the service runs" wait_for 10 systemctl is-active --quiet "$svc"
check_eq "the service is in $slice" "$slice" systemctl show -P Slice "$svc"
svc_cg=$(unit_cgroup "$svc")
slice_cg=$(unit_cgroup "$slice")
info "service cgroup: $svc_cg"
check_eq "CPUQuota=50% on the service sets its cpu.max" "50000 100000" cat "$svc_cg/cpu.max"
check "the cpu controller is enabled for $slice" grep -qw cpu "$(dirname "$slice_cg")/cgroup.subtree_control"

check "set-property --runtime $slice CPUQuota=50%" \
        systemctl set-property --runtime "$slice" CPUQuota=50%
check_eq "the slice's cpu.max is 50000 100000" "50000 100000" cat "$slice_cg/cpu.max"

write_burst() {
        echo "$2" >"$1/cpu.max.burst" && cat "$1/cpu.max.burst"
}
check_eq "cpu.max.burst of the slice is writable" 20000 write_burst "$slice_cg" 20000

check "set-property --runtime $slice CPUQuota=30%" \
        systemctl set-property --runtime "$slice" CPUQuota=30%
check_eq "set-property changes the slice's cpu.max" "30000 100000" cat "$slice_cg/cpu.max"
info "cpu.max.burst after systemd rewrote cpu.max: $(cat "$slice_cg/cpu.max.burst")"
check_eq "CPUQuotaPerSecUSec of the slice" 300ms systemctl show -P CPUQuotaPerSecUSec "$slice"

systemctl stop "$svc" 2>/dev/null
systemctl revert "$slice" >/dev/null 2>&1
systemctl stop "$slice" 2>/dev/null
check "cleanup: $svc is gone" wait_for 10 bash -c "! systemctl is-active --quiet $svc"
