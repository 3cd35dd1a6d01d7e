#!/usr/bin/env python3
"""Expected values of tests/loops/loop_kernels.fut, in numpy (float64); never from runic.
Run: python3 tests/loops/oracle.py"""
import numpy as np


def fmt(v):
    a = np.asarray(v, dtype=np.float64)
    if a.ndim == 0:
        return repr(float(a))
    return "[" + ", ".join(repr(float(x)) for x in a) + "]"


def logistic(r, x, n):
    for _ in range(n):
        x = r * x * (1 - x)
    return x


def rhs(p, s):
    return np.array([p[0] * s[0] - p[1] * s[0] * s[1], p[2] * s[0] * s[1] - p[3] * s[1]])


def rk4(p, h, steps, s0):
    s = np.array(s0, dtype=np.float64)
    for _ in range(steps):
        k1 = rhs(p, s)
        k2 = rhs(p, h / 2 * k1 + s)
        k3 = rhs(p, h / 2 * k2 + s)
        k4 = rhs(p, h * k3 + s)
        s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s


def halving(xs, k):
    a = np.array(xs, dtype=np.float64)
    for i in range(k):
        a = a * 0.5 + i
    return a


p, s0 = np.array([1.1, 0.4, 0.1, 0.4]), [10.0, 10.0]
print("logistic:", fmt(logistic(3.7, 0.2, 50)))
print("lotka_volterra:", fmt(rk4(p, 0.01, 500, s0)))
f = lambda q: np.prod(rk4(q, 0.01, 200, s0))
g = []
for k in range(4):
    e = np.zeros(4)
    e[k] = 1e-6
    g.append((f(p + e) - f(p - e)) / 2e-6)
print("lotka_volterra_grad:", fmt(g))
print("halving:", fmt(halving([1.0, 2.0, 3.0], 4)))
for n in (3, 64, 100):
    print(f"halving_sum {n}:", fmt(np.sum(halving(np.arange(n) * 0.25 - 10, 4))))
