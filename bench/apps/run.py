"""Run the application benchmarks (k-means, GMM, LSTM, MLP) with runic and with JAX on the
same data, and print one table of times and ratios; or, with --check, compare every
entry's results on small data between runic and JAX.

Run it with a Python that has JAX (see README.md), from anywhere:
  V/bin/python bench/apps/run.py                     # all apps, runic --backend ir
  V/bin/python bench/apps/run.py -r 3 --timeout 300 lstm mlp
  V/bin/python bench/apps/run.py --check             # small data, both backends
  V/bin/python bench/apps/run.py --explain           # what runs native, and why not
"""

import argparse
import collections
import importlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import gen_data
from common import APPS, HERE, read_file, read_values, time_jax

ROOT = os.path.dirname(os.path.dirname(HERE))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("apps", nargs="*", default=APPS, help="apps to run (default: all)")
    ap.add_argument("--runic", default=os.path.join(ROOT, "target", "release", "runic"),
                    help="runic binary (default: target/release/runic)")
    ap.add_argument("--backend", default=None,
                    help="runic backend(s), comma-separated (default: ir; "
                         "with --check: interp,ir)")
    ap.add_argument("-r", "--runs", type=int, default=5,
                    help="runic: minimum measured runs per entry (default 5)")
    ap.add_argument("--min-time", type=float, default=0.0,
                    help="runic: minimum measured seconds per entry (default 0)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="runic: give up on an entry after this many seconds, warm-up "
                         "included (default 600)")
    ap.add_argument("--jax-runs", type=int, default=7,
                    help="JAX: measured runs per entry after a warm-up (at least 5)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat every app's measurements (JAX and runic, all entries) this "
                         "many times, interleaved, and report medians of the per-round "
                         "ratios with their range: the machine's speed drifts, and a ratio "
                         "of two times taken minutes apart drifts with it (default 1)")
    ap.add_argument("--stat", choices=["median", "min", "both"], default="median",
                    help="summarise each entry's calls by their median (default) or their "
                         "minimum: on a machine whose speed switches between two levels "
                         "the minimum compares the calls that ran at the faster one; "
                         "`both` prints a table for each from the same calls")
    ap.add_argument("--no-jax", action="store_true", help="time runic only")
    ap.add_argument("--skip", action="append", default=[], metavar="ENTRY",
                    help="do not time this runic entry (repeatable), e.g. one known to "
                         "take minutes a call")
    ap.add_argument("--check", action="store_true",
                    help="compare every entry with JAX on small data instead of timing")
    ap.add_argument("--explain", action="store_true",
                    help="summarise `runic dev --backend ir --explain-exec` per app: "
                         "which SOACs run native, and why the others do not")
    ap.add_argument("--json", help="also write all measurements to this file")
    args = ap.parse_args()
    for app in args.apps:
        if app not in APPS:
            ap.error("unknown app %r (known: %s)" % (app, ", ".join(APPS)))
    default = "interp,ir" if args.check else "ir"
    args.backends = (args.backend or default).split(",")
    if not os.path.exists(args.runic):
        sys.exit("runic binary %s not found: build it with `cargo build --release -p "
                 "runic-cli` or pass --runic PATH" % args.runic)
    return args


def load_jax():
    """The JAX module with 64-bit types on, or None (with a hint) if it is missing."""
    try:
        from common import jax_setup

        return jax_setup()
    except ImportError:
        print("JAX is not installed in this Python; see bench/apps/README.md "
              "(python3 -m venv V && V/bin/pip install jax jaxlib numpy).", file=sys.stderr)
        return None


def app_module(app):
    return importlib.import_module(app)


# ---------------------------------------------------------------- timing


def runic_bench(args, backend, app, entry):
    """The times in ms of one runic entry's measured calls from `runic bench --json` (or a
    string saying why there are none), and the CPU time over the wall time of those calls
    (about 2 on two busy cores), or of the whole `runic bench` process (data loading and
    compilation included) when the JSON does not say."""
    prog = os.path.join(HERE, app + ".fut")
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        cmd = [args.runic, "bench", "--backend", backend, "-e", entry, "-r", str(args.runs),
               "--min-time", str(args.min_time), "--timeout", str(args.timeout),
               "--json", out, prog]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cores = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) / wall
        try:
            with open(out) as f:
                results = json.load(f)
        except (OSError, ValueError):
            return "no results: " + (proc.stderr.strip().splitlines() or ["?"])[-1], cores
    finally:
        os.unlink(out)
    for key, res in results.items():
        if key.endswith(":" + entry):
            for ds in res["datasets"].values():
                if isinstance(ds, str):
                    if "timed out" in ds:
                        # warm-up plus `runs` calls did not fit: one call takes more than
                        # timeout / (runs + 1)
                        return ">%.0f" % (args.timeout / (args.runs + 1) * 1e3), cores
                    return "failed: " + ds, cores
                # Cores busy during the measured calls alone, when runic reports it.
                return [t / 1e3 for t in ds["runtimes"]], ds.get("cores", cores)
    return "no dataset for %s in the JSON" % entry, cores


STATS = {"median": statistics.median, "min": min}


def jax_times(jax, args, app, mod):
    inputs = [jax.device_put(v) for v in read_file(gen_data.ensure(app))]
    return {name: time_jax(jax.jit(fn), inputs, args.jax_runs, stat=list)
            for name, fn in mod.ENTRIES.items()}


def summarised(times, stat):
    """Each entry's list of call times (ms) as one number by `stat`; strings (why there
    are none) stay."""
    return {e: STATS[stat](t) if isinstance(t, list) else t for e, t in times.items()}


def fmt(x, digits=1):
    if isinstance(x, str):
        return x if len(x) < 14 else x[:12] + "…"
    return "%.*f" % (digits, x)


def ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return a / b
    if isinstance(a, str) and a.startswith(">") and isinstance(b, (int, float)) and b > 0:
        return ">%.1f" % (float(a[1:]) / b)
    return "-"


def bench(args):
    jax = None if args.no_jax else load_jax()
    rows, record = [], {}
    for app in args.apps:
        gen_data.ensure(app)
        mod = app_module(app)
        for backend in args.backends:
            rounds = []
            for _ in range(max(args.rounds, 1)):
                jt = jax_times(jax, args, app, mod) if jax else {}
                rt, cores = {}, {}
                for entry in mod.ENTRIES:
                    if entry in args.skip:
                        rt[entry], cores[entry] = "skipped", float("nan")
                        continue
                    rt[entry], cores[entry] = runic_bench(args, backend, app, entry)
                    print("%s %s (%s): runic %s ms (%.2f cores), JAX %s ms (medians)" % (
                        app, entry, backend, fmt(summarised(rt, "median")[entry], 3),
                        cores[entry], fmt(summarised(jt, "median").get(entry, "-"), 3)),
                        file=sys.stderr)
                rounds.append((rt, jt, cores))
            rows.append((app, backend, mod.ROLES, rounds))
            record["%s/%s" % (app, backend)] = [
                {"runic_ms": rt, "jax_ms": jt, "runic_cores": cores}
                for rt, jt, cores in rounds]
    for stat in (["min", "median"] if args.stat == "both" else [args.stat]):
        print("calls summarised by their %s" % stat)
        print_table([(app, backend, roles, [(summarised(rt, stat), summarised(jt, stat), c)
                                            for rt, jt, c in rounds])
                     for app, backend, roles, rounds in rows])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=2)


def median_of(xs, spread=False):
    """The median of the numbers in `xs` (a string when one is not a number: the first such),
    with their range when `spread` and there are several."""
    bad = [x for x in xs if not isinstance(x, (int, float))]
    if bad or not xs:
        return bad[0] if bad else "-"
    m = statistics.median(xs)
    if spread and len(xs) > 1:
        return "%.2f (%.2f–%.2f)" % (m, min(xs), max(xs))
    return m


def print_table(rows):
    head = ["app", "backend", "runic primal ms", "JAX primal ms", "runic/JAX",
            "runic grad/primal", "JAX grad/primal", "Newton/grad runic", "Newton/grad JAX"]
    lines = [head]
    for app, backend, roles, rounds in rows:
        p, g, nw = roles["primal"], roles["grad"], roles.get("newton")

        def per_round(f):
            r = median_of([f(rt, jt) for rt, jt, _ in rounds], spread=True)
            return r if isinstance(r, str) and "–" in r else fmt(r, 2)

        def ms(get, e):
            return fmt(median_of([get(rt, jt).get(e, "-") for rt, jt, _ in rounds]), 2)

        lines.append([
            app, backend, ms(lambda r, j: r, p), ms(lambda r, j: j, p),
            (per_round(lambda r, j: ratio(r[p], j.get(p)))),
            (per_round(lambda r, j: ratio(r[g], r[p]))),
            (per_round(lambda r, j: ratio(j.get(g), j.get(p)))),
            (per_round(lambda r, j: ratio(r[nw], r[g]))) if nw else "",
            (per_round(lambda r, j: ratio(j.get(nw), j.get(g)))) if nw else "",
        ])
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for line in lines[1:]:
        print("| " + " | ".join(str(c).rjust(w) for c, w in zip(line, widths)) + " |")
    print()
    print("every entry: runic ms (cores busy in its measured calls), JAX ms; medians over "
          "rounds, ratios with their range over rounds")
    for app, backend, roles, rounds in rows:
        entries = rounds[0][0]
        print("  %s: " % backend + "; ".join(
            "%s %s (%.2f), %s" % (
                e,
                fmt(median_of([rt[e] for rt, _, _ in rounds]), 2),
                median_of([c[e] for _, _, c in rounds]),
                fmt(median_of([jt.get(e, "-") for _, jt, _ in rounds]), 2))
            for e in entries))


# ---------------------------------------------------------------- explain-exec

EXPLAIN_LINE = re.compile(r"^(\s*)(\S+:\d+:\d+) (\w+): (.*)$")
NESTED = "nested in a lambda the evaluator runs"


def explain_counts(text):
    """Per entry, counts from `runic dev --explain-exec` output: SOACs run native, folded
    by the executor ("built-in"), and not native, the latter by their own reasons; a SOAC
    whose only reason is that it sits inside a lambda the evaluator runs is counted apart,
    as a consequence of its parent's fallback. "top" counts the outermost SOACs (those the
    executor starts), "top native" those of them that run native."""
    entries = collections.OrderedDict()
    counts = reasons = None
    for line in text.splitlines():
        if line.startswith("entry "):
            counts, reasons = collections.Counter(), collections.Counter()
            entries[line[len("entry "):].rstrip(":")] = (counts, reasons)
            continue
        m = EXPLAIN_LINE.match(line)
        if not m or counts is None:
            continue
        top = len(m.group(1)) <= 2
        status = m.group(4)
        counts["top"] += top
        if status.startswith("native"):
            counts["native"] += 1
            counts["top native"] += top
        elif status.startswith("built-in"):
            counts["built-in"] += 1
            counts["top native"] += top
        elif status.startswith("not native: "):
            counts["not native"] += 1
            own = [r for r in status[len("not native: "):].split("; ")
                   if not r.startswith(NESTED)]
            if own:
                reasons.update("%s: %s" % (m.group(3), r) for r in own)
            else:
                counts["inside a fallback"] += 1
    return entries


def compile_ms(args, prog):
    """The total of `runic dev --backend ir --timings` (front end, passes, native code)."""
    proc = subprocess.run([args.runic, "dev", "--backend", "ir", "--timings", prog],
                          capture_output=True, text=True)
    m = re.search(r"^total\s+([0-9.]+) ms", proc.stdout + proc.stderr, re.M)
    return float(m.group(1)) if m else float("nan")


def explain(args):
    total = collections.Counter()
    for app in args.apps:
        prog = os.path.join(HERE, app + ".fut")
        proc = subprocess.run([args.runic, "dev", "--backend", "ir", "--explain-exec", prog],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print("%s: explain-exec failed: %s" % (app, proc.stderr.strip()))
            continue
        print("%s.fut: compiled in %.0f ms" % (app, compile_ms(args, prog)))
        for entry, (counts, reasons) in explain_counts(proc.stdout).items():
            total.update(reasons)
            print("%s: %d SOACs, %d native, %d built-in, %d not native (%d only because an "
                  "enclosing SOAC is not); outermost: %d of %d native or built-in" % (
                      entry, counts["native"] + counts["built-in"] + counts["not native"],
                      counts["native"], counts["built-in"], counts["not native"],
                      counts["inside a fallback"], counts["top native"], counts["top"]))
            for reason, n in reasons.most_common():
                print("  %3d  %s" % (n, reason))
    print("all entries, reasons for not running native (SOACs per reason):")
    for reason, n in total.most_common():
        print("  %3d  %s" % (n, reason))


# ---------------------------------------------------------------- checking


def flatten(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def rel_error(got, exp):
    """max |got - exp| / max(1, max |exp|), or a string if shapes or types differ."""
    exp = np.asarray(exp)
    if got.shape != exp.shape:
        return "shape %s, JAX %s" % (got.shape, exp.shape)
    if got.dtype != exp.dtype:
        return "type %s, JAX %s" % (got.dtype, exp.dtype)
    scale = max(1.0, float(np.max(np.abs(exp), initial=0)))
    return float(np.max(np.abs(got.astype(np.float64) - exp.astype(np.float64)),
                        initial=0)) / scale


def compare(got, want):
    """Problems found comparing runic's results with JAX's: a relative error (rel_error)
    above 1e-4 for f32 and 1e-10 for f64 (reductions may be reassociated), and the
    largest relative error seen."""
    if len(got) != len(want):
        return ["%d results, JAX %d" % (len(got), len(want))], 0.0
    problems, worst = [], 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        err = rel_error(g, w)
        if isinstance(err, str):
            problems.append("result %d: %s" % (i, err))
            continue
        worst = max(worst, err)
        if not err <= (1e-4 if g.dtype == np.float32 else 1e-10):
            problems.append("result %d: relative error %.3g" % (i, err))
    return problems, worst


def check(args):
    jax = load_jax()
    if jax is None:
        return 1
    failures = 0
    for app in args.apps:
        path = gen_data.ensure(app, small=True)
        inputs = read_file(path)
        mod = app_module(app)
        for entry, fn in mod.ENTRIES.items():
            want = [np.asarray(v) for v in flatten(jax.jit(fn)(*inputs))]
            for backend in args.backends:
                with open(path, "rb") as f:
                    proc = subprocess.run(
                        [args.runic, "run", "--backend", backend, "-b", "-e", entry,
                         os.path.join(HERE, app + ".fut")],
                        stdin=f, capture_output=True, timeout=args.timeout)
                worst = 0.0
                if proc.returncode != 0:
                    problems = ["exit %d: %s" % (proc.returncode,
                                                 proc.stderr.decode(errors="replace").strip())]
                else:
                    problems, worst = compare(read_values(proc.stdout), want)
                status = ("ok (relative error %.1e)" % worst if not problems
                          else "MISMATCH " + "; ".join(problems))
                failures += bool(problems)
                print("%-7s %-16s %-7s %s" % (app, entry, backend, status))
    print("%d mismatches" % failures)
    return 1 if failures else 0


def main():
    args = parse_args()
    if args.check:
        sys.exit(check(args))
    if args.explain:
        explain(args)
        return
    bench(args)


if __name__ == "__main__":
    main()
