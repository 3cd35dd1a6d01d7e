"""Shared helpers for the application benchmarks: runic's binary value format (spec
data-tests-cli.md §4), where the data live, and how JAX functions are timed."""

import os
import statistics
import struct
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
APPS = ["kmeans", "gmm", "lstm", "mlp"]

# numpy dtype <-> the 4-byte type tag of the binary format.
_TAGS = {
    np.dtype(np.int8): b"  i8", np.dtype(np.int16): b" i16",
    np.dtype(np.int32): b" i32", np.dtype(np.int64): b" i64",
    np.dtype(np.uint8): b"  u8", np.dtype(np.uint16): b" u16",
    np.dtype(np.uint32): b" u32", np.dtype(np.uint64): b" u64",
    np.dtype(np.float16): b" f16", np.dtype(np.float32): b" f32",
    np.dtype(np.float64): b" f64", np.dtype(np.bool_): b"bool",
}
_DTYPES = {tag: dt for dt, tag in _TAGS.items()}


def write_value(f, value):
    """Write one scalar or array in the binary format: 'b', version 2, rank, tag, dims,
    then the elements little-endian in row-major order."""
    a = np.asarray(value)  # (ascontiguousarray would turn a scalar into a [1] array)
    tag = _TAGS[a.dtype]
    f.write(b"b" + bytes([2, a.ndim]) + tag)
    f.write(struct.pack("<%dq" % a.ndim, *a.shape))
    f.write(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes(order="C"))


def write_values(path, values):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for v in values:
            write_value(f, v)
    os.replace(tmp, path)


def read_values(data):
    """Read every value of a binary stream (as `runic run -b` writes it)."""
    values, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 2] != b"b\x02":
            raise ValueError("not a binary value at byte %d" % pos)
        rank = data[pos + 2]
        dt = _DTYPES[data[pos + 3:pos + 7]]
        dims = struct.unpack_from("<%dq" % rank, data, pos + 7)
        pos += 7 + 8 * rank
        count = int(np.prod(dims, dtype=np.int64))
        nbytes = count * dt.itemsize
        a = np.frombuffer(data[pos:pos + nbytes], dtype=dt.newbyteorder("<"))
        values.append(a.reshape(dims).astype(dt))
        pos += nbytes
    return values


def read_file(path):
    with open(path, "rb") as f:
        return read_values(f.read())


def data_path(app, small=False):
    return os.path.join(DATA, app + ("_small" if small else "") + ".in")


def time_jax(fn, args, runs, min_runs=5, stat=None):
    """Median wall time in ms of `fn(*args)` over max(runs, min_runs) calls after one
    warm-up call (which also compiles), each waited for with block_until_ready; `stat`
    (e.g. `min`) summarises the times instead of the median."""
    import jax

    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(max(runs, min_runs)):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append((time.perf_counter() - t0) * 1e3)
    return (stat or statistics.median)(times)


def jax_setup():
    """Import JAX with 64-bit types enabled (the GMM is f64; the f32 apps keep f32 because
    every array they build takes its dtype from an input). Returns the jax module."""
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def standalone(app, entries):
    """`python3 APP.py [-r RUNS]`: time every JAX entry of one app on data/APP.in."""
    import argparse

    import gen_data

    ap = argparse.ArgumentParser(description="Time the JAX version of %s." % app)
    ap.add_argument("-r", "--runs", type=int, default=7, help="timed runs (at least 5)")
    args = ap.parse_args()
    jax = jax_setup()
    inputs = [jax.device_put(v) for v in read_file(gen_data.ensure(app))]
    for name, fn in entries.items():
        ms = time_jax(jax.jit(fn), inputs, args.runs)
        print("%-16s %10.3f ms" % (name, ms))
