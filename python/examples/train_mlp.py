"""Train a small MLP on two interleaved spirals with gradients computed by runic, and plot
the loss curve to mlp_loss.png (or the path given as the first argument).

    python python/examples/train_mlp.py [OUT.png] [STEPS]
"""

import os
import sys

import numpy as np

import runic

HERE = os.path.dirname(os.path.abspath(__file__))


def spirals(n, rng):
    """n points of two spirals in the plane, one-hot labels."""
    t = np.sqrt(rng.uniform(0, 1, n)) * 3 * np.pi
    label = rng.integers(0, 2, n)
    sign = np.where(label == 0, 1.0, -1.0)
    xs = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], axis=1) / 10
    xs += rng.normal(0, 0.05, xs.shape)
    ys = np.eye(2)[label]
    return xs.astype(np.float32), ys.astype(np.float32)


def train(steps=300, hidden=32, rate=0.5, seed=0):
    """Gradient descent with momentum; returns the loss before each step."""
    rng = np.random.default_rng(seed)
    xs, ys = spirals(512, rng)
    params = [
        (rng.normal(0, 1, (hidden, 2)) / np.sqrt(2)).astype(np.float32),
        np.zeros(hidden, np.float32),
        (rng.normal(0, 1, (2, hidden)) / np.sqrt(hidden)).astype(np.float32),
        np.zeros(2, np.float32),
    ]
    program = runic.compile(os.path.join(HERE, "mlp.fut"))
    step = runic.value_and_grad(program, "loss", wrt=(0, 1, 2, 3))
    velocity = [np.zeros_like(p) for p in params]
    losses = []
    for _ in range(steps):
        loss, *grads = step(*params, xs, ys)
        losses.append(float(loss))
        for k, g in enumerate(grads):
            velocity[k] = 0.9 * velocity[k] - rate * g
            params[k] = params[k] + velocity[k]
    return losses


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "mlp_loss.png"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    losses = train(steps)
    for k in range(0, steps, max(1, steps // 10)):
        print(f"step {k:4d}  loss {losses[k]:.4f}")
    print(f"final loss {losses[-1]:.4f}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_yscale("log")
    ax.set_title("MLP on two spirals, gradients from runic")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
