"""JAX counterpart of gmm.fut: GMM log-likelihood with a Wishart prior (ADBench
parameterisation, `l` packed row by row) and its gradient with respect to all parameters."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln, logsumexp


def qmats(q, l):
    """Dense factors: exp q on the diagonal, l (row-major lower triangle) below it."""
    k, d = q.shape
    rows, cols = np.tril_indices(d, -1)  # row by row: (1,0), (2,0), (2,1), ...
    lower = jnp.zeros((k, d, d), q.dtype).at[:, rows, cols].set(l)
    return lower + jax.vmap(jnp.diag)(jnp.exp(q))


def log_gamma_distrib(a, p):
    j = jnp.arange(1, p + 1)
    return 0.25 * p * (p - 1) * jnp.log(jnp.pi) + jnp.sum(gammaln(a + 0.5 * (1 - j)))


def wishart_prior(gamma, m, q, l):
    k, d = q.shape
    nn = d + m + 1
    c = nn * d * (jnp.log(gamma) - 0.5 * jnp.log(2.0)) - log_gamma_distrib(0.5 * nn, d)
    frob = jnp.sum(jnp.exp(q) ** 2, axis=1) + jnp.sum(l**2, axis=1)
    return jnp.sum(0.5 * gamma * gamma * frob - m * jnp.sum(q, axis=1)) - k * c


def objective(alphas, means, q, l, x, gamma, m):
    n, d = x.shape
    qs = qmats(q, l)
    xc = x[:, None, :] - means[None, :, :]  # [n][K][d]
    lx = jnp.einsum("kij,nkj->nki", qs, xc)
    inner = alphas + jnp.sum(q, axis=1) - 0.5 * jnp.sum(lx**2, axis=-1)
    return (
        -n * d * 0.5 * jnp.log(2 * jnp.pi)
        + jnp.sum(logsumexp(inner, axis=1))
        - n * logsumexp(alphas)
        + wishart_prior(gamma, m, q, l)
    )


def grad(alphas, means, q, l, x, gamma, m):
    return jax.grad(objective, argnums=(0, 1, 2, 3))(alphas, means, q, l, x, gamma, m)


ENTRIES = {"gmm_objective": objective, "gmm_grad": grad}
# The arguments the gradient is taken with respect to.
GRAD_ARGS = (0, 1, 2, 3)
ROLES = {"primal": "gmm_objective", "grad": "gmm_grad"}

if __name__ == "__main__":
    from common import standalone

    standalone("gmm", ENTRIES)
