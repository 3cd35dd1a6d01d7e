#!/usr/bin/env python3
"""Independent oracle for tests/ad_nested/accumulators.fut: the same functions in JAX
(float64), differentiated by JAX's own vjp/jvp, never by runic.
Run `/work/venv-jax/bin/python tests/ad_nested/oracle_jax.py`.
"""
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)


def vjp(f, x, ct):
    return jax.vjp(f, x)[1](ct)[0]


def jvp(f, x, t):
    return jax.jvp(f, (x,), (t,))[1]


def shift(zs, k=1):
    return jnp.roll(zs, -k)  # zs[(i + k) % n]


def ring(zs):
    return jnp.sum(zs * shift(zs))


def g(zs):
    return jnp.sum(jnp.sin(zs) * shift(zs))


def grad(zs):
    return vjp(g, zs, 1.0)


def h(zs):
    n = zs.shape[0]
    idx = jnp.arange(n)

    def one(i):
        a = zs[i]
        for j in range(3):
            a = a * zs[(i + j) % n] + 0.5
        return a

    return jnp.sum(jax.vmap(one)(idx))


def rows(a, zs):
    return jnp.sum(zs * jnp.sum(jnp.cos(a), axis=1))


def show(name, x):
    vals = jnp.ravel(jnp.asarray(x)).tolist()
    text = ", ".join(repr(round(v, 9) + 0.0) for v in vals)
    print(f"{name}: [{text}]" if jnp.ndim(x) else f"{name}: {text}")


zs = jnp.array([0.5, -1.0, 2.0, 0.3])
v = jnp.array([1.0, 0.5, -0.25, 2.0])
w = jnp.array([0.1, 0.2, 0.3, -0.4])
ones = jnp.ones(3)
show("ring_hessian", vjp(lambda z: vjp(ring, z, 1.0), jnp.array([1.0, 2.0, 3.0]), ones))
show("hvp", vjp(grad, zs, v))
show("fwd_rev", jvp(grad, zs, v))
show("rev_fwd", vjp(lambda z: jvp(g, z, v), zs, 1.0))
show("rev_fwd_rev", vjp(lambda z: jvp(grad, z, v), zs, w))
show("rev_rev_rev", vjp(lambda z: vjp(grad, z, v), zs, w))
show("loop_in_map", vjp(lambda z: vjp(h, z, 1.0), zs, v))
a = jnp.array([[0.5, -1.0], [2.0, 0.3]])
show("rows", vjp(lambda a: vjp(lambda a: rows(a, jnp.array([1.0, 0.5])), a, 1.0), a,
                 jnp.array([[0.1, 0.2], [0.3, -0.4]])))
seeds = jnp.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
show("mjp_hessian_rows", jnp.stack([vjp(grad, zs, s) for s in seeds]))
show("third_rows", jnp.stack([vjp(lambda z: vjp(grad, z, v), zs, s) for s in (w, v)]))
