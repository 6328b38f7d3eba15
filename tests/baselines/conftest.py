import signal
import tracemalloc
from contextlib import contextmanager

import numpy as np
import pytest


def ordinal_problem(n=150, n_labeled=60, n_classes=3, d=2, seed=0):
    """Labels from a noisy sum of uniform features; rows past ``n_labeled`` unlabeled."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    latent = X.sum(axis=1) + 0.1 * rng.normal(size=n)
    y = np.digitize(latent, np.quantile(latent, np.arange(1, n_classes) / n_classes))
    y_train = y.copy()
    y_train[n_labeled:] = -1
    return X, y_train, y


def _traced_peak(fit):
    """Peak bytes that numpy and Python allocate while ``fit()`` runs (tracemalloc)."""
    tracemalloc.start()
    try:
        fit()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def traced_peak():
    return _traced_peak


@pytest.fixture
def problem():
    return ordinal_problem()


@pytest.fixture
def make_problem():
    return ordinal_problem


@contextmanager
def _deadline(seconds):
    """Fail (instead of hanging the suite) if the block runs longer than ``seconds``."""
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s: a hang")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def deadline():
    """``with deadline(seconds):`` fails the test if the block runs longer than ``seconds``."""
    return _deadline
