"""Write the inputs of the application benchmarks into bench/apps/data/ in runic's binary
value format, with numpy's generator and a fixed seed, so that runic (through the
`input @ data/APP.in` blocks) and the JAX scripts read the same numbers.

Each file holds the arguments of the app's entry points, in order:
  kmeans.in  points [n][d]f32, centres [k][d]f32 (the first k points)
  gmm.in     alphas [K]f64, means [K][d]f64, q [K][d]f64, l [K][d(d-1)/2]f64,
             x [n][d]f64, gamma f64, m i64
  lstm.in    w [4][H][D]f32, u [4][H][H]f32, b [4][H]f32, wy [O][H]f32, by [O]f32,
             xs [T][B][D]f32, ys [T][B][O]f32
  mlp.in     w1 [H][I]f32, b1 [H]f32, w2 [C][H]f32, b2 [C]f32, xs [B][I]f32, labels [B]i64
APP_small.in holds the same arguments at small sizes, for `run.py --check`.

Usage: python3 gen_data.py [--force] [APP...]
"""

import argparse
import os
import sys

import numpy as np

from common import APPS, data_path, write_values

SEED = 20240613

SIZES = {
    "kmeans": dict(n=100_000, d=16, k=32),
    "gmm": dict(n=10_000, d=16, k=25),
    "lstm": dict(bs=1024, t=20, d=300, h=192, o=300),
    "mlp": dict(bs=1024, i=784, h=256, c=10),
}

SMALL = {
    "kmeans": dict(n=300, d=4, k=5),
    "gmm": dict(n=40, d=4, k=3),
    "lstm": dict(bs=3, t=4, d=5, h=4, o=3),
    "mlp": dict(bs=6, i=12, h=7, c=4),
}


def kmeans(rng, n, d, k):
    points = rng.random((n, d), dtype=np.float32)
    return [points, points[:k].copy()]


def gmm(rng, n, d, k):
    t = d * (d - 1) // 2
    return [
        rng.standard_normal(k),
        rng.random((k, d)),
        0.1 * rng.standard_normal((k, d)),
        0.1 * rng.standard_normal((k, t)),
        rng.random((n, d)),
        np.float64(1.0),
        np.int64(0),
    ]


def lstm(rng, bs, t, d, h, o):
    def normal(shape, scale):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    s_in = 1 / np.sqrt(d + h)
    return [
        normal((4, h, d), s_in),
        normal((4, h, h), s_in),
        normal((4, h), 0.1),
        normal((o, h), 1 / np.sqrt(h)),
        normal((o,), 0.1),
        normal((t, bs, d), 1.0),
        normal((t, bs, o), 1.0),
    ]


def mlp(rng, bs, i, h, c):
    def normal(shape, scale):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    return [
        normal((h, i), 1 / np.sqrt(i)),
        normal((h,), 0.1),
        normal((c, h), 1 / np.sqrt(h)),
        normal((c,), 0.1),
        rng.random((bs, i), dtype=np.float32),
        rng.integers(0, c, size=bs, dtype=np.int64),
    ]


MAKERS = {"kmeans": kmeans, "gmm": gmm, "lstm": lstm, "mlp": mlp}


def make(app, small=False, seed=SEED):
    """The argument list of `app` at the benchmark (or small) sizes, deterministically."""
    sizes = (SMALL if small else SIZES)[app]
    rng = np.random.default_rng(seed + APPS.index(app) + (100 if small else 0))
    return MAKERS[app](rng, **sizes)


def ensure(app, small=False, force=False):
    """Write data/APP.in (or APP_small.in) unless it exists; return its path."""
    path = data_path(app, small)
    if force or not os.path.exists(path):
        write_values(path, make(app, small))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("apps", nargs="*", default=APPS, help="apps (default: all)")
    ap.add_argument("--force", action="store_true", help="rewrite existing files")
    args = ap.parse_args()
    for app in args.apps:
        if app not in MAKERS:
            sys.exit("unknown app %r (known: %s)" % (app, ", ".join(APPS)))
        for small in (False, True):
            print(ensure(app, small, args.force))


if __name__ == "__main__":
    main()
