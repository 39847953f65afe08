# Runs inside gdb (gdb -batch -nx -x gdb_bench.py); the runner passes the work in the
# environment:
#   BENCH_MODE   step-regs | step | bp | watch | views
#   BENCH_COUNT  steps to take (step modes)
#   BENCH_PROG, BENCH_ARGS (space separated)
#   BENCH_SAVE   views: a directory to save each rendering in
# Prints RESULT lines the runner parses; anything else gdb prints is ignored.
import os
import time

import gdb

MODE = os.environ["BENCH_MODE"]
COUNT = int(os.environ.get("BENCH_COUNT", "0"))
PROG = os.environ["BENCH_PROG"]
ARGS = os.environ.get("BENCH_ARGS", "")


def run(cmd):
    return gdb.execute(cmd, to_string=True)


def report(**fields):
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()), flush=True)


def start(stop_at):
    for setting in ("pagination off", "confirm off", "width 0", "height 0",
                    "debuginfod enabled off", "startup-with-shell off"):
        try:
            run("set " + setting)
        except gdb.error:
            pass  # an older gdb without that setting
    run(f"file {PROG}")
    run(f"set args {ARGS}")
    bp = gdb.Breakpoint(stop_at, internal=True)
    run("run")
    bp.delete()


def step_regs():
    start("step_region")
    min_sp = None
    t0 = time.perf_counter()
    for _ in range(COUNT):
        run("stepi")
        sp = int(gdb.parse_and_eval("$sp"))
        if min_sp is None or sp < min_sp:
            min_sp = sp
        int(gdb.parse_and_eval("$pc"))
    t1 = time.perf_counter()
    report(mode=MODE, events=COUNT, seconds=f"{t1 - t0:.6f}", check=min_sp)


def step_plain():
    start("step_region")
    before = int(gdb.parse_and_eval("$pc"))
    t0 = time.perf_counter()
    run(f"stepi {COUNT}")
    t1 = time.perf_counter()
    after = int(gdb.parse_and_eval("$pc"))
    report(mode=MODE, events=COUNT, seconds=f"{t1 - t0:.6f}", check=after - before)


class Logpoint(gdb.Breakpoint):
    """Reads rdi at each hit and lets the program go on."""

    def __init__(self, where):
        super().__init__(where)
        self.seen = 0
        self.total = 0

    def stop(self):
        self.seen += 1
        self.total += int(gdb.selected_frame().read_register("rdi"))
        return False


def breakpoints():
    start("main")
    lp = Logpoint("target_fn")
    t0 = time.perf_counter()
    run("continue")
    t1 = time.perf_counter()
    report(mode=MODE, events=lp.seen, seconds=f"{t1 - t0:.6f}", check=lp.total)


def watches():
    start("main")
    out = run("watch watched")
    hardware = out.lstrip().lower().startswith("hardware watchpoint")
    wp = gdb.breakpoints()[-1]
    run(f"commands {wp.number}\nsilent\ncontinue\nend")
    t0 = time.perf_counter()
    run("continue")
    t1 = time.perf_counter()
    hits = wp.hit_count if wp.is_valid() else -1
    report(mode=MODE, events=hits, seconds=f"{t1 - t0:.6f}", check=int(hardware))


def views():
    # The first instruction of innermost, where scry's breakpoint.set('innermost') stops.
    start("*innermost")
    save = os.environ.get("BENCH_SAVE")
    for name, cmd in (("unwind", "bt"), ("registers", "info registers"),
                      ("disasm", "x/10i $pc"), ("threads", "info threads")):
        text = run(cmd)
        report(view=name, bytes=len(text.encode()), lines=text.count("\n"))
        if save:
            with open(os.path.join(save, f"gdb_{name}.txt"), "w") as f:
                f.write(text)


{"step-regs": step_regs, "step": step_plain, "bp": breakpoints,
 "watch": watches, "views": views}[MODE]()
