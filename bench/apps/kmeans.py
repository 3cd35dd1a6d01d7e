"""JAX counterpart of kmeans.fut: the k-means objective as a function of the centres, its
gradient, and one Newton step with the Hessian diagonal from jvp of the gradient."""

import jax
import jax.numpy as jnp


def cost(points, centres):
    d2 = jnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
    return jnp.sum(jnp.min(d2, axis=1))


def grad(points, centres):
    return jax.grad(cost, argnums=1)(points, centres)


def newton(points, centres):
    g, h = jax.jvp(lambda c: grad(points, c), (centres,), (jnp.ones_like(centres),))
    return centres - g / h


ENTRIES = {"kmeans_cost": cost, "kmeans_grad": grad, "kmeans_newton": newton}
# The arguments the gradient is taken with respect to.
GRAD_ARGS = (1,)
ROLES = {"primal": "kmeans_cost", "grad": "kmeans_grad", "newton": "kmeans_newton"}

if __name__ == "__main__":
    from common import standalone

    standalone("kmeans", ENTRIES)
