#!/bin/bash
# The kubelet's systemd cgroup driver layout, made with systemd-run as the
# kubelet and containerd make it: kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<uid>.slice (CPUQuota= the pod's limit), and in it
# cri-containerd-<id>.scope (CPUQuota= the container's). bwgov names no
# container: the prefix drop-ins cri-containerd-.scope.d/ and
# kubepods-burstable-.slice.d/ govern them (issue 18):
#   1. a container already running at the reload and the pod slice are
#      governed, each at its resting headroom (four times its baseline, the
#      pod's capped at the guest's 2 CPUs) and the container's under its
#      pod's quota;
#   2. a container started afterwards is governed within one Interval= (1s)
#      of its start, without a reload;
#   3. a container that stops is forgotten: bwgovctl no longer knows it;
#   4. a scope not named like a container (another prefix) is left alone;
#   5. on stop bwgovd puts every baseline back.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
pod=kubepods-burstable-pod1f2e3d4c_5b6a_7980_8a9b_0c1d2e3f4a5b.slice
ctr1=cri-containerd-0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0.scope
ctr2=cri-containerd-a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9.scope
other=crio-conmon-1234.scope
pids=()

cleanup() {
        local p
        rm -rf /etc/bwgov/cri-containerd-.scope.d /etc/bwgov/kubepods-burstable-.slice.d
        systemctl reload "$svc" 2>/dev/null
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        systemctl stop "$pod" kubepods-burstable.slice kubepods.slice 2>/dev/null
        rm -f "/run/systemd/system/$pod"
        systemctl daemon-reload
}
trap cleanup EXIT

check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"
mkdir -p /etc/bwgov/bwgov.conf.d
printf '[Governor]\nHostPressureLimit=0%%\nMetricsInterval=1s\n' >/etc/bwgov/bwgov.conf.d/50-vm-test.conf

# start_scope UNIT QUOTA: a container's scope in the pod slice, as containerd
# asks systemd for it (a transient scope with its CPU quota).
start_scope() {
        systemd-run --quiet --scope --unit="$1" --slice="$pod" -p CPUQuota="$2" sleep infinity &
        pids+=($!)
}

# The kubelet makes the pod slice transient with the pod's limit; a runtime
# unit file is the same to bwgov.
printf '[Slice]\nCPUQuota=80%%\n' >"/run/systemd/system/$pod"
check "systemctl daemon-reload" systemctl daemon-reload
check "start the pod slice (CPUQuota=80%, the pod's limit)" systemctl start "$pod"
start_scope "$ctr1" 30%
start_scope "$other" 30%
check "the first container's scope runs" wait_for 10 systemctl is-active --quiet "$ctr1"
check "the other scope runs" wait_for 10 systemctl is-active --quiet "$other"
pcg=$(unit_cgroup "$pod")
c1=$(unit_cgroup "$ctr1")
ocg=$(unit_cgroup "$other")
check_eq "the kubelet's layout" \
        "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/$pod/$ctr1" echo "$c1"
check_eq "the container's cpu.max (systemd's)" "30000 100000" cat "$c1/cpu.max"

mkdir -p /etc/bwgov/cri-containerd-.scope.d /etc/bwgov/kubepods-burstable-.slice.d
printf '[Bandwidth]\nCreditMax=5s\n' >/etc/bwgov/cri-containerd-.scope.d/10-pods.conf
printf '[Bandwidth]\nCreditMax=10s\n' >/etc/bwgov/kubepods-burstable-.slice.d/10-pods.conf
check "systemctl reload bwgovd" systemctl reload "$svc" || fail_with_journal "$svc"

adopted() {
        bwgovctl show "$1" --json | jq -e '.unit.present and .unit.adopted' >/dev/null
}
quota_is() {
        local q p
        read -r q p <"$1/cpu.max"
        [[ $q == "$2" ]]
}
check "the running container is governed by the prefix drop-in" wait_for 10 adopted "$ctr1" ||
        fail_with_journal "$svc"
check "the pod slice is governed by its prefix drop-in" wait_for 10 adopted "$pod" || fail_with_journal "$svc"
check "bwgovctl show: the container's drop-in is the prefix's (CreditMax=5s)" \
        bash -c "bwgovctl show $ctr1 --json | jq -e '.config.credit_max_usec == 5000000'"
check "the pod rests at the guest's 2 CPUs (200000; four times its baseline is more)" \
        wait_for 10 quota_is "$pcg" 200000
check "the container rests at four times its baseline (120000)" wait_for 10 quota_is "$c1" 120000

start=$(date +%s.%N)
c=$(journal_cursor)
start_scope "$ctr2" 20%
check "the second container's scope runs" wait_for 10 systemctl is-active --quiet "$ctr2"
c2=$(unit_cgroup "$ctr2")
check "a container started later is governed without a reload" wait_for 10 adopted "$ctr2" ||
        fail_with_journal "$svc"
check_governed_in_time "$c" "$ctr2" "$start" systemd-run
check "the second container rests at four times its baseline (80000)" wait_for 10 quota_is "$c2" 80000

check_eq "a scope of another prefix is left alone" "30000 100000" cat "$ocg/cpu.max"
check "bwgovctl does not know it" bash -c "! bwgovctl show $other --json >/dev/null 2>&1"

kill "${pids[0]}" 2>/dev/null
check "the first container stops" wait_for 10 bash -c "! systemctl is-active --quiet $ctr1"
forgotten() {
        ! bwgovctl show "$ctr1" --json >/dev/null 2>&1
}
check "a container that stopped is forgotten" wait_for 10 forgotten || fail_with_journal "$svc"

check "stop bwgovd" systemctl stop "$svc"
check_eq "the pod's baseline back" "80000 100000" cat "$pcg/cpu.max"
check_eq "the second container's baseline back" "20000 100000" cat "$c2/cpu.max"
check "start bwgovd again" systemctl start "$svc" || fail_with_journal "$svc"
