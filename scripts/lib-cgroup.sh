# SPDX-License-Identifier: LGPL-2.1-or-later
# Shell helpers for scripts/demo and the root tests: create, fill, read and
# remove a bwgov-* cgroup on a v2 or a hybrid host. Sourced, not run.

# Sets BWCG_LAYOUT (v2|hybrid), BWCG_BW (bandwidth root), BWCG_V2 (v2 root or "").
bwcg_detect() {
        local v2="" cpu=""
        while read -r _ _ _ _ mnt _ rest; do
                local fstype=${rest#*- }
                fstype=${fstype%% *}
                local opts=${rest##* }
                case "$fstype" in
                cgroup2) [ -z "$v2" ] && v2=$mnt ;;
                cgroup) case ",$opts," in *,cpu,*) [ -z "$cpu" ] && cpu=$mnt ;; esac ;;
                esac
        done < /proc/self/mountinfo
        if [ -n "$v2" ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
                BWCG_LAYOUT=v2; BWCG_BW=$v2; BWCG_V2=$v2
        elif [ -n "$cpu" ]; then
                BWCG_LAYOUT=hybrid; BWCG_BW=$cpu; BWCG_V2=$v2
        else
                return 1
        fi
}

bwcg_create() {
        local name=$1
        case "$name" in bwgov*) ;; *) echo "refusing to create $name: not a bwgov cgroup" >&2; return 1 ;; esac
        if [ "$BWCG_LAYOUT" = v2 ]; then
                # The cpu controller must be enabled for children of the root.
                grep -qw cpu "$BWCG_V2/cgroup.subtree_control" || echo +cpu > "$BWCG_V2/cgroup.subtree_control"
        fi
        mkdir -p "$BWCG_BW/$name"
        [ -n "$BWCG_V2" ] && [ "$BWCG_V2" != "$BWCG_BW" ] && mkdir -p "$BWCG_V2/$name"
        return 0
}

# bwcg_set NAME QUOTA PERIOD BURST — for setting up the static baseline of a
# cgroup we created (bwgovd does its own writes through src/lib/cgroup/cgroupfs.c).
bwcg_set() {
        local name=$1 quota=$2 period=$3 burst=$4 d="$BWCG_BW/$1"
        if [ "$BWCG_LAYOUT" = v2 ]; then
                [ -f "$d/cpu.max.burst" ] && echo 0 > "$d/cpu.max.burst"
                echo "$quota $period" > "$d/cpu.max"
                [ -f "$d/cpu.max.burst" ] && echo "$burst" > "$d/cpu.max.burst"
        else
                [ -f "$d/cpu.cfs_burst_us" ] && echo 0 > "$d/cpu.cfs_burst_us"
                echo "$period" > "$d/cpu.cfs_period_us"
                echo "$quota" > "$d/cpu.cfs_quota_us"
                [ -f "$d/cpu.cfs_burst_us" ] && echo "$burst" > "$d/cpu.cfs_burst_us"
        fi
        return 0
}

# Prints "QUOTA PERIOD BURST" (QUOTA "max" for unlimited).
bwcg_get() {
        local d="$BWCG_BW/$1" q p b=0
        if [ "$BWCG_LAYOUT" = v2 ]; then
                read -r q p < "$d/cpu.max"
                [ -f "$d/cpu.max.burst" ] && b=$(cat "$d/cpu.max.burst")
        else
                q=$(cat "$d/cpu.cfs_quota_us"); p=$(cat "$d/cpu.cfs_period_us")
                [ "$q" = -1 ] && q=max
                [ -f "$d/cpu.cfs_burst_us" ] && b=$(cat "$d/cpu.cfs_burst_us")
        fi
        echo "$q $p $b"
}

# Prints "nr_periods nr_throttled throttled_usec usage_usec".
bwcg_stat() {
        local name=$1
        awk -v v1="$([ "$BWCG_LAYOUT" = hybrid ] && echo 1 || echo 0)" '
                FNR == NR && $1 == "nr_periods" { np = $2 }
                FNR == NR && $1 == "nr_throttled" { nt = $2 }
                FNR == NR && $1 == "throttled_usec" { tu = $2 }
                FNR == NR && $1 == "throttled_time" { tu = int($2 / 1000) }
                FNR != NR && $1 == "usage_usec" { us = $2 }
                END { printf "%d %d %d %d\n", np, nt, tu, us }
        ' "$BWCG_BW/$name/cpu.stat" "${BWCG_V2:-$BWCG_BW}/$name/cpu.stat"
}

# Runs a command inside the cgroup (both trees on hybrid) in the background;
# its PID is in BWCG_PID.
bwcg_spawn() {
        local name=$1; shift
        (
                echo "$BASHPID" > "$BWCG_BW/$name/cgroup.procs"
                [ -n "$BWCG_V2" ] && [ "$BWCG_V2" != "$BWCG_BW" ] && echo "$BASHPID" > "$BWCG_V2/$name/cgroup.procs"
                exec "$@"
        ) &
        BWCG_PID=$!
}

# Removes the cgroup after moving any leftover task of ours out. Only PIDs
# passed in are killed; anything else found is left and reported.
bwcg_destroy() {
        local name=$1; shift
        local pid
        for pid in "$@"; do
                kill "$pid" 2>/dev/null || true
        done
        for pid in "$@"; do
                wait "$pid" 2>/dev/null || true
        done
        local d
        for d in "$BWCG_BW/$name" "${BWCG_V2:+$BWCG_V2/$name}"; do
                [ -n "$d" ] && [ -d "$d" ] || continue
                rmdir "$d" 2>/dev/null || echo "warning: could not remove $d (tasks left: $(cat "$d/cgroup.procs" | tr '\n' ' '))" >&2
        done
        return 0
}
