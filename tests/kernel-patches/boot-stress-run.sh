# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash disable=SC2154 # the variables are the sourcing script's
#
# `boot-check --stress SECONDS`, sourced by boot-check (it uses boot-check's
# variables and functions: tree boot patchdir branch jobs keep stress unpatched hotplug here
# timeout_s kernel_sum STRESS_ON STRESS_OFF configure apply_series die).
#
#  1. builds the patched kernel with KASAN, lockdep and the debug-object checks
#     (boot-check's STRESS_ON), cached in $boot/bzImage-stress (with
#     --unpatched the same kernel without the series, bzImage-stress-unpatched:
#     what the same run does on mainline, to tell the series' faults apart),
#  2. boots it under qemu (TCG, 2 vCPUs, 1 GiB: KASAN's shadow) with
#     boot-probe as PID 1 and "bwgov.stress=SECONDS" (boot-stress.c;
#     "bwgov.hotplug=0" with --no-hotplug). When
#     the console stays silent for BWGOV_STRESS_SILENCE seconds (300) before
#     the run ended, the vCPUs' registers are read through qemu's monitor, the
#     instruction pointers named from System.map, and the guest is stopped:
#     a hung guest is shown where it hangs,
#  3. fails unless the run ended ("STRESS done"), KASAN and lockdep were on
#     and lockdep still is at the end (it switches itself off after its first
#     report), no write failed other than with EINVAL, the run kept changing
#     the hierarchy (at least a write a second between any two of its 30 s
#     reports: about 10 a second is usual under TCG, and a run that stalls
#     tests nothing), and the console holds no WARN, BUG, KASAN, lockdep,
#     RCU-stall or hung-task report at all (a task blocked for 30 s is one:
#     hung_task_timeout_secs).
#     Mainline's "cfs_period_timer[cpuN]: period too short, scaling up" is
#     counted and shown, not failed: it is the period timer's own remedy
#     (pr_warn_ratelimited, no stack) when its callback overran, which a KASAN
#     guest under TCG on a busy host does; were the printk under cfs_b->lock
#     to upset lockdep, that report fails the run like any other.
#
# The summary it prints is what the series README quotes.

# sfx names the variant's files: "" for the patched kernel, "-unpatched".
if [ "$unpatched" -eq 1 ]; then sfx=-unpatched; what=unpatched; else sfx=""; what=patched; fi
swork="$boot/src-stress$sfx"
sobj="$boot/obj-stress$sfx"
swant="$(stat -c '%s %Y' "$tree/Makefile") $what $kernel_sum ${STRESS_ON[*]} -- ${STRESS_OFF[*]}"
if [ -f "$boot/stamp-stress$sfx" ] && [ "$(cat "$boot/stamp-stress$sfx")" = "$swant" ] &&
   [ -f "$boot/bzImage-stress$sfx" ] && [ -f "$boot/System.map-stress$sfx" ]; then
        echo "$what stress kernel up to date in $boot"
else
        rm -rf "$swork" "$sobj" "$boot/stamp-stress$sfx" "$boot/bzImage-stress$sfx"
        cp -al "$tree" "$swork"
        [ "$unpatched" -eq 1 ] || apply_series "$swork"
        mkdir -p "$sobj"
        t0=$(date +%s)
        configure "$swork" "$sobj" STRESS_ON STRESS_OFF
        echo "building the $what kernel with KASAN and lockdep ($pkg)"
        make -C "$swork" O="$sobj" ARCH=x86_64 -j"$jobs" bzImage >"$boot/build-stress$sfx.log" 2>&1 ||
                { tail -n 30 "$boot/build-stress$sfx.log" >&2; die "stress kernel build failed"; }
        cp "$sobj/arch/x86/boot/bzImage" "$boot/bzImage-stress$sfx"
        cp "$sobj/System.map" "$boot/System.map-stress$sfx"
        cp "$sobj/.config" "$boot/config-stress$sfx"
        echo "$what stress kernel built in $(($(date +%s) - t0)) s"
        echo "$swant" > "$boot/stamp-stress$sfx"
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

slog="$boot/serial-stress$sfx.log"
mon="$boot/monitor-stress$sfx.sock"
silence=${BWGOV_STRESS_SILENCE:-300}
rm -f "$mon" "$boot/hang-stress$sfx.txt"
echo "booting the $what stress kernel (TCG) for a ${stress} s run"
t0=$(date +%s)
# printk.devkmsg=on: boot-stress's lines go through /dev/kmsg, unlimited;
# nokaslr: the instruction pointers read on a hang are System.map's; a task
# blocked for 30 s is reported with its stack (DETECT_HUNG_TASK).
append="console=ttyS0 panic=-1 nokaslr rdinit=/init printk.devkmsg=on sysctl.kernel.hung_task_timeout_secs=30"
append+=" bwgov.stress=$stress bwgov.hotplug=$hotplug"
# BWGOV_STRESS_PROBE=1: a churn child waited for 20 s is experimented on
# (boot-stress.c, probe()): its groups' cpu.max rewritten one by one.
[ "${BWGOV_STRESS_PROBE:-0}" = 1 ] && append+=" bwgov.probe=1"
timeout $((stress + timeout_s)) qemu-system-x86_64 -accel tcg -smp 2 -m 1024 -nographic -no-reboot \
        -kernel "$boot/bzImage-stress$sfx" -initrd "$boot/initramfs-stress.cpio" \
        -append "$append" -nic none \
        -monitor "unix:$mon,server=on,wait=off" -serial stdio \
        </dev/null >"$slog" 2>&1 &
qpid=$!
# Watch the console: a run that ended gets a minute to power off; a console
# silent for $silence s before that is a hung guest, shown and stopped.
python3 - "$slog" "$mon" "$silence" "$boot/System.map-stress$sfx" "$boot/hang-stress$sfx.txt" "$qpid" <<'PY' || true
import bisect, os, re, socket, sys, time

log, mon, silence, sysmap, out, qpid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])


def alive():
    try:
        os.kill(qpid, 0)
        return True
    except OSError:
        return False


def monitor(cmd):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(mon)
    data = b""
    s.sendall(cmd.encode() + b"\n")
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    s.close()
    return data.decode(errors="replace").replace("\r", "")


def stop():
    try:
        monitor("quit")
    except OSError:
        pass            # timeout(1) ends it after all


def names(text):
    syms = []
    for l in open(sysmap):
        a, t, n = l.split()[:3]
        if t in "tTwW":
            syms.append((int(a, 16), n))
    syms.sort()
    addrs = [a for a, _ in syms]
    res = []
    for m in re.finditer(r"RIP=([0-9a-f]{16})", text):
        ip = int(m.group(1), 16)
        i = bisect.bisect_right(addrs, ip) - 1
        res.append("RIP %016x %s" % (ip, "%s+0x%x" % (syms[i][1], ip - syms[i][0]) if i >= 0 else "?"))
    return res


last_size, last_change, done_at = -1, time.monotonic(), None
while alive():
    time.sleep(5)
    size = os.path.getsize(log) if os.path.exists(log) else 0
    now = time.monotonic()
    if size != last_size:
        last_size, last_change = size, now
    if done_at is None and b"STRESS done" in open(log, "rb").read():
        done_at = now
    if done_at is not None and now - done_at > 60:
        print("the run ended but the guest did not power off: stopped")
        stop()
        break
    if done_at is None and now - last_change > silence:
        try:
            regs = monitor("info registers -a")
            named = names(regs)
            with open(out, "w") as f:
                f.write("\n".join(named) + "\n\n" + regs)
            print("the console was silent for %d s: the vCPUs were at" % silence)
            print("\n".join("  " + n for n in named))
            print("(registers in %s)" % out)
        except OSError as e:
            print("the console was silent for %d s; the monitor did not answer: %s" % (silence, e))
        stop()
        break
PY
wait "$qpid" || true
tr -d '\r' < "$slog" | sed 's/\x1b\[[0-9;]*m//g' > "$slog.txt"
echo "the guest ran $(($(date +%s) - t0)) s (log $slog.txt)"

python3 - "$slog.txt" "$branch$sfx" <<'PY'
import re, sys

path, branch = sys.argv[1], sys.argv[2]
# boot-stress writes through the kernel log: the printk time stamp apart.
stamp = re.compile(r"^\[\s*(\d+\.\d+)\]\s?")
raw = open(path, errors="replace").read().splitlines()
lines = [stamp.sub("", l) for l in raw]
# (kernel time, writes so far) of each report, to see that the run went on.
marks = []
for l in raw:
    m = stamp.match(l)
    w = re.search(r"^STRESS (?:progress|summary) .*\bwrites=(\d+)", stamp.sub("", l))
    if m and w:
        marks.append((float(m.group(1)), int(w.group(1))))
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
for (t0, w0), (t1, w1) in zip(marks, marks[1:]):
    if t1 - t0 >= 20 and w1 - w0 < t1 - t0:
        fail("the run stalled: %d writes from %.0f s to %.0f s (kernel time), under one a second" % (w1 - w0, t0, t1))
        break
lockdep = next((l.split("=")[1] for l in lines if l.startswith("STRESS lockdep debug_locks=")), None)
if lockdep != "1":
    fail("lockdep is not on at the end of the run (debug_locks=%s)" % lockdep)
for l in lines:
    if l.startswith(("STRESS begin", "STRESS summary", "STRESS interrupts", "STRESS lockdep", "STRESS write-error",
                     "STRESS error")):
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
