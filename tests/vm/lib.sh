# shellcheck shell=bash
# Check library for VM scenarios; sourced inside the guest by every scenario:
#
#   . "${BWGOV_VM_LIB:?}"
#
# Every check writes one line to the results file in the 9p share
# ("TAG<TAB>SCENARIO<TAB>TEXT<TAB>DETAIL") and echoes it to stdout (the serial
# console). DETAIL names a file in the share holding the command, its output and
# any journal excerpt; the host prints it for failed checks.
#
#   check DESC CMD...          run CMD (a command or shell function); PASS if it
#                              exits 0, else FAIL with its output. Returns 0/1.
#   check_eq DESC WANT CMD...  PASS if CMD exits 0 and prints exactly WANT.
#   pass DESC / fail DESC [TEXT]   record a result directly.
#   info TEXT                  record a note (measurements, states); never fails.
#   fail_with_journal UNIT [N] attach the last N (40) journal lines of UNIT to the
#                              most recent check if it failed; otherwise record a
#                              new FAIL carrying the excerpt.
#   wait_for SECONDS CMD...    retry CMD every 0.2 s until it succeeds or SECONDS
#                              pass; returns CMD's last status, prints its last output.
#   unit_cgroup UNIT           print the unit's cgroup directory under /sys/fs/cgroup.
#   journal_cursor             print the cursor of the newest journal entry.
#   journal_since CURSOR [JQ]  print the entries after CURSOR as JSON lines, only
#                              those for which the jq expression JQ is true. Filter
#                              here, not with journalctl matches or -u: systemd 252
#                              skips the first matching entry when --after-cursor
#                              is combined with a filter (systemd#30288).
#   unit_log_since CURSOR UNIT print the messages after CURSOR logged by UNIT's
#                              processes or by systemd about UNIT.
#
# Scenarios run with bash, without `set -e`, so a failed check does not stop the
# scenario: check later steps with `check ... || return`-style guards if they
# depend on an earlier one.

: "${BWGOV_VM_SHARE:=/mnt/share}"
: "${BWGOV_VM_RESULTS:=$BWGOV_VM_SHARE/results}"
: "${BWGOV_VM_SCENARIO:=$(basename "$0" .sh)}"
: "${BWGOV_PAYLOAD:=$BWGOV_VM_SHARE/payload}"
export BWGOV_VM_SHARE BWGOV_VM_RESULTS BWGOV_VM_SCENARIO BWGOV_PAYLOAD

_bwgov_vm_n=0            # details written by this scenario
_bwgov_vm_last=""        # PASS or FAIL of the most recent check
_bwgov_vm_last_detail="" # detail file of the most recent FAIL

mkdir -p "$BWGOV_VM_SHARE/out"

# _bwgov_vm_emit TAG TEXT [DETAIL]
_bwgov_vm_emit() {
        local text=${2//$'\t'/ }
        text=${text//$'\n'/ }
        printf '%s\t%s\t%s\t%s\n' "$1" "$BWGOV_VM_SCENARIO" "$text" "${3:-}" >>"$BWGOV_VM_RESULTS"
        printf 'bwgov-vm: %s %s: %s\n' "$1" "$BWGOV_VM_SCENARIO" "$text"
}

# _bwgov_vm_new_detail: set _bwgov_vm_detail to the share-relative path of a
# fresh detail file.
_bwgov_vm_new_detail() {
        _bwgov_vm_n=$((_bwgov_vm_n + 1))
        _bwgov_vm_detail=$(printf 'out/%s.%d.%d.txt' "$BWGOV_VM_SCENARIO" "$BASHPID" "$_bwgov_vm_n")
}

pass() {
        _bwgov_vm_last=PASS
        _bwgov_vm_emit PASS "$1"
}

fail() {
        local detail
        _bwgov_vm_new_detail
        detail=$_bwgov_vm_detail
        if [[ -n ${2:-} ]]; then
                printf '%s\n' "$2" >"$BWGOV_VM_SHARE/$detail"
        else
                : >"$BWGOV_VM_SHARE/$detail"
        fi
        _bwgov_vm_last=FAIL
        _bwgov_vm_last_detail=$detail
        _bwgov_vm_emit FAIL "$1" "$detail"
        return 1
}

info() {
        _bwgov_vm_emit INFO "$*"
}

check() {
        local desc=$1 tmp detail rc
        shift
        tmp=$(mktemp /run/bwgov-vm-check.XXXXXX)
        if [[ $1 == _bwgov_vm_eq ]]; then
                printf '$%s\n' "$(printf ' %q' "${@:3}")" >"$tmp"
        else
                printf '$%s\n' "$(printf ' %q' "$@")" >"$tmp"
        fi
        "$@" </dev/null >>"$tmp" 2>&1
        rc=$?
        if ((rc == 0)); then
                rm -f "$tmp"
                pass "$desc"
                return 0
        fi
        printf '[exit status %d]\n' "$rc" >>"$tmp"
        _bwgov_vm_new_detail
        detail=$_bwgov_vm_detail
        # Keep the detail readable: the command line plus the last 200 lines.
        { head -n 1 "$tmp"; tail -n +2 "$tmp" | tail -n 200; } >"$BWGOV_VM_SHARE/$detail"
        rm -f "$tmp"
        _bwgov_vm_last=FAIL
        _bwgov_vm_last_detail=$detail
        _bwgov_vm_emit FAIL "$desc" "$detail"
        return 1
}

_bwgov_vm_eq() {
        local want=$1 got rc
        shift
        got=$("$@")
        rc=$?
        printf 'expected: %s\ngot:      %s\n' "$want" "$got"
        ((rc == 0)) && [[ $got == "$want" ]]
}

check_eq() {
        local desc=$1 want=$2
        shift 2
        check "$desc" _bwgov_vm_eq "$want" "$@"
}

fail_with_journal() {
        local unit=$1 lines=${2:-40}
        if [[ $_bwgov_vm_last != FAIL ]]; then
                fail "$unit: failure, see journal" "" || true
        fi
        {
                printf -- '--- journalctl -b -u %s (last %s lines)\n' "$unit" "$lines"
                journalctl -b -u "$unit" -n "$lines" --no-pager -o short-monotonic 2>&1
        } >>"$BWGOV_VM_SHARE/$_bwgov_vm_last_detail"
        return 1
}

wait_for() {
        local timeout_sec=$1 deadline out rc
        shift
        deadline=$((SECONDS + timeout_sec))
        while :; do
                out=$("$@" 2>&1)
                rc=$?
                if ((rc == 0 || SECONDS >= deadline)); then
                        break
                fi
                sleep 0.2
        done
        [[ -z $out ]] || printf '%s\n' "$out"
        ((rc == 0)) || printf 'wait_for: still failing after %ss\n' "$timeout_sec"
        return "$rc"
}

unit_cgroup() {
        local cg
        cg=$(systemctl show -P ControlGroup "$1") || return
        [[ -n $cg ]] || {
                printf 'unit_cgroup: %s has no cgroup\n' "$1" >&2
                return 1
        }
        printf '/sys/fs/cgroup%s\n' "$cg"
}

journal_cursor() {
        journalctl -n 1 -o json --output-fields=__CURSOR --no-pager | jq -r .__CURSOR
}

journal_since() {
        journalctl --after-cursor="$1" -o json --no-pager | jq -c "select(${2:-true})"
}

# jq 1.6 (Debian 12) exits 0 under -e when it reads no input at all, so a
# failing `bwgovctl ... --json | jq -e FILTER` (or an empty file) would pass.
# With -e, no input (only white space, from standard input or from every
# file named) is a failure here. Exported for the scenarios' `bash -c` checks.
jq() {
        local a skip=0 positional=0 exit_status=0 in f files=()
        for a in "$@"; do
                if ((skip > 0)); then
                        skip=$((skip - 1))
                        continue
                fi
                case $a in
                -e | --exit-status) exit_status=1 ;;
                --arg | --argjson | --slurpfile | --rawfile) skip=2 ;;
                -f | --from-file | -L | --indent) skip=1 ;;
                -*) ;;
                *)
                        positional=$((positional + 1))
                        ((positional == 1)) || files+=("$a")
                        ;;
                esac
        done
        ((exit_status)) || { command jq "$@"; return; }
        if ((${#files[@]} > 0)); then
                in=""
                for f in "${files[@]}"; do
                        [[ -r $f ]] && in+=$(<"$f")
                done
        else
                in=$(cat)
        fi
        if [[ -z ${in//[[:space:]]/} ]]; then
                echo "jq: no input" >&2
                return 1
        fi
        if ((${#files[@]} > 0)); then
                command jq "$@"
        else
                command jq "$@" <<<"$in"
        fi
}
export -f jq

# journal_usec CURSOR JQ-FILTER: the monotonic time (µs) of the first journal
# entry since CURSOR that matches the filter.
journal_usec() {
        journal_since "$1" "$2" | jq -r .__MONOTONIC_TIMESTAMP | head -n 1
}

# governed_after CURSOR UNIT: the seconds from systemd's start of UNIT (its
# "Started" entry, SD_MESSAGE_UNIT_STARTED) to bwgovd's "UNIT: governing
# cgroup" entry, both in the journal since CURSOR: what bwgovd took, without
# the time the guest's commands take to run and to poll under TCG.
governed_after() {
        local t0 t1
        t0=$(journal_usec "$1" "._PID == \"1\" and .UNIT == \"$2\" and
                                .MESSAGE_ID == \"39f53479d3a045ac8e11786248231fbf\"")
        t1=$(journal_usec "$1" "._SYSTEMD_UNIT == \"bwgovd.service\" and
                                (.MESSAGE | startswith(\"$2: governing cgroup\"))")
        if [[ -z $t0 || -z $t1 ]]; then
                printf 'governed_after: no start (%s) or no governing (%s) entry for %s\n' "$t0" "$t1" "$2" >&2
                return 1
        fi
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'
}

# check_governed_in_time CURSOR UNIT START WHAT: check that bwgovd took UNIT
# within one Interval= (1 s; 0.5 s more for TCG) of systemd starting it, by
# the journal's times (governed_after); START (date +%s.%N) and WHAT say when
# the scenario's own command returned, for the record.
check_governed_in_time() {
        local took gap
        took=$(awk -v a="$3" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
        gap=$(governed_after "$1" "$2")
        info "governed ${gap:-?} s after systemd started $2 (journal); bwgovctl saw it $took s after $4"
        check "... within one Interval= (1 s) of its start, 0.5 s more under TCG (journal times)" \
                awk -v t="$gap" 'BEGIN { exit !(t != "" && t < 1.5) }'
}

unit_log_since() {
        journal_since "$1" "._SYSTEMD_UNIT == \"$2\" or .UNIT == \"$2\"" | jq -r .MESSAGE
}

# The saved state as bwgovd's next start reads it: state.json with the lines
# of state.journal of its generation applied in order, a last line without
# its newline ignored (bwgovd(8), FILES). Printed as one JSON document.
saved_state() {
        local dir=${1:-/var/lib/bwgov}
        if [[ ! -f $dir/state.journal ]]; then
                jq -c . "$dir/state.json"
                return
        fi
        jq -cn --slurpfile s "$dir/state.json" --rawfile j "$dir/state.journal" '
                $s[0] as $st
                | reduce ($j | split("\n") | .[:-1][] | fromjson
                          | select(.generation == ($st.generation // 0))) as $l
                        ($st; .units = ((reduce $l.forget[] as $n (.units; del(.[$n]))) + $l.units))'
}
