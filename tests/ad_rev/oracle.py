#!/usr/bin/env python3
"""Independent oracle for the expected values in tests/ad_rev/*.fut.

Each section mirrors one test program in plain numpy (float64) and prints the expected
outputs. Gradients come either from closed forms written out below or from central finite
differences (`fd_grad`), never from runic. Run `python3 tests/ad_rev/oracle.py [section]`.
"""
import sys
import numpy as np

H = 1e-6


def fd_grad(f, *args):
    """Central finite differences of a scalar function w.r.t. every float array argument."""
    args = [np.array(a, dtype=np.float64) for a in args]
    grads = []
    for k, a in enumerate(args):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in args]
            minus = [x.copy() for x in args]
            plus[k][idx] += H
            minus[k][idx] -= H
            g[idx] = (f(*plus) - f(*minus)) / (2 * H)
        grads.append(g)
    return grads


def vjp_fd(f, seed, *args):
    """Cotangent seedᵀ·J by finite differences of the scalar <seed, f(args)>."""
    seed = np.array(seed, dtype=np.float64)
    return fd_grad(lambda *a: float(np.sum(seed * np.asarray(f(*a), dtype=np.float64))), *args)


def fd_grad_vec(f, x):
    """Jacobian rows of a vector function by finite differences (row i = ∇f_i)."""
    x = np.array(x, dtype=np.float64)
    m = len(np.atleast_1d(f(x)))
    return [fd_grad(lambda y: float(np.asarray(f(y))[i]), x)[0] for i in range(m)]


def fmt(x, nd=6):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:
        v = float(x)
        if np.isinf(v):
            return "f64.inf" if v > 0 else "-f64.inf"
        r = round(v, nd)
        return repr(r + 0.0)
    return "[" + ", ".join(fmt(e, nd) for e in x) + "]"


def show(name, *vals):
    print(f"{name}: " + " ".join(fmt(v) for v in vals))


SECTIONS = {}


def section(fn):
    SECTIONS[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------------------------- reduce
def lin_compose(pairs):
    a, b = 1.0, 0.0
    for a2, b2 in pairs:          # (a1, b1) then (a2, b2): x ↦ a2·(a1·x + b1) + b2
        a, b = a2 * a, a2 * b + b2
    return a, b


@section
def reduce():
    # user operator a*b + a + b = (1+a)(1+b) - 1: result Π(1+x) - 1, ∂/∂x_i = Π_{j≠i}(1+x_j)
    for xs, s in [([0.5, 2.0, -0.25], 2.0), ([-1.0, 2.0, 3.0], 1.0), ([-1.0, -1.0, 3.0], 1.0)]:
        xs = np.array(xs)
        prim = np.prod(1 + xs) - 1
        g = [s * np.prod(np.delete(1 + xs, i)) for i in range(len(xs))]
        show(f"userop {xs.tolist()} {s}", prim, g)
    # affine composition, differentiated by finite differences
    for as_, bs, x in [([2.0, 0.5, -1.0], [1.0, 3.0, 2.0], 1.5), ([2.0, 0.0, 3.0], [1.0, 1.0, 1.0], 2.0)]:
        def f(a, b, x):
            A, B = lin_compose(zip(a, b))
            return A * x + B
        ga, gb, gx = fd_grad(f, as_, bs, x)
        show(f"affine {as_} {bs} {x}", ga, gb, gx)
    # vectorised product over columns: ∂/∂x_ij = s_j · Π_{k≠i} x_kj
    xss = np.array([[2.0, 0.0, 1.0], [3.0, 4.0, 0.0], [5.0, 6.0, 0.0]])
    s = np.array([1.0, 2.0, 3.0])
    g = np.array([[s[j] * np.prod(np.delete(xss[:, j], i)) for j in range(3)] for i in range(3)])
    show("vec_mul", g)
    # closed forms of the 1000-element cases
    n = 1000
    show("big_sum_sq", sum(2 * i for i in range(n)), 2 * (n - 1))
    xs = np.array([(i + 2) / (i + 1) for i in range(n)])
    g = np.prod(xs) / xs
    show("big_prod", np.prod(xs), np.sum(g * xs))


# ------------------------------------------------------------------------------------ scan
def scan_lin(as_, bs):
    out, acc = [], (1.0, 0.0)
    for a2, b2 in zip(as_, bs):
        acc = (a2 * acc[0], a2 * acc[1] + b2)
        out.append(acc)
    return np.array(out)          # shape [n][2]: columns A_k, B_k


@section
def scan():
    for xs, s in [([2.0, 0.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0]), ([0.0, 3.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]),
                  ([1.5, -2.0, 0.5], [1.0, 2.0, -1.0])]:
        show(f"scan_mul {xs} {s}", np.cumprod(xs), vjp_fd(np.cumprod, s, xs)[0])
    for as_, bs, sa, sb in [([2.0, 0.5, -1.0], [1.0, 3.0, 2.0], [1.0, 0.0, 2.0], [0.5, 1.0, -1.0]),
                            ([3.0, 0.0, 2.0], [1.0, -1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])]:
        seed = np.stack([sa, sb], axis=1)
        ga, gb = vjp_fd(scan_lin, seed, as_, bs)
        show(f"scan_affine {as_} {bs} {sa} {sb}", ga, gb)
    xss = np.array([[1.0, 2.0], [0.5, 0.0], [3.0, -1.0]])
    seed = np.array([[1.0, 1.0], [2.0, 0.0], [-1.0, 3.0]])
    show("vec_scan_add", np.cumsum(xss, axis=0), vjp_fd(lambda x: np.cumsum(x, axis=0), seed, xss)[0])
    show("vec_scan_mul", np.cumprod(xss, axis=0), vjp_fd(lambda x: np.cumprod(x, axis=0), seed, xss)[0])
    xs = [1.0, -2.0, 0.5, 3.0]
    show("scan_sq_loss", fd_grad(lambda x: float(np.sum(np.cumsum(x) ** 2)), xs)[0])
    xs = [0.5, 1.5, -1.0, 2.0]
    show("exscan", vjp_fd(lambda x: np.concatenate([[0.0], np.cumsum(x)[:-1]]), [1.0, 2.0, 3.0, 4.0], xs)[0])


# ------------------------------------------------------------------------- reduce_by_index
def rbi(dest, op, ne, is_, vs):
    """reduce_by_index as reverse mode sees it: dest[b] op (ne op v1 op ... op vk)."""
    dest = np.array(dest, dtype=np.float64)
    out = dest.copy()
    for b in range(len(dest)):
        acc = ne
        for i, v in zip(is_, vs):
            if i == b:
                acc = op(acc, v)
        out[b] = op(dest[b], acc)
    return out


def logaddexp(a, b):
    return float(np.logaddexp(a, b))


@section
def hist():
    mul = lambda a, b: a * b
    dest, is_, vs, seed = [2.0, 0.0, 3.0, 1.0], [0, 0, 1, 2, 2, 5], [3.0, 0.0, 4.0, 5.0, 0.5, 9.0], [1.0, 1.0, 1.0, 2.0]
    f = lambda d, v: rbi(d, mul, 1.0, is_, v)
    show("rbi_mul", f(dest, vs), *vjp_fd(f, seed, dest, vs))
    uop = lambda a, b: a * b + a + b
    dest, is_, vs, seed = [0.5, -2.0, 1.0], [1, 0, 1, 3, 0, -1], [1.0, 0.5, -0.5, 4.0, 2.0, 7.0], [1.0, 2.0, -1.0]
    f = lambda d, v: rbi(d, uop, 0.0, is_, v)
    show("rbi_user", f(dest, vs), *vjp_fd(f, seed, dest, vs))
    dest, is_, vs, seed = [0.0, 1.0], [0, 1, 0, 0, 2], [1.0, -1.0, 2.0, 0.5, 3.0], [1.0, 2.0]
    f = lambda d, v: rbi(d, logaddexp, -np.inf, is_, v)
    show("rbi_logaddexp", f(dest, vs), *vjp_fd(f, seed, dest, vs))
    # vectorised product over rows
    dest = np.array([[1.0, 2.0], [0.5, -1.0]])
    is_ = [1, 0, 1, 2, 1]
    vss = np.array([[2.0, 3.0], [4.0, 0.0], [-1.0, 0.5], [9.0, 9.0], [3.0, 2.0]])
    seed = np.array([[1.0, 1.0], [1.0, 2.0]])
    def f(d, v):
        out = d.copy()
        for b in range(2):
            acc = np.ones(2)
            for i, row in zip(is_, v):
                if i == b:
                    acc = acc * row
            out[b] = out[b] * acc
        return out
    show("rbi_vec_mul", f(dest, vss), *vjp_fd(f, seed, dest, vss))
    xs, s = [0.5, 2.5, 1.25, 1.75, 3.5], [1.0, 10.0, 100.0]
    show("hist_data_bins", [3 * x * x * s[int(x)] if int(x) < 3 else 0.0 for x in xs])
    n = 1000
    show("big_hist", sum((i % 7 + 1) * (0.001 * i) * 2 for i in range(n)), sum(i % 7 + 1 for i in range(n)))


# ----------------------------------------------------------------------------- scatter, map
def scatter(dest, is_, vs):
    out = np.array(dest, dtype=np.float64).copy()
    for i, v in zip(is_, vs):            # in order: the largest position wins
        if 0 <= i < len(out):
            out[i] = v
    return out


@section
def scatter_map():
    dest, is_, vs, s = [1.0, 2, 3, 4, 5], [3, -1, 0, 3, 9, 1, 3], [10.0, 20, 30, 40, 50, 60, 70], [1.0, 2, 3, 4, 5]
    f = lambda d, v: scatter(d, is_, v)
    show("scatter_dup", f(dest, vs), *vjp_fd(f, s, dest, vs))
    f = lambda d: scatter(d, [0, 2], [d[1] * d[2], d[0] * 3])
    show("scatter_self", vjp_fd(f, [1.0, 1, 1, 1], [1.0, 2, 3, 4])[0])
    dest = np.array([[1.0, 2], [3, 4], [5, 6]])
    vss = np.array([[7.0, 8], [9, 10], [11, 12]])
    is_ = [2, 0, 2]
    s = np.array([[1.0, 2], [3, 4], [5, 6]])
    f = lambda d, v: np.array([scatter(d[:, j], is_, v[:, j]) for j in range(2)]).T
    show("scatter_rows", *vjp_fd(f, s, dest, vss))
    xs, c, is_, s = [1.0, 2, 3], 2.0, [0, 2, 0, 1, 0], [1.0, 2, 3, 4, 5]
    show("gather", *vjp_fd(lambda x, c: np.array([x[i] * c for i in is_]), s, xs, c))
    a, b = [0.5, -1.0], [2.0, 3.0, -0.5]
    seed = np.array([[1.0, 0.0, 2.0], [-1.0, 1.0, 0.5]])
    show("outer", *vjp_fd(lambda a, b: np.array([[x * y + np.sin(x) for y in b] for x in a]), seed, a, b))
    xss = np.array([[1.0, 3.0], [2.0, 2.0], [0.5, 1.5]])
    seed = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
    show("normalise", *vjp_fd(lambda x: x / x.sum(axis=1, keepdims=True), seed, xss))
    xs, w = [1.0, -2.0, 0.5, 3.0], [0.25, 0.5, 2.0]
    def conv(x, w):
        n = len(x)
        return np.array([sum(x[(i + j) % n] * w[j] for j in range(3)) for i in range(n)])
    show("conv", *vjp_fd(conv, [1.0, 2.0, 3.0, 4.0], xs, w))
    xs = [2.0, -1.0, 0.5, 3.0]
    f = lambda x: np.array([x[0] * x[0], np.sin(x[1]), x[2] ** 3, x[3]])
    show("match_map", vjp_fd(f, [1.0, 1.0, 1.0, 1.0], xs)[0])


# ----------------------------------------------------------------------------------- loops
@section
def loops():
    def pair_loop(x, y, n=4):
        a, b = float(x), float(y)
        for i in range(n):
            a, b = a * b + i, a - b
        return np.array([a, b])
    show("pair_loop", *vjp_fd(pair_loop, [1.0, -0.5], 0.5, 1.5))
    def inplace(xs):
        ys = np.array(xs, dtype=np.float64).copy()
        for i in range(len(ys) - 1):
            ys[i + 1] = ys[i] * ys[i + 1] + ys[i + 1]
        return ys
    show("inplace", *vjp_fd(inplace, [1.0, 0.0, 2.0, -1.0], [0.5, -1.0, 2.0, 0.25]))
    def map_in_loop(xs):
        ys = np.array(xs, dtype=np.float64)
        for _ in range(3):
            ys = np.sin(ys) + 0.5 * ys
        return ys
    show("map_in_loop", *vjp_fd(map_in_loop, [1.0, 2.0, -1.0], [0.3, -1.2, 2.0]))
    def loop_in_map(xs):
        out = []
        for x in xs:
            acc = 1.0
            for i in range(4):
                acc = acc * x + i
            out.append(acc)
        return np.array(out)
    show("loop_in_map", *vjp_fd(loop_in_map, [1.0, 1.0, 2.0], [0.5, -2.0, 1.5]))
    def rows_loop(init, xss):
        acc = np.array(init, dtype=np.float64)
        for row in xss:
            acc = acc * row + 1
        return acc
    show("rows_loop", *vjp_fd(rows_loop, [1.0, -1.0], [2.0, 0.5], [[1.0, 3.0], [-2.0, 0.5], [0.25, 4.0]]))
    def power_iter(a, v):
        for _ in range(3):
            w = a @ v
            v = w / np.sqrt(np.sum(w * w))
        return v
    a = [[2.0, 1.0], [0.5, 3.0]]
    show("power_iter", *vjp_fd(power_iter, [1.0, 2.0], a, [1.0, 0.5]))
    def perm_update(xs):
        ys = np.array(xs, dtype=np.float64).copy()
        n = len(ys)
        for i in range(n):
            j = (i * 2) % n
            ys[j] = ys[j] * ys[i]
        return ys
    show("perm_update", *vjp_fd(perm_update, [1.0, 1.0, 1.0, 1.0, 1.0], [1.5, -0.5, 2.0, 0.75, 1.25]))
    def branchy(x):
        for i in range(5):
            x = x * 0.5 if x > 1 else x * x + 1
        return x
    for x0 in [0.7, 3.0]:
        show(f"branchy {x0}", branchy(x0), fd_grad(branchy, x0)[0])


# --------------------------------------------------------------------------------- nesting
@section
def nesting():
    x = np.array([1.0, 2.0, 3.0])
    p = np.exp(x) / np.exp(x).sum()
    show("softmax_jac", p, np.diag(p) - np.outer(p, p))
    x = np.array([2.0, 3.0, 0.5])
    jac = np.array(fd_grad_vec(np.cumprod, x))
    show("scan_jac", np.cumprod(x), jac)
    xs, v = np.array([1.0, -2.0, 0.5]), np.array([1.0, 0.5, -1.0])
    S, C = xs.sum(), np.sum(xs ** 3)
    H = np.diag(6 * xs * S) + 3 * xs[:, None] ** 2 + 3 * xs[None, :] ** 2
    grad = lambda y: 3 * y ** 2 * y.sum() + np.sum(y ** 3)
    show("hvp analytic, then fd of the gradient", H @ v, fd_grad(lambda y: float(grad(y) @ v), xs)[0])
    x = np.array([2.0, 0.0, 3.0])
    H = np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j])) for j in range(3)] for i in range(3)])
    show("prod_hvp", H @ np.ones(3))
    cum_grad = lambda y: vjp_fd(np.cumprod, [1.0, 1.0, 1.0], y)[0]
    show("scan_hvp (fd of fd)", fd_grad(lambda y: float(cum_grad(y) @ np.array([1.0, -1.0, 2.0])), [2.0, 3.0, 0.5])[0])
    vs, is_ = np.array([2.0, 5.0, 3.0, 4.0]), [0, 1, 0, 0]
    def grad_hist(v):
        g = np.zeros(4)
        for j in range(4):
            g[j] = np.prod([v[k] for k in range(4) if is_[k] == is_[j] and k != j])
        return g
    show("hist_hvp", fd_grad(lambda v: float(grad_hist(v).sum()), vs)[0])
    xs = np.array([1.0, 2.0])
    r = np.sqrt(np.sum((2 * xs) ** 2))
    show("custom_norm", r, 4 * xs)


# ------------------------------------------------------------------- integers, parameters
def wrap(v, bits, signed=True):
    v %= 1 << bits
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


@section
def integers():
    showi = lambda name, *vals: print(f"{name}: " + " ".join(str(v) for v in vals))
    xs = [100000, 100000, 3]
    showi("int_prod", [wrap(xs[1] * xs[2], 32), wrap(xs[0] * xs[2], 32), wrap(xs[0] * xs[1], 32)])
    showi("int_pow 7 13 (primal, derivative)", wrap(7 ** 13, 32), wrap(13 * 7 ** 12, 32))
    showi("u8 6*100", wrap(6 * 100, 8, signed=False))
    # i64 reduce_by_index with *: dest [3, 2], is [0, 0, 1, 5], vs [4000000007, 3000000019, 4, 7]
    a, b = 4000000007, 3000000019
    showi("int_rbi_mul", [wrap(3 * a * b, 64), 8], [wrap(a * b, 64), 4], [wrap(3 * b, 64), wrap(3 * a, 64), 2, 0])
    x, ys, s1, s2 = 1.5, np.array([1.0, -2.0, 4.0]), 2.0, np.array([1.0, 0.5, -1.0])
    show("tuple_io", s1 * ys.sum() + np.sum(s2 * ys), s1 * x + s2 * x)
    # linear model: loss = Σ (w·x_i + b − y_i)²
    X = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    y = np.array([1.0, 0.0, 2.0])
    w, b = np.array([0.25, -0.5]), 0.1
    r = X @ w + b - y
    show("linreg analytic", 2 * X.T @ r, 2 * r.sum())
    show("linreg fd", *fd_grad(lambda w, b: float(np.sum((X @ w + b - y) ** 2)), w, b))


@section
def loop_stored():
    def rnn_loss(w, h0, k, consumed=False):
        h = h0
        for _ in range(k):
            z = w @ h
            if consumed:
                z = z.copy()
                z[0] = 0.25
            h = np.tanh(z)
        return float(h.sum())

    w = np.array([[0.5, -0.3, 0.1], [0.2, 0.8, -0.4], [-0.6, 0.1, 0.3]])
    h0 = np.array([1.0, -1.0, 0.5])
    show("rnn", *fd_grad(lambda w, h0: rnn_loss(w, h0, 4), w, h0))
    w2 = np.array([[0.5, -0.3], [0.2, 0.8]])
    h2 = np.array([1.0, -1.0])
    show("consumed", *fd_grad(lambda w, h0: rnn_loss(w, h0, 3, True), w2, h2))

    def cell_loss(a, b, h0, k):
        h, c = h0, h0
        for _ in range(k):
            f, g = a @ h, b @ h
            c = 1 / (1 + np.exp(-f)) * c + np.tanh(g)
            h = np.tanh(c)
        return float(h.sum() + c.sum())

    a = np.array([[0.4, -0.2], [0.3, 0.5]])
    b = np.array([[0.1, 0.7], [-0.5, 0.2]])
    hc = np.array([0.5, -0.5])
    show("cell", *fd_grad(lambda a, b: cell_loss(a, b, hc, 3), a, b))

    def while_loss(w):
        h, i = h2, 0
        while i < 3 and h.sum() > -0.2:
            h, i = np.tanh(w @ h), i + 1
        return float(h.sum()), i

    show("while_rnn (iterations, gradient)", while_loss(w2)[1], *fd_grad(lambda w: while_loss(w)[0], w2))
    w3 = np.array([[0.9, -0.6], [0.7, 1.1]])
    show("long (twice)", *fd_grad(lambda w, h0: rnn_loss(w, h0, 40), w3, h2))


# ------------------------------------------------------------------------------- residuals
@section
def residuals():
    sig = lambda x: 1 / (1 + np.exp(-x))
    xs = np.array([0.3, -1.2, 2.0, 0.5])
    ys = np.array([1.5, 0.7, 2.5, 1.1])
    # map (\x y -> exp x * log y + tanh (x * y)), summed
    show("scalars", *fd_grad(lambda x, y: float(np.sum(np.exp(x) * np.log(y) + np.tanh(x * y))), xs, ys))
    # map exp: the residual is the map's result
    show("result", *vjp_fd(np.exp, [1.0, 2.0, -1.0, 0.5], xs))
    # pow and sin/cos
    show("pow_trig", *fd_grad(lambda x, y: float(np.sum(y ** x + np.sin(x) * np.cos(y))), xs, ys))
    # gates of a batch (nested maps), not in a loop
    a = np.array([[0.2, -0.4, 1.0], [0.7, 0.1, -0.3]])
    c = np.array([[1.0, 0.5, -0.5], [0.3, -0.2, 0.8]])
    show("gates", *fd_grad(lambda a, c: float(np.sum(sig(a) * c + sig(c) * np.tanh(a))), a, c))

    # an LSTM-like batch cell in a loop: the gates' maps are the next states
    u = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [-0.1, 0.2, 0.7]])
    h0 = np.array([[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]])

    def cell(u, h0, k):
        h, c = h0, h0
        for _ in range(k):
            z = h @ u.T
            c = sig(z) * c + sig(-z) * np.tanh(z)
            h = sig(z + 1) * np.tanh(c)
        return float(np.sum(h) + np.sum(c * c))

    show("batch_cell", *fd_grad(lambda u, h0: cell(u, h0, 3), u, h0))


# ------------------------------------------------------------------------------- restore
@section
def restore():
    arr = lambda xs: np.array(xs, dtype=np.float64).copy()

    def two_updates(xs):
        a = arr(xs)
        for i in range(1, len(a)):
            a[i] = a[i] + a[i - 1] * a[i - 1] * 0.5
            a[i - 1] = a[i - 1] * a[i]
        return a
    show("two_updates", *vjp_fd(two_updates, [1.0, 0.5, -2.0, 1.0, 0.25], [0.5, -1.0, 2.0, 0.25, 1.5]))

    def same_twice(xs):
        a = arr(xs)
        for i in range(len(a)):
            a[i] = a[i] * a[i] + 0.5
            a[i] = np.sin(a[i] + a[0])
        return a
    show("same_twice", *vjp_fd(same_twice, [1.0, -0.5, 2.0, 1.5], [0.5, -1.0, 2.0, 0.25]))

    def grid(ms):
        m = arr(ms)
        r, c = m.shape
        for k in range(r * c):
            i, j = k // c, k % c
            up = m[i - 1, j] if i > 0 else 1.0
            left = m[i, j - 1] if j > 0 else m[i, j]
            m[i, j] = m[i, j] * 0.5 + up * left
        return m
    show("grid", *vjp_fd(grid, [[1.0, 0.5, -1.0], [2.0, -0.5, 0.25]], [[0.5, -1.0, 2.0], [0.25, 1.5, -0.5]]))

    def data_index(xs):
        a = arr(xs)
        n = len(a)
        for i in range(n):
            k = int(np.floor(abs(a[i]) * 3)) % n
            a[k] = a[k] * 1.5 + a[i]
        return a
    show("data_index", *vjp_fd(data_index, [1.0, -1.0, 0.5, 2.0, 0.25], [0.4, 1.1, 0.7, 2.2, 0.1]))

    def while_update(xs):
        a = arr(xs)
        for i in range(len(a) - 1):
            a[i + 1] = a[i + 1] * np.cos(a[i]) + a[i]
        return a
    show("while_update", *vjp_fd(while_update, [1.0, 0.5, -2.0, 1.0], [0.5, -1.0, 2.0, 0.25]))

    def with_scalar(xs):
        a = arr(xs)
        t = 0.0
        for i in range(len(a)):
            t = t + a[i] * a[i]
            a[i] = t * 0.5
        return a * t
    show("with_scalar", *vjp_fd(with_scalar, [1.0, 0.5, -2.0, 1.0], [0.5, -1.0, 2.0, 0.25]))

    def unchanged(xs):
        t = 1.0
        for v in arr(xs):
            t = t * 0.5 + v * t
        return t
    show("unchanged", *vjp_fd(unchanged, 2.0, [0.5, -1.0, 2.0, 0.25]))

    def whole_read(xs):
        a = arr(xs)
        for i in range(len(a)):
            a[i] = np.sum(a * a) * 0.1
        return a
    show("whole_read", *vjp_fd(whole_read, [1.0, 0.5, -2.0, 1.0], [0.5, -1.0, 2.0, 0.25]))

    def rows(xss):
        out = arr(xss)
        for a in out:
            for i in range(len(a) - 1):
                a[i + 1] = a[i + 1] + a[i] * a[i] * 0.25
        return out
    def slice_update(xs):
        a = arr(xs)
        for i in range(len(a) - 1):
            a[i], a[i + 1] = a[i] * a[i + 1], a[i + 1] + a[i]
        return a
    show("slice_update", *vjp_fd(slice_update, [1.0, 0.5, -2.0, 1.0], [0.5, -1.0, 2.0, 0.25]))

    show("rows", *vjp_fd(rows, [[1.0, 0.5, -1.0], [2.0, -0.5, 0.25]], [[0.5, -1.0, 2.0], [0.25, 1.5, -0.5]]))


if __name__ == "__main__":
    names = sys.argv[1:] or list(SECTIONS)
    for name in names:
        print(f"== {name}")
        SECTIONS[name]()
