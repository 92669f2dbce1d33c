# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2154 # the variables are the sourcing script's
#
# `boot-check --stress SECONDS`, sourced by boot-check (it uses boot-check's
# variables and functions: tree boot patchdir branch jobs keep stress here
# timeout_s kernel_sum STRESS_ON STRESS_OFF configure apply_series die).
#
#  1. builds the patched kernel with KASAN, lockdep and the debug-object checks
#     (boot-check's STRESS_ON), cached in $boot/bzImage-stress,
#  2. boots it under qemu (TCG, 2 vCPUs, 1 GiB: KASAN's shadow) with
#     boot-probe as PID 1 and "bwgov.stress=SECONDS" (boot-stress.c),
#  3. fails unless the run ended ("STRESS done"), KASAN and lockdep were on
#     and lockdep still is at the end (it switches itself off after its first
#     report), no write failed other than with EINVAL, and the console holds
#     no WARN, BUG, KASAN, lockdep, RCU-stall or hung-task report at all.
#     Mainline's "cfs_period_timer[cpuN]: period too short, scaling up" is
#     counted and shown, not failed: it is the period timer's own remedy
#     (pr_warn_ratelimited, no stack) when its callback overran, which a KASAN
#     guest under TCG on a busy host does; were the printk under cfs_b->lock
#     to upset lockdep, that report fails the run like any other.
#
# The summary it prints is what the series README quotes.

swork="$boot/src-stress"
sobj="$boot/obj-stress"
swant="$(stat -c '%s %Y' "$tree/Makefile") $kernel_sum ${STRESS_ON[*]} -- ${STRESS_OFF[*]}"
if [ -f "$boot/stamp-stress" ] && [ "$(cat "$boot/stamp-stress")" = "$swant" ] &&
   [ -f "$boot/bzImage-stress" ]; then
        echo "stress kernel up to date in $boot"
else
        rm -rf "$swork" "$sobj" "$boot/stamp-stress" "$boot/bzImage-stress"
        cp -al "$tree" "$swork"
        apply_series "$swork"
        mkdir -p "$sobj"
        t0=$(date +%s)
        configure "$swork" "$sobj" STRESS_ON STRESS_OFF
        echo "building the patched kernel with KASAN and lockdep ($pkg)"
        make -C "$swork" O="$sobj" ARCH=x86_64 -j"$jobs" bzImage >"$boot/build-stress.log" 2>&1 ||
                { tail -n 30 "$boot/build-stress.log" >&2; die "stress kernel build failed"; }
        cp "$sobj/arch/x86/boot/bzImage" "$boot/bzImage-stress"
        cp "$sobj/.config" "$boot/config-stress"
        echo "stress kernel built in $(($(date +%s) - t0)) s"
        echo "$swant" > "$boot/stamp-stress"
        [ "$keep" -eq 1 ] || rm -rf "$swork" "$sobj"
fi

gcc -O2 -static -pthread -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
        -o "$boot/init" "$here/boot-probe.c" "$here/boot-stress.c" || die "cannot build boot-probe"
gcc -O2 -o "$boot/gen_init_cpio" "$tree/usr/gen_init_cpio.c" || die "cannot build gen_init_cpio"
cat > "$boot/initramfs-stress.list" <<EOF
dir /dev 0755 0 0
nod /dev/console 0600 0 0 c 5 1
dir /proc 0555 0 0
dir /sys 0555 0 0
file /init $boot/init 0755 0 0
EOF
"$boot/gen_init_cpio" "$boot/initramfs-stress.list" > "$boot/initramfs-stress.cpio"

slog="$boot/serial-stress.log"
echo "booting the stress kernel (TCG) for a ${stress} s run"
t0=$(date +%s)
timeout $((stress + timeout_s)) qemu-system-x86_64 -accel tcg -smp 2 -m 1024 -nographic -no-reboot \
        -kernel "$boot/bzImage-stress" -initrd "$boot/initramfs-stress.cpio" \
        -append "console=ttyS0 panic=-1 rdinit=/init bwgov.stress=$stress" -nic none \
        </dev/null >"$slog" 2>&1 || true
tr -d '\r' < "$slog" | sed 's/\x1b\[[0-9;]*m//g' > "$slog.txt"
echo "the guest ran $(($(date +%s) - t0)) s (log $slog.txt)"

python3 - "$slog.txt" "$branch" <<'PY'
import re, sys

path, branch = sys.argv[1], sys.argv[2]
lines = open(path, errors="replace").read().splitlines()
report = re.compile(r"WARNING:|BUG:|BUG at|Oops|KASAN|UBSAN:|general protection fault|Kernel panic|"
                    r"circular locking|possible recursive locking|inconsistent lock state|"
                    r"irq lock inversion|possible deadlock|sleeping function called|"
                    r"detected stall|blocked for more than|list_add corruption|list_del corruption|"
                    r"ODEBUG:|stack-protector")
notice = re.compile(r"period too short, scaling up")
# The boot banners that say KASAN and lockdep are on, not reports.
banner = re.compile(r"KernelAddressSanitizer initialized|kasan: |Lock dependency validator")
bad = []


def fail(msg):
    bad.append(msg)


text = "\n".join(lines)
if "KernelAddressSanitizer initialized" not in text:
    fail("KASAN did not say it was initialized: not a KASAN kernel?")
if "Lock dependency validator" not in text:
    fail("lockdep did not print its banner: not a lockdep kernel?")
hits = [(i, l) for i, l in enumerate(lines)
        if report.search(l) and not banner.search(l) and not l.startswith("STRESS")]
for i, l in hits[:1]:
    print("\n".join(lines[max(0, i - 2):i + 60]))
if hits:
    fail("%d report line(s) on the console, the first: %s" % (len(hits), hits[0][1].strip()))
notices = [l.strip() for l in lines if notice.search(l)]
summary = next((l for l in lines if l.startswith("STRESS summary")), None)
if "STRESS done" not in text or summary is None:
    fail("the stress run did not end (no \"STRESS done\")")
else:
    counts = dict(kv.split("=") for kv in summary.split()[2:])
    if int(counts.get("errors", "1")) != 0:
        fail("%s writes failed with an error other than EINVAL" % counts.get("errors"))
    if int(counts.get("writes", "0")) == 0 or int(counts.get("moves", "0")) == 0:
        fail("the run changed nothing (writes=%s moves=%s)" % (counts.get("writes"), counts.get("moves")))
lockdep = next((l.split("=")[1] for l in lines if l.startswith("STRESS lockdep debug_locks=")), None)
if lockdep != "1":
    fail("lockdep is not on at the end of the run (debug_locks=%s)" % lockdep)
for l in lines:
    if l.startswith(("STRESS begin", "STRESS summary", "STRESS lockdep", "STRESS write-error", "STRESS error")):
        print(l)
print("reports on the console: %d" % len(hits))
if notices:
    print("period-timer notices (\"period too short, scaling up\"; not reports): %d, the first: %s"
          % (len(notices), notices[0]))
for m in bad:
    print("FAIL: " + m)
print("boot-check --stress: %s (%s)" % ("FAILED" if bad else "OK", branch))
sys.exit(1 if bad else 0)
PY
