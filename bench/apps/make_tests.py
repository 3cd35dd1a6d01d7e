"""Generate tests/apps/APP.fut from bench/apps/APP.fut: the same program text, with test
blocks holding small literal inputs and expected outputs.

The inputs come from gen_data.py's generators at tiny sizes, rounded to three decimals so
that the test blocks stay readable (runic and numpy then read the same numbers). The
expected outputs are computed with the JAX counterpart in f64 and rounded to the entry's
result type. Before anything is written, every gradient is checked against central finite
differences of the f64 objective, coordinate by coordinate, and the k-means Hessian
diagonal against finite differences of the gradient; a disagreement aborts.

Usage: V/bin/python bench/apps/make_tests.py [--check] [APP...]
  --check  write nothing; exit 1 if a test file differs from what would be generated
           (e.g. the program in bench/apps changed and the test copy did not)
"""

import argparse
import os
import sys

import numpy as np

import gen_data
from common import APPS, HERE, jax_setup

TESTS_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "apps")

# Two datasets per app: (sizes, seed).
TEST_CASES = {
    "kmeans": [(dict(n=10, d=2, k=3), 1), (dict(n=12, d=3, k=4), 2)],
    "gmm": [(dict(n=5, d=3, k=2), 1), (dict(n=4, d=2, k=3), 2)],
    "lstm": [(dict(bs=2, t=3, d=3, h=2, o=2), 1), (dict(bs=1, t=2, d=2, h=3, o=1), 2)],
    "mlp": [(dict(bs=4, i=5, h=3, c=3), 1), (dict(bs=3, i=4, h=4, c=2), 2)],
}

LINE = 96  # wrap test-block lines at about this width


def test_inputs(app, sizes, seed):
    """Small inputs, floats rounded to three decimals (k-means centres stay the first
    points)."""
    rng = np.random.default_rng(seed)
    values = gen_data.MAKERS[app](rng, **sizes)
    out = []
    for v in values:
        v = np.asarray(v)
        out.append(np.round(v, 3).astype(v.dtype) if v.dtype.kind == "f" else v)
    if app == "kmeans":
        out[1] = out[0][: sizes["k"]].copy()
    return out


# ---------------------------------------------------------------- finite differences


def fd_check_grad(f, args, grad_args, grads, what):
    """Compare each gradient element with (f(x+h) - f(x-h)) / 2h in f64."""
    for gi, ai in enumerate(grad_args):
        x = np.asarray(args[ai], dtype=np.float64)
        for idx in np.ndindex(x.shape):
            h = 1e-6 * max(1.0, abs(x[idx]))
            plus, minus = [x.copy() for _ in range(2)]
            plus[idx] += h
            minus[idx] -= h
            fp = float(f(*args[:ai], plus, *args[ai + 1:]))
            fm = float(f(*args[:ai], minus, *args[ai + 1:]))
            fd = (fp - fm) / (2 * h)
            g = float(np.asarray(grads[gi])[idx])
            if abs(fd - g) > 1e-5 * max(1.0, abs(g)):
                sys.exit("%s: gradient of argument %d at %s is %r, finite differences %r"
                         % (what, ai, idx, g, fd))


def fd_check_hessian_diag(grad, points, centres, hess, what):
    """The k-means Hessian is diagonal: its diagonal is the derivative of the gradient
    along all ones, which central differences of the (piecewise linear) gradient give."""
    h = 1e-6
    ones = np.ones_like(centres)
    fd = (np.asarray(grad(points, centres + h * ones))
          - np.asarray(grad(points, centres - h * ones))) / (2 * h)
    if not np.allclose(fd, hess, rtol=1e-5, atol=1e-5):
        sys.exit("%s: Hessian diagonal %r, finite differences %r" % (what, hess, fd))


def expected(jax, app, args):
    """Every entry's results in f64 (a list of arrays per entry), after the checks."""
    mod = __import__(app)
    args64 = [np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a
              for a in args]
    results = {}
    for entry, fn in mod.ENTRIES.items():
        r = jax.jit(fn)(*args64)
        results[entry] = [np.asarray(v) for v in (r if isinstance(r, tuple) else (r,))]
    primal = jax.jit(mod.ENTRIES[mod.ROLES["primal"]])
    what = "%s %s" % (app, [np.shape(a) for a in args])
    fd_check_grad(primal, args64, mod.GRAD_ARGS, results[mod.ROLES["grad"]], what)
    if app == "kmeans":
        import jax.numpy as jnp

        grad = jax.jit(mod.grad)
        _, hess = jax.jvp(lambda c: grad(args64[0], c), (args64[1],),
                          (jnp.ones_like(args64[1]),))
        fd_check_hessian_diag(grad, args64[0], args64[1], np.asarray(hess), what)
    return results


# ---------------------------------------------------------------- text


def scalar_text(x, dtype):
    if dtype == np.float32:
        return str(np.float32(x)) + "f32"
    if dtype == np.float64:
        return repr(float(x)) + "f64"
    return "%d%s" % (int(x), dtype.name.replace("int", "i"))


def value_text(v, dtype):
    """One value on one line, every scalar with its type suffix."""
    v = np.asarray(v)
    if v.ndim == 0:
        return scalar_text(v, dtype)
    return "[" + ", ".join(value_text(row, dtype) for row in v) + "]"


def wrap(words, indent):
    """Test-block lines ('-- ' + indent + text) of at most LINE characters, broken after
    commas."""
    lines, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > LINE - 3 - len(indent):
            lines.append("-- " + indent + cur)
            cur = w
        else:
            cur = (cur + " " + w) if cur else w
    if cur:
        lines.append("-- " + indent + cur)
    return lines


def values_lines(keyword, values, dtypes):
    text = " ".join(value_text(v, dt) for v, dt in zip(values, dtypes))
    return wrap(("%s { %s }" % (keyword, text)).split(" "), "")


def program_text(app):
    """The program of bench/apps/APP.fut without its description and test block."""
    with open(os.path.join(HERE, app + ".fut")) as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip().startswith("-- =="))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("--"))
    return "\n".join(lines[end:]).lstrip("\n")


def out_dtypes(app, entry, n):
    """Result types of an entry: those of its arguments' float type (f64 for the GMM,
    f32 otherwise)."""
    return [np.dtype(np.float64 if app == "gmm" else np.float32)] * n


def test_file(jax, app):
    mod = __import__(app)
    cases = []
    for sizes, seed in TEST_CASES[app]:
        args = test_inputs(app, sizes, seed)
        cases.append((args, expected(jax, app, args)))
    out = [
        "-- Test copy of bench/apps/%s.fut (described there), generated by" % app,
        "-- bench/apps/make_tests.py: the same program on small data. Expected values are",
        "-- JAX's in f64, its gradients checked against central finite differences.",
        "-- Do not edit: change bench/apps/%s.fut and regenerate." % app,
    ]
    for bi, entry in enumerate(mod.ENTRIES):
        out.append("-- ==")
        if bi == 0:
            out.append("-- tags { autodiff apps }")
        out.append("-- entry: " + entry)
        for args, results in cases:
            res = results[entry]
            out += values_lines("input", args, [np.asarray(a).dtype for a in args])
            out += values_lines("output", res, out_dtypes(app, entry, len(res)))
        out.append("")
    return "\n".join(out) + "\n" + program_text(app)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("apps", nargs="*", default=APPS)
    ap.add_argument("--check", action="store_true",
                    help="only compare with the existing files; exit 1 if any differs")
    args = ap.parse_args()
    jax = jax_setup()
    stale = 0
    for app in args.apps:
        path = os.path.join(TESTS_DIR, app + ".fut")
        text = test_file(jax, app)
        if args.check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print("%s is out of date: run bench/apps/make_tests.py" % path)
                stale += 1
        else:
            os.makedirs(TESTS_DIR, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print(path)
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
