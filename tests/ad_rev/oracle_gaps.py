#!/usr/bin/env python3
"""Independent oracle for tests/ad_rev/slices.fut and the other programs that close the
gaps of issue 14 (scan over mixed scalar types, multi-dimensional reduce_by_index, loops
whose carried arrays change shape). Plain Python (no numpy): each section mirrors the
program and differentiates it by central finite differences, never by runic.
Run `python3 tests/ad_rev/oracle_gaps.py [section]`.
"""
import math
import sys

H = 1e-6


def flat(x):
    return [v for r in x for v in flat(r)] if isinstance(x, list) else [x]


def unflat(vals, like):
    if not isinstance(like, list):
        return vals.pop(0)
    return [unflat(vals, r) for r in like]


def vjp_fd(f, seed, *args):
    """seedᵀ·J of f at args by central differences of <seed, f(args)>, per argument."""
    s = flat(seed)
    dot = lambda *a: sum(x * y for x, y in zip(s, flat(f(*a))))
    grads = []
    for k, a in enumerate(args):
        xs = flat(a)
        g = []
        for i in range(len(xs)):
            up, down = list(xs), list(xs)
            up[i] += H
            down[i] -= H
            au = list(args)
            ad = list(args)
            au[k] = unflat(up, a)
            ad[k] = unflat(down, a)
            g.append((dot(*au) - dot(*ad)) / (2 * H))
        grads.append(unflat(g, a))
    return grads


def fmt(x, nd=6):
    if isinstance(x, list):
        return "[" + ", ".join(fmt(v, nd) for v in x) + "]"
    return repr(round(x, nd) + 0.0)


def show(name, *vals):
    print(f"{name}: " + " ".join(fmt(v) for v in vals))


SECTIONS = {}


def section(fn):
    SECTIONS[fn.__name__] = fn
    return fn


def sl(xs, start=None, end=None, stride=1):
    """xs[start:end:stride] with the defaults of language.md §7.6."""
    n = len(xs)
    i = start if start is not None else (0 if stride > 0 else n - 1)
    j = end if end is not None else (n if stride > 0 else -1)
    out = []
    while (i < j) if stride > 0 else (i > j):
        out.append(xs[i])
        i += stride
    return out


# ---------------------------------------------------------------------------------- slices
@section
def slices():
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    col = lambda a: [sum(r[i] for r in a) for i in range(3)]
    show("colsum", *vjp_fd(col, [1.0, 2.0, 3.0], a))
    a = [[0.5, -1.0, 2.0, 1.5], [1.0, 0.25, -0.5, 3.0], [2.0, 1.0, 0.5, -2.0]]
    def col_row(a):
        # r_i = Σ sin a[i % 3, ::2] · Σ a[1:, i]
        return [sum(math.sin(x) for x in sl(a[i % 3], None, None, 2)) * sum(r[i] for r in a[1:])
                for i in range(4)]
    show("col_row", *vjp_fd(col_row, [1.0, -2.0, 0.5, 3.0], a))
    a = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    show("rowslice", *vjp_fd(lambda a: [[x * x for x in r[1:3]] for r in a], [[1.0, 2.0], [3.0, 4.0]], a))
    xs = [1.0, 2.0, 3.0, 4.0, 5.0]
    show("strided", *vjp_fd(lambda xs: [sum(x * x for x in sl(xs, i, None, 2)) for i in range(2)],
                            [1.0, 10.0], xs))
    xs = [1.0, 2.0, 3.0, 4.0]
    show("reversed", *vjp_fd(lambda xs: [sum(sl(xs, i, None, -1)) for i in range(3)], [1.0, 10.0, 100.0], xs))
    xs = [0.5, -1.0, 2.0, 1.5, 3.0, -0.25]
    # window [k:k+3:s] with a run-time stride s = 1 + k % 2 and a down-going [k+2:k:-1]
    def windows(xs):
        out = []
        for k in range(3):
            s = 1 + k % 2
            up = sl(xs, k, k + 3, s)
            down = sl(xs, k + 2, k, -1)
            out.append(sum(x * x for x in up) * sum(down) + math.exp(sum(down) / 4))
        return out
    show("windows", *vjp_fd(windows, [1.0, -1.0, 2.0], xs))


# ------------------------------------------------------------------------------- scan_mixed
def scan_pairs(as_, bs):
    """scan with (a1, b1) ⊙ (a2, b2) = (a1 + a2, b1 + b2 + a1·a2): (Σa, Σb + Σ_{i<j} a_i a_j)."""
    out, (a, b) = [], (0.0, 0.0)
    for a2, b2 in zip(as_, bs):
        a, b = a + a2, b + b2 + a * a2
        out.append([a, b])
    return out


def scan_affine(as_, bs):
    """scan with (a1, b1) ⊙ (a2, b2) = (a2·a1, a2·b1 + b2): the composition of x ↦ a x + b."""
    out, (a, b) = [], (1.0, 0.0)
    for a2, b2 in zip(as_, bs):
        a, b = a2 * a, a2 * b + b2
        out.append([a, b])
    return out


@section
def scan_mixed():
    as_, bs, sa, sb = [1.0, -2.0, 0.5, 3.0], [0.25, 1.0, -1.0, 2.0], [1.0, 0.0, 2.0, -1.0], [0.5, 1.0, -1.0, 2.0]
    seed = [[x, y] for x, y in zip(sa, sb)]
    show("pairs (f32, f64)", *vjp_fd(scan_pairs, seed, as_, bs))
    as_, bs, sa, sb = [2.0, 0.5, -1.0], [1.0, 3.0, 2.0], [1.0, 0.0, 2.0], [0.5, 1.0, -1.0]
    seed = [[x, y] for x, y in zip(sa, sb)]
    show("affine (f64, f32)", *vjp_fd(scan_affine, seed, as_, bs))
    cs, xs, sc, sx = [1.0, 2.0, -1.0, 3.0], [0.5, -1.0, 2.0, 0.25], [1.0, 1.0, 2.0, 0.0], [1.0, -1.0, 2.0, 3.0]
    seed = [[x, y] for x, y in zip(sc, sx)]
    show("pairs (i64, f64)", *vjp_fd(scan_pairs, seed, cs, xs))

# ------------------------------------------------------------------------------ hist_nd
def rbi_nd(dest, op, ne, idx, vs):
    """reduce_by_index on a nested list `dest` at index tuples `idx` (out of range: dropped):
    per bin dest[b] op (ne op v1 op ... op vk), as reverse mode sees it."""
    dims = []
    d = dest
    while isinstance(d, list):
        dims.append(len(d))
        d = d[0]
    xs = flat(dest)
    acc = [ne] * len(xs)
    for ix, v in zip(idx, vs):
        if all(0 <= i < n for i, n in zip(ix, dims)):
            k = 0
            for i, n in zip(ix, dims):
                k = k * n + i
            acc[k] = op(acc[k], v)
    return unflat([op(x, a) for x, a in zip(xs, acc)], dest)


@section
def hist_nd():
    uop = lambda a, b: a * b + a + b
    dest = [[0.5, -2.0, 1.0], [1.5, 0.25, 2.0]]
    rs, cs = [1, 0, 1, 3, 0, 1, 0], [2, 0, 2, 0, 0, -1, 1]
    vs = [1.0, 0.5, -0.5, 4.0, 2.0, 7.0, 0.75]
    seed = [[1.0, 2.0, -1.0], [0.5, 3.0, 1.5]]
    f = lambda d, v: rbi_nd(d, uop, 0.0, list(zip(rs, cs)), v)
    show("rbi2_user", f(dest, vs), *vjp_fd(f, seed, dest, vs))
    mx = lambda a, b: max(a, b)
    dest = [[0.5, -2.0], [1.0, 3.0]]
    rs, cs = [0, 1, 0, 1, 0, 2], [1, 0, 1, 1, 0, 0]
    vs = [1.0, 2.5, -0.5, 2.0, 0.25, 9.0]
    seed = [[1.0, 2.0], [3.0, 4.0]]
    f = lambda d, v: rbi_nd(d, mx, -math.inf, list(zip(rs, cs)), v)
    show("rbi2_max", f(dest, vs), *vjp_fd(f, seed, dest, vs))
    mul = lambda a, b: a * b
    dest = [[[2.0, 1.0], [0.5, 3.0]], [[1.0, -1.0], [2.0, 0.5]]]
    idx = [(0, 1, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0), (2, 0, 0), (1, 0, 0)]
    vs = [1.5, 2.0, -2.0, 0.0, 5.0, 3.0]
    seed = [[[1.0, 1.0], [1.0, 2.0]], [[0.5, 1.0], [-1.0, 1.0]]]
    f = lambda d, v: rbi_nd(d, mul, 1.0, idx, v)
    show("rbi3_mul", f(dest, vs), *vjp_fd(f, seed, dest, vs))


@section
def loop_shapes():
    def doubling(x, k=3):
        xs = [x]
        for _ in range(k):
            xs = xs + [v * x for v in xs]
        return sum(xs)

    show("doubling", doubling(2.0), *vjp_fd(lambda x: doubling(x), 1.0, 2.0))
    show("doubling_4", *vjp_fd(lambda x: doubling(x, 4), 1.0, 1.2))

    def grow(xs, c):
        ys = list(xs)
        for i in range(3):
            ys = ys + [math.sin(y) * c + i for y in ys]
        return sum(y * y for y in ys)

    show("grow", *vjp_fd(grow, 1.0, [0.5, -1.0], 0.7))

    def shrink(xs):
        ys = list(xs)
        for _ in range(2):
            ys = [a * b for a, b in zip(ys[1:], ys[:-1])]
        return sum(ys)

    show("shrink", *vjp_fd(shrink, 1.0, [0.5, -1.0, 2.0, 1.5]))

    def while_grow(x):
        ys, k = [x], 0
        while k < 3:
            ys, k = ys + [y * x + 1 for y in ys], k + 1
        return sum(ys)

    show("while_grow", *vjp_fd(while_grow, 1.0, 1.5))

    def rows(xs):
        m = [list(xs)]
        for _ in range(2):
            m = m + [[2 * math.cos(v) for v in r] for r in m]
        return sum(v for r in m for v in r)

    show("rows", *vjp_fd(rows, 1.0, [0.5, -1.0]))

    def ring(xs):
        ys = list(xs)
        for _ in range(3):
            n = len(ys)
            ys = [ys[j % n] * ys[(j + 1) % n] for j in range(n + 1)]
        return ys

    show("ring", *vjp_fd(ring, [1.0] * 6, [0.5, -1.0, 2.0]))


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SECTIONS):
        print(f"== {name}")
        SECTIONS[name]()
