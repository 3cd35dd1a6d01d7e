#!/usr/bin/env python3
"""Reverse-mode AD overhead in JAX on the CPU, for comparison with bench/ad_rev.fut.

For every operation of bench/ad_rev.fut this measures
  * the primal: ``jax.jit(f)``, and
  * the vjp: ``jax.jit`` of a function that runs ``jax.vjp`` and applies the pullback to a
    seed, returning both the primal result and the cotangents (what runic's ``vjp2`` does),
and prints the median time of several runs after one warm-up run (which also compiles),
each run waited for with ``block_until_ready``.

The inputs mirror the runic suite: 10^7 f32 elements (10^8 with ``--large``), row-wise
operators on rows of 16 columns, products over values mapped close to 1, histograms with
31, 401 and 50000 bins addressed by random u16 indices taken modulo the bin count inside
the measured function. The data are random but not the same numbers as runic's generator.

This script installs nothing. Without JAX it says how to install it and exits with status 0:
    pip install "jax[cpu]"

Usage:
    python3 bench/jax_ad.py                 # 10^7 elements, every operation
    python3 bench/jax_ad.py --large         # 10^8 elements (several GB of memory)
    python3 bench/jax_ad.py --runs 9 --ops hist_add,scan
"""
import argparse
import os
import statistics
import sys
import time

ROW = 16                      # columns of the row-wise ("vectorised") operators
BINS = (31, 401, 50000)       # histogram sizes, as in bench/ad_rev.fut


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--large", action="store_true", help="use 10^8 elements instead of 10^7")
    p.add_argument("-n", "--size", type=int, default=None,
                   help="number of elements (overrides --large; must be a multiple of 16)")
    p.add_argument("-r", "--runs", type=int, default=7, help="measured runs per case (at least 5)")
    p.add_argument("--ops", default="",
                   help="comma-separated substrings; only operations whose name contains one")
    p.add_argument("--seed", type=int, default=1, help="seed of the numpy data generator")
    args = p.parse_args()
    if args.runs < 5:
        p.error("--runs must be at least 5")
    n = args.size if args.size is not None else (100_000_000 if args.large else 10_000_000)
    if n <= 0 or n % ROW != 0:
        p.error(f"the size must be a positive multiple of {ROW}")
    args.n = n
    return args


def import_jax():
    """Import JAX on the CPU, or return None (after explaining how to install it)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    try:
        import jax
        import jax.numpy as jnp
        from jax import lax
    except ImportError as err:
        print(f"JAX is not installed ({err}).")
        print('Install it with:  pip install "jax[cpu]"   (then rerun this script)')
        print("Nothing was measured.")
        return None
    return jax, jnp, lax


def define_ops(jnp, lax, n, rng):
    """Each operation: (name, function, positions of the differentiated arguments, data maker).

    A data maker returns (arguments, seed) as numpy arrays; the seed has the shape of the
    function's result.
    """
    import numpy as np

    f32 = np.float32
    rows = n // ROW

    def near1(x):
        return 1 + (x - 0.5) * 1e-3

    def flat(with_seed_like_input):
        def make():
            xs = rng.random(n, dtype=f32)
            seed = rng.random(n, dtype=f32) if with_seed_like_input else f32(rng.random())
            return (xs,), seed
        return make

    def matrix(seed_shape):
        def make():
            return (rng.random((rows, ROW), dtype=f32),), rng.random(seed_shape, dtype=f32)
        return make

    def reshape_data():
        return (rng.random(n, dtype=f32),), rng.random(ROW, dtype=f32)

    def hist_data(k, row):
        def make():
            shape = (k, ROW) if row else (k,)
            count = rows if row else n
            vals = rng.random((rows, ROW) if row else n, dtype=f32)
            idx = rng.integers(0, 1 << 16, size=count, dtype=np.uint16)
            return (rng.random(shape, dtype=f32), idx, vals), rng.random(shape, dtype=f32)
        return make

    def bin_of(idx, k):
        return idx.astype(jnp.int32) % k

    ops = [
        ("sum", lambda xs: jnp.sum(xs), (0,), flat(False)),
        ("prod", lambda xs: jnp.prod(near1(xs)), (0,), flat(False)),
        ("min", lambda xs: jnp.min(xs), (0,), flat(False)),
        ("vecsum", lambda xss: jnp.sum(xss, axis=0), (0,), matrix((ROW,))),
        ("vecsum_reshape", lambda xs: jnp.sum(xs.reshape(rows, ROW), axis=0), (0,), reshape_data),
        ("scan_add", lambda xs: jnp.cumsum(xs), (0,), flat(True)),
        ("scan_mul", lambda xs: jnp.cumprod(near1(xs)), (0,), flat(True)),
        ("scan_min", lambda xs: lax.cummin(xs), (0,), flat(True)),
        ("vecscan", lambda xss: jnp.cumsum(xss, axis=0), (0,), matrix((rows, ROW))),
    ]
    for k in BINS:
        ops += [
            (f"hist_add/{k}", lambda d, i, v: d.at[bin_of(i, d.shape[0])].add(v), (0, 2),
             hist_data(k, False)),
            (f"hist_mul/{k}", lambda d, i, v: d.at[bin_of(i, d.shape[0])].multiply(near1(v)), (0, 2),
             hist_data(k, False)),
            (f"hist_min/{k}", lambda d, i, v: d.at[bin_of(i, d.shape[0])].min(v), (0, 2),
             hist_data(k, False)),
            (f"vechist/{k}", lambda d, i, v: d.at[bin_of(i, d.shape[0])].add(v), (0, 2),
             hist_data(k, True)),
        ]
    return ops


def main():
    args = parse_args()
    imported = import_jax()
    if imported is None:
        return 0
    jax, jnp, lax = imported
    import numpy as np

    def block(out):
        for leaf in jax.tree_util.tree_leaves(out):
            leaf.block_until_ready()
        return out

    def primal_fn(fun):
        # The seed is passed and ignored, so that argument passing costs the same.
        return jax.jit(lambda xs, seed: fun(*xs))

    def vjp_fn(fun, diff):
        def run(xs, seed):
            def restricted(*ds):
                full = list(xs)
                for pos, d in zip(diff, ds):
                    full[pos] = d
                return fun(*full)
            y, pullback = jax.vjp(restricted, *[xs[pos] for pos in diff])
            return y, pullback(seed)
        return jax.jit(run)

    def median_ms(fn, xs, seed, runs):
        block(fn(xs, seed))                      # warm-up (includes compilation)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            block(fn(xs, seed))
            times.append(time.perf_counter() - t0)
        return statistics.median(times) * 1e3

    wanted = [w for w in args.ops.split(",") if w]
    rng = np.random.default_rng(args.seed)
    ops = [op for op in define_ops(jnp, lax, args.n, rng)
           if not wanted or any(w in op[0] for w in wanted)]
    print(f"JAX {jax.__version__} on {jax.default_backend()} ({jax.devices()[0]}), "
          f"n = {args.n}, median of {args.runs} runs after a warm-up")
    header = f"{'op':<18} {'primal ms':>12} {'vjp ms':>12} {'vjp/primal':>11}"
    print(header)
    print("-" * len(header))
    for name, fun, diff, make in ops:
        host_args, host_seed = make()
        xs = tuple(jax.device_put(a) for a in host_args)
        seed = jax.device_put(host_seed)
        try:
            t_primal = median_ms(primal_fn(fun), xs, seed, args.runs)
        except Exception as err:  # report and go on with the other operations
            print(f"{name:<18} primal failed: {str(err).splitlines()[0]}")
            continue
        try:
            t_vjp = median_ms(vjp_fn(fun, diff), xs, seed, args.runs)
        except Exception as err:  # e.g. JAX cannot differentiate scatter-multiply here
            print(f"{name:<18} {t_primal:12.3f} {'n/a':>12} {'':>11}  vjp failed: "
                  f"{str(err).splitlines()[0]}")
            continue
        print(f"{name:<18} {t_primal:12.3f} {t_vjp:12.3f} {t_vjp / t_primal:11.2f}")
        sys.stdout.flush()
        del xs, seed, host_args, host_seed
    return 0


if __name__ == "__main__":
    sys.exit(main())
