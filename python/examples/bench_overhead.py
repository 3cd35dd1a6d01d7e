"""Call overhead from Python: a dot product of two 1 000-element float32 arrays through
runic, against numpy.dot on the same arrays in the same run.

    python python/examples/bench_overhead.py [CALLS] [RUNS]

Prints the median over RUNS (default 7) of the mean time per call over CALLS calls
(default 20 000), in microseconds.
"""

import statistics
import sys
import time

import numpy as np

import runic


def per_call_us(f, calls, runs):
    for _ in range(min(calls, 1000)):
        f()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(times)


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    p = runic.compile("entry dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)")
    dot = p.dot
    a = (np.arange(1000) % 7 * 0.5).astype(np.float32)
    b = (np.arange(1000) % 5 - 2.0).astype(np.float32)
    assert abs(dot(a, b) - np.dot(a, b)) <= 1e-3 * abs(np.dot(a, b))
    base = per_call_us(lambda: np.dot(a, b), calls, runs)
    full = per_call_us(lambda: dot(a, b), calls, runs)
    print(f"dot product of 1000 f32, median of {runs} runs of {calls} calls (us/call):")
    print(f"  numpy.dot (baseline)   {base:8.3f}")
    print(f"  runic entry call       {full:8.3f}")
    print(f"  runic / numpy.dot      {full / base:8.1f}x")


if __name__ == "__main__":
    main()
