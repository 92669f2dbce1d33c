# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2154 # the variables are the sourcing script's
#
# Steps 2 and 3 of deb-check, sourced by it (it uses deb-check's variables:
# src patchdir suite branch keep image release cache, and die/log): install
# the packaged kernel in the release's VM, boot it there, and check it.

work=$(mktemp -d "${TMPDIR:-/tmp}/bwgov-deb-check.XXXXXX")
# shellcheck disable=SC2317 # called through the EXIT trap
deb_check_cleanup() {
        [ -z "${root:-}" ] || umount "$root/proc" 2>/dev/null || true
        if [ "$keep" -eq 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap deb_check_cleanup EXIT

# bwgov's own packages for the release, as tests/vm/ci builds them (without
# their test suites: scripts/test runs those).
log "building bwgov's packages for $suite"
mkdir -p "$work/payload"
if [ "$suite" = bookworm ]; then
        builder=("$src/tests/packaging/build-debs")
else
        builder=("$src/tests/packaging/build-debs-chroot" "$suite")
fi
BWGOV_DEB_OUT=$work/debs DEB_BUILD_OPTIONS=nocheck "${builder[@]}" >"$work/build-debs.log" 2>&1 ||
        { tail -n 30 "$work/build-debs.log" >&2; die "bwgov's packages did not build (log $work/build-debs.log)"; }
cp "$work"/debs/*.deb "$work/payload/"
cp "$image" "$work/payload/"

# The out-of-tree items: what check-kernel must see on the packaged kernel.
mapfile -t ours < <(python3 -c 'import json, sys
for it in json.load(open(sys.argv[1]))["items"]:
    if it["kind"] == "out-of-tree":
        print(it["id"])' "$patchdir/manifest.json")

# Boot 1: install, and hand the kernel and the initrd its postinst made out.
mkdir -p "$work/install" "$work/check"
cat > "$work/install/10-install-kernel.sh" <<EOF
#!/bin/bash
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "\${BWGOV_VM_LIB:?}"
rel=$release
check_eq "linux-image-\$rel is installed" "ii " dpkg-query -W -f '\${db:Status-Abbrev}' "linux-image-\$rel"
check "its postinst made /boot/initrd.img-\$rel" test -s "/boot/initrd.img-\$rel"
check "the packaged kernel is handed out" cp "/boot/vmlinuz-\$rel" "/boot/initrd.img-\$rel" "\$BWGOV_VM_SHARE/out/"
info "boot: \$(ls /boot | tr '\n' ' ')"
EOF
cat > "$work/check/10-check-kernel.sh" <<EOF
#!/bin/bash
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "\${BWGOV_VM_LIB:?}"
out=\$BWGOV_VM_SHARE/out
check_eq "the guest runs the packaged kernel" "$release" uname -r
info "\$(cat /proc/version)"
# The probes limit a scratch cgroup below the root, which needs the cpu
# controller there. Debian 13's systemd (257) enables it only once a unit
# asks for CPU control; a host running bwgovd over its slices has it. Enable
# it as such a unit would (Debian 12's systemd had it on at boot).
if ! grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control; then
        info "the cpu controller was not enabled at the root: enabling it"
        echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
fi
# The busy-loop probes need the (emulated) CPUs: a starved probe says
# "inconclusive" and its item "unknown", which is no answer. Up to three
# passes, until every item of the series has one.
for pass in 1 2 3; do
        bwgovctl check-kernel --json >"\$out/check-kernel.json" 2>"\$out/check-kernel.err"
        jq -e '[.items[] | select(.kind == "out-of-tree" and .status == "unknown")] | length == 0' \
                "\$out/check-kernel.json" >/dev/null && break
        info "check-kernel pass \$pass: an item of the series came out unknown (a starved probe); once more"
done
bwgovctl check-kernel >"\$out/check-kernel.txt" 2>&1
echo "exit=\$?" >>"\$out/check-kernel.txt"
check_eq "bwgovctl check-kernel: verdict ok" ok jq -r .verdict "\$out/check-kernel.json"
for id in ${ours[*]}; do
        check_eq "bwgovctl check-kernel: \$id present" present \\
                jq -r --arg id "\$id" '.items[] | select(.id == \$id) | .status' "\$out/check-kernel.json"
        info "\$id: \$(jq -r --arg id "\$id" '.items[] | select(.id == \$id) | .detected_by' "\$out/check-kernel.json")"
done
EOF
chmod +x "$work/install/10-install-kernel.sh" "$work/check/10-check-kernel.sh"

# The bookworm image has no initramfs-tools (it boots the host's kernel with
# an initrd made on the host): the packaged kernel's postinst needs it.
extra=""
[ "$suite" != bookworm ] || extra="initramfs-tools zstd"
vm() {
        BWGOV_VM_EXTRA_PACKAGES=$extra BWGOV_VM_REQUIRE=1 BWGOV_VM_KEEP=1 "$src/tests/vm/run" --suite "$suite" \
                --disk "$work/disk.qcow2" "$@"
}
log "VM boot 1: install $(basename "$image") and bwgov's packages"
BWGOV_VM_SCENARIO_DIR=$work/install vm --payload "$work/payload" >"$work/vm-install.log" 2>&1 </dev/null || true
cat "$work/vm-install.log"
run1=$(sed -n 's/^vm: kept \([^ ]*\).*/\1/p' "$work/vm-install.log" | tail -n1)
[ -n "$run1" ] && [ -s "$run1/share/out/vmlinuz-$release" ] || die "the install boot did not hand the kernel out"
grep -q '0 failed' "$work/vm-install.log" || die "the install boot failed"

log "VM boot 2: the packaged kernel $release"
# check-kernel's behaviour probes measure timing: the host's timing lock.
exec {timing}>"${BWGOV_TIMING_LOCK:-/tmp/bwgov-cg.lock}"
flock "$timing"
BWGOV_VM_SCENARIO_DIR=$work/check vm --kernel "$run1/share/out/vmlinuz-$release" \
        --initrd "$run1/share/out/initrd.img-$release" >"$work/vm-check.log" 2>&1 < /dev/null || true
flock -u "$timing"
cat "$work/vm-check.log"
run2=$(sed -n 's/^vm: kept \([^ ]*\).*/\1/p' "$work/vm-check.log" | tail -n1)
[ -n "$run2" ] && [ -f "$run2/share/out/check-kernel.txt" ] && cat "$run2/share/out/check-kernel.txt"
[ "$keep" -eq 1 ] || rm -rf "$run1" "$run2"
grep -q '0 failed' "$work/vm-check.log" || die "the packaged kernel did not pass in the VM"
log "OK ($suite: $(basename "$image") installs, boots, and check-kernel sees the series)"
