"""JAX counterpart of mlp.fut: 784-256-10 perceptron with a ReLU hidden layer, softmax
cross-entropy averaged over the batch, and its gradient with respect to weights and biases."""

import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp


def loss(w1, b1, w2, b2, xs, labels):
    hidden = jnp.maximum(0, xs @ w1.T + b1)
    logits = hidden @ w2.T + b2
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return jnp.mean(logsumexp(logits, axis=1) - picked)


def grad(w1, b1, w2, b2, xs, labels):
    return jax.grad(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, xs, labels)


ENTRIES = {"mlp_loss": loss, "mlp_grad": grad}
# The arguments the gradient is taken with respect to.
GRAD_ARGS = (0, 1, 2, 3)
ROLES = {"primal": "mlp_loss", "grad": "mlp_grad"}

if __name__ == "__main__":
    from common import standalone

    standalone("mlp", ENTRIES)
