"""JAX counterpart of lstm.fut: a single-layer LSTM over time-major sequences with a linear
readout compared with targets at every step, and its gradient with respect to the weights."""

import jax
import jax.numpy as jnp
from jax import lax


def sigmoid(x):
    return 1 / (1 + jnp.exp(-x))


def objective(w, u, b, wy, by, xs, ys):
    bs, h = xs.shape[1], u.shape[1]

    def step(carry, xy):
        hs, cs, loss = carry
        x, y = xy
        # gates[g][s][j] for the gates i, f, g, o
        gates = (jnp.einsum("sd,gjd->gsj", x, w) + jnp.einsum("sk,gjk->gsj", hs, u)
                 + b[:, None, :])
        c = sigmoid(gates[1]) * cs + sigmoid(gates[0]) * jnp.tanh(gates[2])
        hnew = sigmoid(gates[3]) * jnp.tanh(c)
        pred = hnew @ wy.T + by
        return (hnew, c, loss + jnp.sum((pred - y) ** 2)), None

    zeros = jnp.zeros((bs, h), xs.dtype)
    (_, _, loss), _ = lax.scan(step, (zeros, zeros, jnp.zeros((), xs.dtype)), (xs, ys))
    return loss


def grad(w, u, b, wy, by, xs, ys):
    return jax.grad(objective, argnums=(0, 1, 2, 3, 4))(w, u, b, wy, by, xs, ys)


ENTRIES = {"lstm_objective": objective, "lstm_grad": grad}
# The arguments the gradient is taken with respect to.
GRAD_ARGS = (0, 1, 2, 3, 4)
ROLES = {"primal": "lstm_objective", "grad": "lstm_grad"}

if __name__ == "__main__":
    from common import standalone

    standalone("lstm", ENTRIES)
