"""Call overhead from Python: a dot product of two 1 000-element float32 arrays through
runic, against numpy.dot on the same arrays in the same run. Then what reading arguments
in place saves: the sum of 10^7 float32 passed as an aligned array (read in place) and as a
misaligned view of the same values (which runic must copy once), in the same run.

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

    total = runic.compile("entry total (xs: []f32): f32 = f32.sum xs").total
    n = 10_000_000
    aligned = np.ones(n, dtype=np.float32)
    raw = np.zeros(4 * n + 1, dtype=np.uint8)
    raw[1:] = aligned.view(np.uint8)
    misaligned = np.frombuffer(raw, dtype=np.float32, offset=1, count=n)
    assert total(aligned) == total(misaligned) == n
    big_runs = max(runs, 5)
    in_place = per_call_us(lambda: total(aligned), 20, big_runs) / 1000
    copied = per_call_us(lambda: total(misaligned), 20, big_runs) / 1000
    print(f"sum of 10^7 f32, median of {big_runs} runs of 20 calls (ms/call):")
    print(f"  copied (misaligned view) {copied:8.3f}")
    print(f"  read in place (aligned)  {in_place:8.3f}")
    print(f"  copied / in place        {copied / in_place:8.2f}x")


if __name__ == "__main__":
    main()
