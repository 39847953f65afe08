#!/usr/bin/env python3
"""A minimal harness: drive scry's stdin mode with the `;;` framing.

    python3 examples/harness.py ./target/demo/loop [ARGS...]

Finds scry as $SCRY, else target/release or target/debug of this checkout, else on PATH.
"""
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
candidates = [os.environ.get("SCRY"),
              os.path.join(here, "..", "target", "release", "scry"),
              os.path.join(here, "..", "target", "debug", "scry"),
              shutil.which("scry")]
scry = next(c for c in candidates if c and os.path.exists(c))


class Scry:
    def __init__(self, *argv):
        self.p = subprocess.Popen([scry, "--", *argv], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def ask(self, code):
        """One chunk in, (response, ok) out: lines until the status line `;; ok|error`."""
        self.p.stdin.write(code + "\n;;\n")
        self.p.stdin.flush()
        body = []
        while not (line := self.p.stdout.readline()).startswith(";; "):
            if not line:
                raise EOFError("scry ended")
            body.append(line)
        return "".join(body), line.strip() == ";; ok"

    def close(self):
        self.p.stdin.close()  # end of input: a spawned target is killed
        return self.p.wait()


if __name__ == "__main__":
    s = Scry(*(sys.argv[1:] or ["./target/demo/loop"]))
    for chunk in ["breakpoint.set('add')", "cont()", "state.registers.rdi",
                  "addEventListener('breakpoint', e => { print('add', e.state.registers.rsi); return 'continue' })",
                  "cont()", "output()", "oops()"]:
        body, ok = s.ask(chunk)
        print(f">>> {chunk}\n{body}{'ok' if ok else 'ERROR'}")
    print("scry exited with", s.close())
