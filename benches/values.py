"""Typed values in large binaries: the first `state.locals()` of a deep frame and the first
look-up of a global struct, scry against gdb's `info locals` / `print` at the same stop.

benches/run imports this module (`values_section`). The binaries are the start-up benchmark's
generated C++ programs (their object files, shared) linked with one more unit, values_unit.cpp:
a global struct `vb::config`, and `vb::chain`, which recurses 20 deep with std::vector,
std::string and std::map locals before it calls `vb::leaf`.
"""
import os
import re
import statistics
import subprocess
import time
from pathlib import Path

VALUES_UNIT = r"""
#include <map>
#include <string>
#include <vector>
namespace vb {
struct Config {
  int id;
  const char *name;
  double ratio;
  int levels[4];
  std::string label;
  std::vector<int> sizes;
};
Config config = {7, "bench", 0.25, {1, 2, 3, 4}, "label", {5, 6}};
__attribute__((noinline)) int leaf(int x) { volatile int y = x; return y; }
int chain(int depth, int x) {
  std::vector<int> v(depth + 1, x);
  std::string s = "d" + std::to_string(depth);
  std::map<std::string, int> m;
  m[s] = depth;
  if (depth == 0) return leaf(x + (int)m.size());
  return chain(depth - 1, x + (int)v.size()) + (int)s.size();
}
}  // namespace vb
int values_entry(int x) { return vb::chain(20, x) + vb::config.id; }
"""

# The frame asked for: vb::leaf is #0, vb::chain(0) #1, ... so #15 is chain(depth 14).
DEEP_FRAME = 15
STOP = "vb::leaf"
GLOBAL = "vb::config"

GDB_SCRIPT = r"""
import os, time, gdb
def run(c): return gdb.execute(c, to_string=True)
for s in ("pagination off", "confirm off", "width 0", "height 0", "startup-with-shell off"):
    try: run("set " + s)
    except gdb.error: pass
run("file " + os.environ["BENCH_PROG"])
gdb.Breakpoint(os.environ["BENCH_STOP"], internal=True)
run("run")
mode = os.environ["BENCH_MODE"]
if mode == "locals":
    run("frame " + os.environ["BENCH_FRAME"])
    t0 = time.perf_counter(); out = run("info locals"); t1 = time.perf_counter()
else:
    t0 = time.perf_counter(); out = run("print " + os.environ["BENCH_GLOBAL"]); t1 = time.perf_counter()
hwm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
print("RESULT seconds=%.6f bytes=%d hwm_kb=%s" % (t1 - t0, len(out), hwm), flush=True)
print("OUTPUT " + out.replace("\n", "\\n")[:400], flush=True)
"""


def build(objs, entries, out_dir, log, sh):
    """Links a start-up binary's objects (`objs`; `entries` are their entry functions, its
    own main left out) with values_unit.cpp and a main that calls them all; returns the
    binary."""
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / "big_values"
    stamp = out_dir / "stamp"
    shape = f"v1 {len(objs)} " + " ".join(str(o) for o in objs)
    newest = max((o.stat().st_mtime for o in objs), default=0)
    if binary.exists() and stamp.exists() and stamp.read_text() == shape and binary.stat().st_mtime >= newest:
        return binary
    unit = out_dir / "values_unit.cpp"
    unit.write_text(VALUES_UNIT)
    decls = "\n".join(f"int {e}(int);" for e in entries)
    calls = "\n".join(f"  total += {e}(argc);" for e in entries)
    main = out_dir / "main_values.cpp"
    main.write_text(f"#include <cstdio>\n{decls}\nint values_entry(int);\nint main(int argc, char**) {{\n"
                    f"  long total = values_entry(argc);\n{calls}\n  std::printf(\"%ld\\n\", total);\n"
                    f"  return 0;\n}}\n")
    log(f"linking {binary} ({len(objs)} objects + values_unit.cpp)...")
    for src in (unit, main):
        r = sh(["g++", "-g", "-O0", "-c", "-o", str(src.with_suffix(".o")), str(src)], timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"compiling {src} failed:\n{r.stderr[-2000:]}")
    # values_unit in the middle of the link, so no look-up finds it first by luck.
    half = len(objs) // 2
    link = [str(o) for o in objs[:half]] + [str(unit.with_suffix(".o"))] + [str(o) for o in objs[half:]]
    r = sh(["g++", "-g", "-o", str(binary)] + link + [str(main.with_suffix(".o"))], timeout=1200)
    if r.returncode != 0:
        raise RuntimeError(f"linking {binary} failed:\n{r.stderr[-2000:]}")
    stamp.write_text(shape)
    return binary


def hwm_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def scry_once(scry_cls, binary, mode):
    """One fresh scry: stop at vb::leaf, then time the first locals() of the deep frame or
    the first look-up of the global. Returns (seconds, output bytes, peak RSS KiB, whole
    seconds from launch to the answer)."""
    t_launch = time.perf_counter()
    with scry_cls([str(binary)]) as s:
        body, _ = s.must(f"breakpoint.set('{STOP}'); cont()", timeout=300)
        if "breakpoint 1" not in body:
            raise RuntimeError(f"scry did not stop at {STOP}: {body.strip()}")
        code = f"state.locals({DEEP_FRAME})" if mode == "locals" else f"state.var('{GLOBAL}')"
        out, secs = s.must(code, timeout=300)
        whole = time.perf_counter() - t_launch
        if mode == "locals" and "std::" not in out and "v\t" not in out:
            raise RuntimeError(f"scry locals: {out[:400]}")
        if mode == "print" and "label" not in out:
            raise RuntimeError(f"scry print: {out[:400]}")
        rss = hwm_kb(s.proc.pid)
    return secs, len(out), rss, whole, out


def gdb_once(gdb, binary, mode, timeout=600):
    env = dict(os.environ, BENCH_MODE=mode, BENCH_PROG=str(binary), BENCH_STOP=STOP,
               BENCH_FRAME=str(DEEP_FRAME), BENCH_GLOBAL=GLOBAL)
    script = Path(os.environ.get("TMPDIR", "/tmp")) / f"scry_gdb_values_{os.getpid()}.py"
    script.write_text(GDB_SCRIPT)
    t0 = time.perf_counter()
    try:
        r = subprocess.run([gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off", "-x", str(script)],
                           env=env, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    finally:
        script.unlink(missing_ok=True)
    whole = time.perf_counter() - t0
    m = re.search(r"^RESULT seconds=(\S+) bytes=(\d+) hwm_kb=(\d+)", r.stdout, re.M)
    if not m:
        raise RuntimeError(f"gdb {mode} failed:\n{r.stdout[-1500:]}{r.stderr[-800:]}")
    out = re.search(r"^OUTPUT (.*)$", r.stdout, re.M)
    return float(m.group(1)), int(m.group(2)), int(m.group(3)), whole, out.group(1) if out else ""


def values_section(binaries, runs, scry_cls, gdb, table, ratio, errors, log):
    """Prints the section for each (label, binary)."""
    for label, binary in binaries:
        size_mb = binary.stat().st_size / 2**20
        print(f"## Typed values: {label}, {size_mb:.0f} MB ({binary.name})")
        print()
        res = {}
        for mode in ("locals", "print"):
            for tool in ("scry", "gdb"):
                res[(mode, tool)] = []
        for r in range(runs):
            for mode in ("locals", "print"):
                for tool in ("scry", "gdb"):
                    if tool == "gdb" and not gdb:
                        continue
                    try:
                        if tool == "scry":
                            x = scry_once(scry_cls, binary, mode)
                        else:
                            x = gdb_once(gdb, binary, mode)
                        res[(mode, tool)].append(x)
                    except Exception as e:  # noqa: BLE001 (any failure is reported, not fatal)
                        errors.append(f"values {label} {mode} {tool} run {r + 1}: {e}")
                        log(f"error: values {mode} {tool}: {e}")

        def med(mode, tool, i):
            xs = res[(mode, tool)]
            return statistics.median(x[i] for x in xs) if xs else None

        rows = []
        for mode, what in (("locals", f"first locals() of frame #{DEEP_FRAME} at {STOP}"),
                           ("print", f"first look-up and print of {GLOBAL}")):
            s, g = med(mode, "scry", 0), med(mode, "gdb", 0)
            sw, gw = med(mode, "scry", 3), med(mode, "gdb", 3)
            sm, gm = med(mode, "scry", 2), med(mode, "gdb", 2)
            fmt = lambda v, k=1: f"{v * k:.3f}" if v is not None else "n/a"
            rows.append([what, fmt(s), fmt(g), ratio(s, g), fmt(sw), fmt(gw), ratio(sw, gw),
                         f"{sm / 1024:.0f}" if sm else "n/a", f"{gm / 1024:.0f}" if gm else "n/a", ratio(sm, gm)])
        print(table(["workload", "scry s", "gdb s", "scry/gdb", "scry whole s", "gdb whole s", "scry/gdb whole",
                     "scry MB", "gdb MB", "scry/gdb mem"], rows))
        for mode in ("locals", "print"):
            for tool in ("scry", "gdb"):
                xs = res[(mode, tool)]
                if xs:
                    print(f"  {mode} {tool} per run (s): " + " ".join(f"{x[0]:.3f}" for x in xs)
                          + f"; output {xs[0][1]} bytes")
        print("(command: the chunk or gdb command alone, at the stop; whole: launch to the answer, the stop "
              "included; MB: peak RSS of the tool's process over the whole run)")
        for mode in ("locals", "print"):
            for tool in ("scry", "gdb"):
                xs = res[(mode, tool)]
                if xs:
                    print(f"  {tool} {mode}: {xs[0][4][:300]!r}")
        print(flush=True)
