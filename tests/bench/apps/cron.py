# SPDX-License-Identifier: LGPL-2.1-or-later
"""A cron job in miniature beside the server (--outside-cron N,SPIN,PERIOD):
every PERIOD seconds, N processes each use SPIN seconds of CPU, in a cgroup
of their own outside the governed one, with the default weight. Started
once for the whole run; each burst is logged as "start wall" (monotonic
seconds), and every run gets the bursts that started within it. It is the
host protection's other side: tasks outside that want the CPU in bursts, as
timers, a backup or a log rotation do, and that wait for each other as much
as for the server. Pure helpers are tested by selftest.py.

  python3 cron.py N SPIN PERIOD LOG      (runs until SIGTERM)"""

import os
import signal
import sys
import time


def parse(text):
    """"N,SPIN,PERIOD" -> (n, spin_s, period_s); raises ValueError."""
    parts = text.split(",")
    try:
        if len(parts) != 3:
            raise ValueError
        n, spin, period = int(parts[0]), float(parts[1]), float(parts[2])
    except ValueError:
        raise ValueError(f"{text!r}: expected N,SPIN,PERIOD (e.g. 8,0.15,4)") from None
    if not 1 <= n <= 64 or not 0 < spin <= 10 or not spin < period <= 600:
        raise ValueError(f"{text!r}: N is 1–64 processes, SPIN 0–10 s of CPU each, PERIOD longer than SPIN")
    return n, spin, period


def read_log(path):
    """[(start, wall)] from the generator's log; a line cut short is skipped."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) == 2:
                    try:
                        out.append((float(fields[0]), float(fields[1])))
                    except ValueError:
                        pass
    except FileNotFoundError:
        pass
    return out


def bursts_in(log, t0, t1):
    """The walls (s) of the bursts that started in [t0, t1)."""
    return [w for t, w in log if t0 <= t < t1]


def _spin(seconds):
    c0 = time.process_time()
    while time.process_time() - c0 < seconds:
        pass


def main(argv):
    n, spin, period = parse(",".join(argv[:3]))
    log = argv[3]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    while not stop:
        t0 = time.monotonic()
        kids = []
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _spin(spin)
                os._exit(0)
            kids.append(pid)
        for pid in kids:
            while True:
                try:
                    os.waitpid(pid, 0)
                    break
                except InterruptedError:
                    continue
        with open(log, "a") as f:
            f.write(f"{t0:.3f} {time.monotonic() - t0:.4f}\n")
        rest = period - (time.monotonic() - t0)
        while rest > 0 and not stop:
            time.sleep(min(rest, 0.1))
            rest = period - (time.monotonic() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
