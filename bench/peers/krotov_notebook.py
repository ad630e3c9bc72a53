"""Krotov & Hopfield's MNIST training loop, from their notebook, for timing against damlite.

Source: DimaKrotov/Dense_Associative_Memory, ``Dense_Associative_Memory_training.ipynb``
(Apache License 2.0, Copyright Dmitry Krotov). The body of :meth:`KrotovNotebook.epoch`
is the notebook's training loop with its variable names and operations unchanged; only
the data loading is adapted (MNIST from damlite's loader instead of ``mnist_all.mat``,
same encoding 2x/255 - 1 and bipolar one-hot labels), the plotting is dropped, and
the random numbers come from a seeded Generator. Test accuracy uses the notebook's
own test loop.
"""
from __future__ import annotations

import numpy as np


class KrotovNotebook:
    """The notebook's state (KS, VKS, ...) and its loops, one epoch per call."""

    # the notebook's settings
    K = 100
    n = 20
    m = 30
    eps0 = 4.0e-2
    f = 0.998
    p = 0.6
    Temp_in = 540.
    Temp_f = 540.
    thresh_pret = 200
    Num = 1000
    NumT = 5000
    mu = -0.3
    sigma = 0.3
    prec = 1.0e-30

    def __init__(self, X_train, y_train, X_test, y_test, seed=0):
        Nc = 10
        self.Nc = Nc
        self.rng = np.random.default_rng(seed)
        # data loading, adapted: images already 2x/255 - 1 in damlite's loader, (N, samples) as in the notebook
        self.M = np.ascontiguousarray(np.asarray(X_train, dtype=np.float64).T)
        self.Lab = -np.ones((Nc, len(y_train)))
        self.Lab[np.asarray(y_train), np.arange(len(y_train))] = 1.0
        self.MT = np.ascontiguousarray(np.asarray(X_test, dtype=np.float64).T)
        self.LabT = -np.ones((Nc, len(y_test)))
        self.LabT[np.asarray(y_test), np.arange(len(y_test))] = 1.0
        self.N = self.M.shape[0]
        self.Ns = self.M.shape[1]
        self.NsT = self.MT.shape[1]
        N, K, Num, NumT = self.N, self.K, self.Num, self.NumT
        self.KS = self.rng.normal(self.mu, self.sigma, (K, N + Nc))
        self.VKS = np.zeros((K, N + Nc))
        self.aux = -np.ones((Nc, Num * Nc))
        for d in range(Nc):
            self.aux[d, d * Num:(d + 1) * Num] = 1.
        self.auxT = -np.ones((Nc, NumT * Nc))
        for d in range(Nc):
            self.auxT[d, d * NumT:(d + 1) * NumT] = 1.
        self.epochs_done = 0
        self.err_tr = []

    def epoch(self):
        """One pass of the notebook's ``for nep in range(Nep)`` loop, training part (its code)."""
        K, N, Nc, Ns, Num, n, m, p = self.K, self.N, self.Nc, self.Ns, self.Num, self.n, self.m, self.p
        KS, VKS, M, Lab, aux, prec = self.KS, self.VKS, self.M, self.Lab, self.aux, self.prec
        nep = self.epochs_done
        eps = self.eps0 * self.f**nep
        if nep <= self.thresh_pret:
            Temp = self.Temp_in + (self.Temp_f - self.Temp_in) * nep / self.thresh_pret
        else:
            Temp = self.Temp_f
        beta = 1. / Temp**n

        perm = self.rng.permutation(Ns)
        M = M[:, perm]
        Lab = Lab[:, perm]
        num_correct = 0
        for k in range(Ns // Num):
            v = M[:, k * Num:(k + 1) * Num]
            t_R = Lab[:, k * Num:(k + 1) * Num]
            t = np.reshape(t_R, (1, Nc * Num))

            u = np.concatenate((v, -np.ones((Nc, Num))), axis=0)
            uu = np.tile(u, (1, Nc))
            vv = np.concatenate((uu[:N, :], aux), axis=0)

            KSvv = np.maximum(np.dot(KS, vv), 0)
            KSuu = np.maximum(np.dot(KS, uu), 0)

            Y = np.tanh(beta * np.sum(KSvv**n - KSuu**n, axis=0))  # Forward path, Eq 9
            Y_R = np.reshape(Y, (Nc, Num))

            # Gradients of the loss function
            d_KS = np.dot(np.tile((t - Y)**(2 * m - 1) * (1 - Y) * (1 + Y), (K, 1)) * KSvv**(n - 1), vv.T) - np.dot(
                np.tile((t - Y)**(2 * m - 1) * (1 - Y) * (1 + Y), (K, 1)) * KSuu**(n - 1), uu.T)

            VKS = p * VKS + d_KS
            nc = np.amax(np.absolute(VKS), axis=1).reshape(K, 1)
            nc[nc < prec] = prec
            ncc = np.tile(nc, (1, N + Nc))
            KS += eps * VKS / ncc
            KS = np.clip(KS, a_min=-1., a_max=1.)

            correct = np.argmax(Y_R, axis=0) == np.argmax(t_R, axis=0)
            num_correct += np.sum(correct)
        self.err_tr.append(100. * (1.0 - num_correct / Ns))
        self.KS, self.VKS, self.M, self.Lab = KS, VKS, M, Lab
        self.epochs_done += 1

    def test_accuracy(self):
        """The notebook's test loop: fraction of test digits classified correctly."""
        K, N, Nc, NumT, n = self.K, self.N, self.Nc, self.NumT, self.n
        KS, MT, LabT, auxT = self.KS, self.MT, self.LabT, self.auxT
        nep = max(self.epochs_done - 1, 0)
        Temp = self.Temp_in + (self.Temp_f - self.Temp_in) * nep / self.thresh_pret if nep <= self.thresh_pret \
            else self.Temp_f
        beta = 1. / Temp**n
        num_correct = 0
        for k in range(self.NsT // NumT):
            v = MT[:, k * NumT:(k + 1) * NumT]
            t_R = LabT[:, k * NumT:(k + 1) * NumT]
            u = np.concatenate((v, -np.ones((Nc, NumT))), axis=0)
            uu = np.tile(u, (1, Nc))
            vv = np.concatenate((uu[:N, :], auxT), axis=0)
            KSvv = np.maximum(np.dot(KS, vv), 0)
            KSuu = np.maximum(np.dot(KS, uu), 0)
            Y = np.tanh(beta * np.sum(KSvv**n - KSuu**n, axis=0))  # Forward path, Eq 9
            Y_R = np.reshape(Y, (Nc, NumT))
            correct = np.argmax(Y_R, axis=0) == np.argmax(t_R, axis=0)
            num_correct += np.sum(correct)
        del K
        return float(num_correct / self.NsT)
