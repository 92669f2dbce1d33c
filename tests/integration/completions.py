#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The shell completions of bwgovctl (shell-completion/), each driven in its
shell against the real bwgovd on a static fixture tree:

  * bash and zsh interactively, in tmux: a command line is typed, Tab
    pressed, and the line read back from the pane once the shell has
    completed it;
  * fish through its own "complete -C", the completion file found on
    $fish_complete_path as fish finds an installed one.

Each shell completes a command ("stat" -> status), an option ("--no-l" ->
--no-legend), a unit name asked from the running daemon, both on the socket
given with --socket= and on $BWGOV_SOCKET's, and top's --order= values. No
root; skips (77) when tmux, bash-completion, zsh or fish is missing.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import varlink_common as vc  # noqa: E402

COMPLETIONS = os.path.join(vc.SOURCE_ROOT, "shell-completion")
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"


def need_tools():
    for tool, package in (("tmux", "tmux"), ("zsh", "zsh"), ("fish", "fish")):
        if not shutil.which(tool):
            vc.skip(f"{tool} is not installed (Debian: apt-get install {package}; scripts/deps.sh lists it)")
    if not os.path.exists(BASH_COMPLETION):
        vc.skip(f"{BASH_COMPLETION} is missing (Debian: apt-get install bash-completion)")


class Shell:
    """An interactive shell in a tmux pane whose prompt is PROMPT."""

    def __init__(self, base, name, argv, env, prompt):
        self.tmux = ["tmux", "-S", os.path.join(base, f"tmux-{name}.socket"), "-f", "/dev/null"]
        self.prompt = prompt
        cmd = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + argv
        subprocess.run(self.tmux + ["new-session", "-d", "-x", "250", "-y", "20", "-s", name] + cmd, check=True)
        self.wait(lambda line: line == prompt.rstrip(), "the first prompt")

    def line(self):
        """The pane's last line that is not empty: the prompt's."""
        out = subprocess.run(self.tmux + ["capture-pane", "-p"], capture_output=True, text=True).stdout
        lines = [l.rstrip() for l in out.splitlines() if l.strip()]
        return lines[-1] if lines else ""

    def wait(self, pred, what, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred(self.line()):
                return True
            time.sleep(0.05)
        raise AssertionError(f"{what}: the line is {self.line()!r}")

    def complete(self, typed, want):
        """Type TYPED, press Tab; the line must become WANT."""
        subprocess.run(self.tmux + ["send-keys", "-l", typed], check=True)
        self.wait(lambda line: line == (self.prompt + typed).rstrip(), f"typing {typed!r}")
        subprocess.run(self.tmux + ["send-keys", "Tab"], check=True)
        self.wait(lambda line: line == (self.prompt + want).rstrip(), f"{typed!r} + Tab should give {want!r}")
        self.clear()

    def run(self, command):
        subprocess.run(self.tmux + ["send-keys", "-l", command], check=True)
        subprocess.run(self.tmux + ["send-keys", "Enter"], check=True)
        self.wait(lambda line: line == self.prompt.rstrip(), f"the prompt after {command!r}")

    def clear(self):
        subprocess.run(self.tmux + ["send-keys", "C-u"], check=True)
        self.wait(lambda line: line == self.prompt.rstrip(), "an empty line after C-u")

    def close(self):
        subprocess.run(self.tmux + ["kill-server"], capture_output=True)


class Completions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for p in (vc.BWGOVD, vc.BWGOVCTL):
            if not os.path.exists(p):
                vc.skip(f"{p} not built")
        cls.daemon = vc.StaticDaemon().start()
        cls.socket = cls.daemon.socket_path
        cls.home = tempfile.mkdtemp(prefix="bwgov-test-completion-")
        # The built bwgovctl first: the completions call "bwgovctl".
        cls.env = {
            "PATH": os.path.dirname(vc.BWGOVCTL) + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": cls.home,
            "TERM": "xterm",
            "LANG": "C.UTF-8",
            # No daemon there: a unit name completes only from a socket given.
            "BWGOV_SOCKET": os.path.join(cls.home, "no-daemon"),
        }

    @classmethod
    def tearDownClass(cls):
        rc = cls.daemon.stop()
        cls.daemon.cleanup()
        shutil.rmtree(cls.home, ignore_errors=True)
        assert rc == 0, f"bwgovd exited with {rc}"

    def cases(self, sh):
        sh.complete("bwgovctl stat", "bwgovctl status ")
        sh.complete("bwgovctl history --no-l", "bwgovctl history --no-legend ")
        sh.complete("bwgovctl top --order=thr", "bwgovctl top --order=throttled ")
        # The unit names come from the daemon: on the socket given ...
        sh.complete(f"bwgovctl show --socket={self.socket} d", f"bwgovctl show --socket={self.socket} db.slice ")
        # ... else on $BWGOV_SOCKET's.
        sh.complete("bwgovctl explain we", "bwgovctl explain we")
        sh.run(f"export BWGOV_SOCKET={self.socket}")
        sh.complete("bwgovctl explain we", "bwgovctl explain web.slice ")

    def test_bash(self):
        rc = os.path.join(self.home, "bashrc")
        with open(rc, "w") as f:
            f.write(f"PS1='$ '\n. {BASH_COMPLETION}\n. {COMPLETIONS}/bash/bwgovctl\n")
        sh = Shell(self.home, "bash", ["bash", "--noprofile", "--rcfile", rc, "-i"], self.env, "$ ")
        try:
            self.cases(sh)
        finally:
            sh.close()

    def test_zsh(self):
        zdot = os.path.join(self.home, "zdot")
        os.makedirs(zdot, exist_ok=True)
        with open(os.path.join(zdot, ".zshrc"), "w") as f:
            f.write(f"fpath=({COMPLETIONS}/zsh $fpath)\nautoload -Uz compinit && compinit -u -D\nPS1='%% '\n")
        sh = Shell(self.home, "zsh", ["zsh", "-i"], dict(self.env, ZDOTDIR=zdot), "% ")
        try:
            self.cases(sh)
        finally:
            sh.close()

    def fish(self, line, socket=None):
        """fish's completions of LINE: the candidates, without descriptions."""
        env = dict(self.env, **({"BWGOV_SOCKET": socket} if socket else {}))
        script = (f"set -p fish_complete_path {COMPLETIONS}/fish; "
                  f"complete -C {subprocess.list2cmdline([line])}")
        p = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return sorted(l.split("\t")[0] for l in p.stdout.splitlines() if l)

    def test_fish(self):
        self.assertEqual(self.fish("bwgovctl stat"), ["status"])
        self.assertEqual(self.fish("bwgovctl history --no-l"), ["--no-legend"])
        self.assertEqual(self.fish("bwgovctl top --order=thr"), ["--order=throttled"])
        self.assertEqual(self.fish(f"bwgovctl show --socket={self.socket} "),
                         ["app.slice", "db.slice", "gone.slice", "web.slice"])
        self.assertEqual(self.fish("bwgovctl explain we"), [])
        self.assertEqual(self.fish("bwgovctl explain we", socket=self.socket), ["web.slice"])


if __name__ == "__main__":
    need_tools()
    unittest.main(verbosity=2)
