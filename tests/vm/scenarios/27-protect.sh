#!/bin/bash
# Latency protection under systemd on cgroup v2: a Class=latency slice with a
# service that wakes every millisecond and a Class=best-effort slice with a
# CPU hog. The hog starts beside the running service: the best-effort slice
# is in cpu.idle within $first_s s (the neighbours' demand sets the top rung
# at once, issue 35; TCG's margin), the rung stays put while the hog runs
# ($steady_s s: at most two changes after the first second, by bwgovd's
# journal), and every lever is back within 10 s of the hog's end. Then
# bwgovd climbs its ladder (the latency slice's cpu.weight raised,
# the best-effort slice in cpu.idle; the EEVDF slice rung from 6.12, none on
# 6.1), explain says so;
# pause and resume, a SIGKILL (ExecStopPost=bwgovd --restore puts back what
# the dead one held, then systemd restarts it), unconfigure, and stop each
# put cpu.weight and cpu.idle back exactly.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "${BWGOV_VM_LIB:?}"

svc=bwgovd.service
lat=bwgovlp-lat.slice
be=bwgovlp-be.slice
latload=bwgovlp-lat.service
beload=bwgovlp-be.service
weight0=137
first_s=3
steady_s=10
# Under TCG the waking service alone waits 2 to 7 ms at p99 (the journal's
# "run-queue wait p99 7.3ms" with no neighbour): with a 1 ms target the
# ladder climbed on its own load, and "released" raced with that climb. The
# neighbours' floor, which the checks below follow, needs no miss.
target=20ms

cleanup() {
        systemctl start "$svc" 2>/dev/null
        rm -rf "/etc/bwgov/$lat.d" "/etc/bwgov/$be.d"
        systemctl reload "$svc" 2>/dev/null
        for u in "$latload" "$beload"; do
                systemctl stop "$u" 2>/dev/null
                systemctl reset-failed "$u" 2>/dev/null
        done
        systemctl stop "$lat" "$be" 2>/dev/null
        rm -f "/etc/systemd/system/$lat" "/etc/systemd/system/$be"
        systemctl daemon-reload
}

start_lat() {
        systemd-run --quiet --unit="$latload" --slice="$lat" sh -c 'while :; do sleep 0.001; done'
}

start_be() {
        systemd-run --quiet --unit="$beload" --slice="$be" stress-ng --cpu 4 --timeout 600
}

start_load() {
        start_lat && start_be
}

stop_load() {
        systemctl stop "$latload" "$beload"
        systemctl reset-failed "$latload" "$beload" 2>/dev/null
        true
}

level_is() {
        bwgovctl explain "$lat" --json | jq -e --arg l "$1" '.protection.level == $l'
}

restored() {
        printf 'cpu.weight %s (want %s), cpu.idle %s\n' "$(cat "$latcg/cpu.weight")" "$weight0" \
                "$(cat "$becg/cpu.idle")"
        [[ $(cat "$latcg/cpu.weight") == "$weight0" && $(cat "$becg/cpu.idle") == 0 ]]
}

held() {
        printf 'cpu.weight %s, cpu.idle %s\n' "$(cat "$latcg/cpu.weight")" "$(cat "$becg/cpu.idle")"
        (($(cat "$latcg/cpu.weight") > weight0)) && [[ $(cat "$becg/cpu.idle") == 1 ]]
}

check "bwgovd is running" systemctl start "$svc" || fail_with_journal "$svc"
# Its own thread reserves itself a share of a CPU (SCHED_DEADLINE, policy 6)
# under the unit's sandbox once its units are adopted, so that its samples
# run on time beside the hog.
own_deadline() {
        local p
        p=$(awk -F: '$1 ~ /^policy/ { gsub(/ /, "", $2); print $2 }' "/proc/$(systemctl show -P MainPID "$svc")/sched")
        printf 'policy %s\n' "$p"
        [[ $p == 6 ]]
}
check "bwgovd runs SCHED_DEADLINE" wait_for 10 own_deadline || fail_with_journal "$svc" 20
# CPUWeight= gives the slice the odd weight bwgovd must give back.
printf '[Slice]\nCPUWeight=%s\n' "$weight0" >"/etc/systemd/system/$lat"
printf '[Slice]\n' >"/etc/systemd/system/$be"
check "systemctl daemon-reload" systemctl daemon-reload
check "start the slices" systemctl start "$lat" "$be"
latcg=$(unit_cgroup "$lat")
becg=$(unit_cgroup "$be")
check_eq "the latency slice has CPUWeight=$weight0" "$weight0" cat "$latcg/cpu.weight"
mkdir -p "/etc/bwgov/$lat.d" "/etc/bwgov/$be.d"
printf '[Bandwidth]\nLatencyTarget=%s\n' "$target" >"/etc/bwgov/$lat.d/10-test.conf"
printf '[Bandwidth]\nClass=best-effort\n' >"/etc/bwgov/$be.d/10-test.conf"
check "systemctl reload bwgovd" systemctl reload "$svc" || fail_with_journal "$svc"
check "start a waking service in $lat" start_lat
check "governed without a neighbour: no lever" wait_for 30 level_is none || fail_with_journal "$svc" 40
be_idle() {
        [[ $(cat "$becg/cpu.idle") == 1 ]]
}
# The latency slice's CPU use (usec), the host's busy and total jiffies.
use_now() {
        printf '%s %s\n' "$(awk '$1 == "usage_usec" { print $2 }' "$latcg/cpu.stat")" \
                "$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat)"
}
# The latency slice's own use and the host's busy share since use_now.
use_since() {
        local u0 b0 t0 u b t
        read -r u0 b0 t0 <<<"$1"
        read -r u b t <<<"$(use_now)"
        awk -v du=$((u - u0)) -v db=$((b - b0)) -v dt=$((t - t0)) -v n="$(nproc)" 'BEGIN {
                s = dt / n / 100; if (s <= 0) s = 1
                printf "latency slice %.2f CPUs, host %.0f %% busy (%.1f s)", du / 1e6 / s, 100 * db / (dt ? dt : 1), s }'
}
# The lines bwgovd logs when the latency slice's rung changes.
moves() {
        unit_log_since "$1" "$svc" | grep -c "^$lat: .*protection .* to \""
}
cursor0=$(journal_cursor)
t0=$EPOCHREALTIME
check "start a CPU hog in $be" start_be
check "the best-effort slice is in cpu.idle within ${first_s}s of the hog's start" wait_for "$first_s" be_idle ||
        fail_with_journal "$svc" 40
t=${EPOCHREALTIME/./}
info "cpu.idle after $(((t - ${t0/./}) / 1000)) ms"
sleep 1
cursor1=$(journal_cursor)
u0=$(use_now)
sleep "$steady_s"
info "over the steady hog: $(use_since "$u0")"
steady() {
        local n
        n=$(moves "$cursor1")
        printf 'rung changes: %s in the first second, %s in the %ss after\n' "$(($(moves "$cursor0") - n))" "$n" \
                "$steady_s"
        ((n <= 2)) && be_idle && level_is idle >/dev/null
}
check "a steady hog for ${steady_s}s: at most two rung changes after the first second, still at idle" steady ||
        fail_with_journal "$svc" 40
check "stop the hog" systemctl stop "$beload"
u1=$(use_now)
systemctl reset-failed "$beload" 2>/dev/null
t1=$SECONDS
released() {
        [[ $(cat "$latcg/cpu.weight") == "$weight0" && $(cat "$becg/cpu.idle") == 0 ]] && level_is none >/dev/null
}
if ! check "the hog gone: every lever back within 10 s" wait_for 10 released; then
        fail_with_journal "$svc" 20
        # Failed already: what follows starts from released, not from a
        # release still under way.
        wait_for 30 released >/dev/null
fi
info "released after $((SECONDS - t1)) s"
info "over the release: $(use_since "$u1")"
check "the hog again" start_be

check "the latency slice climbs to the top rung (idle)" wait_for 60 level_is idle || fail_with_journal "$svc" 80
check "its cpu.weight is raised and the best-effort slice is in cpu.idle" held
explained() {
        local out
        out=$(bwgovctl explain "$lat")
        printf '%s\n' "$out"
        grep -q "Protection: *Class=latency LatencyTarget=$target" <<<"$out" && grep -q 'lever "idle"' <<<"$out" &&
                grep -q 'held: weight=' <<<"$out"
}
check "bwgovctl explain names the lever and why" explained
be_explained() {
        bwgovctl explain "$be" --json | jq -e '.protection.held and .protection.levers.idle == "1"'
}
check "bwgovctl explain: the best-effort slice is held and idle" be_explained
no_slice() {
        bwgovctl explain "$lat" --json | jq -e '.protection.slice_usec == null'
}
# se.slice (ns) of the waking service's shell, as the scheduler holds it.
se_slice() {
        awk '$1 == "se.slice" { print $3 }' "/proc/$(systemctl show -P MainPID "$latload")/sched"
}
slice_held() {
        local usec se
        usec=$(bwgovctl explain "$lat" --json | jq -r '.protection.slice_usec')
        se=$(se_slice)
        printf 'explain slice_usec %s, se.slice %s ns\n' "$usec" "$se"
        [[ $usec =~ ^[0-9]+$ && $se =~ ^[0-9]+$ ]] && ((usec > 0 && se == usec * 1000))
}
slice_usec=""
read -r kmaj kmin _ <<<"$(uname -r | tr '.-' '  ')"
if ((kmaj > 6 || (kmaj == 6 && kmin >= 12))); then
        # sched_attr.sched_runtime is a fair task's slice request from 6.12.
        check "the EEVDF slice rung on $(uname -r): the latency service runs with the short slice" \
                wait_for 10 slice_held
        slice_usec=$(bwgovctl explain "$lat" --json | jq -r '.protection.slice_usec')
else
        check "no EEVDF slice rung on this kernel ($(uname -r))" no_slice
fi

check "bwgovctl pause $lat" bwgovctl pause "$lat"
check "paused: cpu.weight and cpu.idle back" wait_for 5 restored
if [[ -n $slice_usec ]]; then
        slice_back() {
                local se
                se=$(se_slice)
                printf 'se.slice %s ns (held: %s us)\n' "$se" "$slice_usec"
                [[ $se =~ ^[0-9]+$ ]] && ((se != slice_usec * 1000))
        }
        check "paused: the service's slice is back to the default" wait_for 5 slice_back
fi
check "bwgovctl resume $lat" bwgovctl resume "$lat"
check "resumed: at the top rung again" wait_for 60 level_is idle

pid=$(systemctl show -P MainPID "$svc")
c=$(journal_cursor)
check "systemctl kill -s KILL bwgovd while it holds the levers" systemctl kill --signal=SIGKILL "$svc"
# ExecStopPost= (bwgovd --restore) puts back what the dead one held before
# systemd starts it again (issue 30; 55-crash-loop.sh).
put_back() {
        unit_log_since "$c" "$svc" | grep -E 'cpu\.idle 1 -> 0 \(restore\)' &&
                unit_log_since "$c" "$svc" | grep -E 'cpu\.weight [0-9]+ -> '"$weight0"' \(restore\)'
}
check "ExecStopPost= put back cpu.idle and cpu.weight after the kill" wait_for 20 put_back ||
        fail_with_journal "$svc" 80
check "stop the load" stop_load
restarted() {
        local now
        now=$(systemctl show -P MainPID "$svc")
        [[ -n $now && $now != 0 && $now != "$pid" ]] && systemctl is-active --quiet "$svc"
}
check "systemd restarts bwgovd" wait_for 20 restarted || fail_with_journal "$svc"
check "nothing held after the restart" wait_for 20 restored || fail_with_journal "$svc" 80
no_levers() {
        ! saved_state | grep -q '"levers"'
}
check "the saved state forgets the restored levers" wait_for 20 no_levers

check "start the load again" start_load
check "with the load: at the top rung" wait_for 60 level_is idle
rm -rf "/etc/bwgov/$be.d"
check "reload without the best-effort slice's drop-in" systemctl reload "$svc"
be_back() {
        [[ $(cat "$becg/cpu.idle") == 0 ]]
}
check "unconfigured: the best-effort slice out of cpu.idle" wait_for 10 be_back

check "systemctl stop bwgovd while it holds the weight" systemctl stop "$svc"
check_eq "stopped: the latency slice's cpu.weight is back" "$weight0" cat "$latcg/cpu.weight"
stop_load
cleanup
