"""The training example's loss falls."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import train_mlp  # noqa: E402


def test_training_lowers_the_loss():
    losses = train_mlp.train(steps=40)
    assert abs(losses[0] - 0.69) < 0.1  # about ln 2 at the start
    assert losses[-1] < 0.8 * losses[0]
