# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for bwgovctl(1): commands, their options and option values;
# unit names are asked from the daemon (bwgovctl status --all --no-legend, on
# the socket the command line or $BWGOV_SOCKET names), so they complete for
# root and the group bwgov while bwgovd runs, and to nothing otherwise.

function __bwgovctl_units
    set -l socket
    set -l words (commandline -opc)
    for i in (seq (count $words))
        switch $words[$i]
            case '--socket=*'
                set socket (string replace -- --socket= '' $words[$i])
            case --socket
                set -l next (math $i + 1)
                set -q words[$next]; and set socket $words[$next]
        end
    end
    set -q socket[1]; and set socket --socket=$socket
    bwgovctl status --all --no-legend $socket 2>/dev/null | string replace -r -- '\s.*' ''
end

set -l verbs status show explain history latency top reload pause resume check-kernel
set -l unit_verbs show explain history latency pause resume

complete -c bwgovctl -f
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -s h -l help -d 'Show the help'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -l version -d 'Show the version'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a status -d 'Show the daemon and every configured unit'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a show -d 'Show one unit in detail'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a explain -d 'Explain the latest decision for a unit'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a history -d 'Show the decisions recorded for a unit'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a latency -d "Show a unit's run-queue waits"
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a top -d 'Show the governed units live, sorted'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a reload -d 'Reload the configuration (root)'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a pause -d 'Stop governing a unit (root)'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a resume -d 'Govern a paused unit again (root)'
complete -c bwgovctl -n "not __fish_seen_subcommand_from $verbs" -a check-kernel -d 'Check the kernel against the patch-set manifest'

# Every command: --socket, --help.
complete -c bwgovctl -l socket -r -F -d "The daemon's socket"
complete -c bwgovctl -n "__fish_seen_subcommand_from $verbs" -s h -l help -d 'Show the help of the command'

complete -c bwgovctl -n "__fish_seen_subcommand_from status show explain history latency reload pause resume check-kernel" \
    -l json -d 'Print the result as JSON'
complete -c bwgovctl -n "__fish_seen_subcommand_from status history top" -l no-legend -d 'No column headers and summary lines'
complete -c bwgovctl -n "__fish_seen_subcommand_from status top" -s a -l all -d 'Every unit, not the first 100'
complete -c bwgovctl -n "__fish_seen_subcommand_from history" -s n -l lines -x -d 'Only the newest N entries'
complete -c bwgovctl -n "__fish_seen_subcommand_from $unit_verbs" -a '(__bwgovctl_units)' -d unit

complete -c bwgovctl -n "__fish_seen_subcommand_from top" -s d -l interval -x -d 'Refresh every TIME (500ms, 2, 1min)'
complete -c bwgovctl -n "__fish_seen_subcommand_from top" -s o -l order -x \
    -a 'unit state usage baseline credit empty headroom throttled p99 class rung' -d 'Sort by a column'
complete -c bwgovctl -n "__fish_seen_subcommand_from top" -s r -l reverse -d 'Reverse the order'
complete -c bwgovctl -n "__fish_seen_subcommand_from top" -s b -l batch -d 'Plain tables, one per interval'
complete -c bwgovctl -n "__fish_seen_subcommand_from top" -s n -l iterations -x -d 'Stop after N refreshes'

complete -c bwgovctl -n "__fish_seen_subcommand_from check-kernel" -l manifest -r -F -d 'The manifest to check against'
complete -c bwgovctl -n "__fish_seen_subcommand_from check-kernel" -l probe -d 'Run every behaviour probe (root)'
complete -c bwgovctl -n "__fish_seen_subcommand_from check-kernel" -l no-probe -d 'Run only the load-free probes'
complete -c bwgovctl -n "__fish_seen_subcommand_from check-kernel" -l cgroup-root -x -a '(__fish_complete_directories)' \
    -d 'A directory standing in for /sys/fs/cgroup'
