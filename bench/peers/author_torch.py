"""The paper author's PyTorch trainer on his MNIST and autoassociative examples, for timing against damlite.

Source: hmcalister/Hopfield-Network-PyTorch (MIT License, Copyright (c) 2024 Hayden
McAlister), ``examples/modernHopfieldMNIST.py`` and ``examples/modernHopfield.py`` driving
``HopfieldNetworkPyTorch.ModernHopfieldNetwork.ModernHopfieldNetwork.learnMemories``.
None of his code is copied here: this adapter imports his package from a checkout of his
repository (``--author-repo DIR`` of bench/cpu_epoch.py and bench/default_path.py, or
``DAMLITE_AUTHOR_REPO``).

:class:`AuthorTorch` runs his MNIST example's settings (K = 256, leaky rectified polynomial n = 10 with his +0.01 x
leak, T = 1.1, minibatch 128, lr 0.1 x 0.999, momentum 0.6, error power 1, clamped
memories, only the 10 class neurons trained, the first 10 000 training items). Adapted:
the data come from damlite's loader, encoded as his example encodes torchvision's
(pixel -> +1 where its 0..255 value is >= 0.8, else -1; labels bipolar one-hot), and
one ``learnMemories(maxEpochs=1)`` call per epoch with the learning rate his loop would
use in that epoch (his velocity restarts at zero in each call). His example has no
accuracy evaluation; :meth:`AuthorTorch.test_accuracy` takes one step of the class
neurons from the all -1 label state with his ``stepStates`` (identity activation: the
energy differences) and predicts the largest, as damlite's ``score`` does.

:class:`AuthorAutoassociative` runs his autoassociative example's "Learned Memory Storage"
(N = 100, K = 100 memories, 25 bipolar states, full batch: no item or neuron batches,
rectified polynomial n = 5, T = 50, i.e. similarities ``F(M^T x / (N T))``, lr 0.2, momentum
0.6, error power 1, clamped memories, every neuron trained) as one ``learnMemories`` call
over all the epochs (his velocity carried across them), from memories and states given
(damlite's, so that both start alike). Adapted: his example decays the learning rate by
0.999 an epoch; here the decay is 1 (a constant 0.2, as damlite's side of
bench/default_path.py runs it; the decay is one scalar product an epoch, nothing in the time).
"""
from __future__ import annotations

import os
import sys

import numpy as np

SETTINGS = dict(K=256, n=10, T=1.1, batch=128, lr=0.1, decay=0.999, momentum=0.6, items=10_000)
AUTOASSOCIATIVE = dict(N=100, K=100, states=25, n=5, T=50.0, lr=0.2, decay=1.0, momentum=0.6)


def bipolar_pixels(X01):
    """damlite's pixels 2 v / 255 - 1 back to 0..255, then the example's threshold (v < 0.8: -1, else +1)."""
    raw = (np.asarray(X01, dtype=np.float64) + 1.0) * 127.5
    return np.where(raw < 0.8, -1.0, 1.0)


def find_repo(path=None):
    """The checkout of the author's repository: ``path``, else $DAMLITE_AUTHOR_REPO; None when neither is set."""
    path = path or os.environ.get("DAMLITE_AUTHOR_REPO")
    if path and os.path.isdir(os.path.join(path, "HopfieldNetworkPyTorch")):
        return path
    return None


class AuthorTorch:
    """His network and trainer on the MNIST example, one epoch per :meth:`epoch` call."""

    def __init__(self, repo, X_train, y_train, X_test, y_test, seed=0):
        import torch  # noqa: PLC0415

        if repo not in sys.path:
            sys.path.insert(0, repo)
        from HopfieldNetworkPyTorch.ModernHopfieldNetwork import (  # noqa: PLC0415
            InteractionFunction, ModernHopfieldNetwork)

        self.torch = torch
        torch.manual_seed(seed)
        s = SETTINGS
        self.X = self._states(X_train[: s["items"]], y_train[: s["items"]])
        self.X_test = self._states(X_test, y_test)
        self.y_test = np.asarray(y_test)
        dimension = self.X.shape[0]
        self.mask = torch.arange(dimension - 10, dimension)
        self.net = ModernHopfieldNetwork(dimension, s["K"], "cpu",
                                         InteractionFunction.LeakyRectifiedPolynomialInteractionFunction(n=s["n"]),
                                         s["batch"], None)
        self.epochs_done = 0

    def _states(self, X, y):
        """(N + 10, items) float64 states: his layout (one column per item)."""
        onehot = -np.ones((len(y), 10))
        onehot[np.arange(len(y)), np.asarray(y)] = 1.0
        return self.torch.from_numpy(np.ascontiguousarray(np.concatenate([bipolar_pixels(X), onehot], 1).T))

    def epoch(self):
        s = SETTINGS
        self.net.learnMemories(self.X, maxEpochs=1, initialLearningRate=s["lr"] * s["decay"] ** self.epochs_done,
                               learningRateDecay=s["decay"], momentum=s["momentum"], initialTemperature=s["T"],
                               finalTemperature=s["T"], errorPower=1, clampMemories=True, neuronMask=self.mask,
                               verbose=0)
        self.epochs_done += 1

    def test_accuracy(self):
        X = self.X_test.clone()
        X[-10:, :] = -1.0
        self.net.stepStates(X, neuronMask=self.mask, activationFunction=lambda v: v, scalingFactor=1.0 / SETTINGS["T"])
        return float(np.mean(np.argmax(X[-10:, :].numpy(), axis=0) == self.y_test))


class AuthorAutoassociative:
    """His network and trainer on his autoassociative example, from damlite's ``memories`` (K, N) and ``states`` (P, N).

    :meth:`fit` trains ``epochs`` epochs in one ``learnMemories`` call and returns his loss history
    (each epoch's summed squared error / (N P)); :meth:`memories` gives the memories back as (K, N).
    """

    def __init__(self, repo, memories, states, seed=0):
        import torch  # noqa: PLC0415

        if repo not in sys.path:
            sys.path.insert(0, repo)
        from HopfieldNetworkPyTorch.ModernHopfieldNetwork import (  # noqa: PLC0415
            InteractionFunction, ModernHopfieldNetwork)

        torch.manual_seed(seed)  # his epochs shuffle the states (full batch: only the order of a sum)
        s = AUTOASSOCIATIVE
        memories, states = np.asarray(memories, dtype=np.float64), np.asarray(states, dtype=np.float64)
        if memories.shape != (s["K"], s["N"]) or states.shape != (s["states"], s["N"]):
            raise ValueError(f"memories {memories.shape}, states {states.shape}: want (K, N) = ({s['K']}, {s['N']}) "
                             f"and (P, N) = ({s['states']}, {s['N']})")
        self.net = ModernHopfieldNetwork(s["N"], s["K"], "cpu",
                                         InteractionFunction.RectifiedPolynomialInteractionFunction(n=s["n"]),
                                         None, None)
        self.net.setMemories(torch.from_numpy(np.ascontiguousarray(memories.T)))  # his layout: (N, K)
        self.X = torch.from_numpy(np.ascontiguousarray(states.T))  # (N, P): one column per state

    def fit(self, epochs):
        s = AUTOASSOCIATIVE
        return self.net.learnMemories(self.X, maxEpochs=epochs, initialLearningRate=s["lr"],
                                      learningRateDecay=s["decay"], momentum=s["momentum"],
                                      initialTemperature=s["T"], finalTemperature=s["T"], errorPower=1,
                                      clampMemories=True, verbose=0)

    def memories(self):
        return self.net.memories.detach().numpy().T.copy()
