"""Input checks shared by every estimator of the project.

Each check raises ``ValueError`` (or ``TypeError`` for a wrong kind of object)
with a message that names the argument and what was expected.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np
from scipy import sparse

UNLABELED = -1


def plain(value):
    """``value`` as an error message shows it: numpy scalars and arrays as the Python values they hold.

    ``plain(np.float64(3.0))`` is ``'3.0'`` where ``repr`` gives ``'np.float64(3.0)'``;
    lists, tuples and dicts are converted entry by entry, anything else is its ``repr``.
    """
    return repr(_python(value))


def _python(value):
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if isinstance(value, dict):
        return {_python(key): _python(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_python(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def check_features(X, *, name="X", distances=True):
    """Return ``X`` as a finite float64 matrix.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    name : str
        Argument name used in error messages.
    distances : bool
        Also refuse an ``X`` whose squared distances between rows overflow
        float64 (:func:`check_distance_range`); false for a caller that
        rescales ``X`` itself.

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64
    """
    if sparse.issparse(X):
        raise TypeError(f"{name} is a sparse {type(X).__name__}; sparse input is not supported, "
                        f"pass a dense array ({name}.toarray())")
    if np.iscomplexobj(X):
        raise ValueError(f"Complex data not supported: {name} has dtype {np.asarray(X).dtype}")
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array, got {type(X).__name__}") from exc
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_samples, n_features), got shape {X.shape}; "
                         f"Reshape your data with {name}.reshape(-1, 1) if it has one feature")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has 0 sample(s) (shape={X.shape}) while a minimum of 1 is required.")
    if not np.isfinite(X).all():
        raise ValueError(f"{name} contains NaN or infinity")
    if distances:
        check_distance_range(X, name)
    return X


def check_distance_range(X, name="X"):
    """Refuse a finite float64 ``X`` whose squared distances between rows may overflow float64.

    ``||x - x'||^2 <= 4 d max|x|^2``: beyond that bound a kernel of the
    distances, or a projection of the rows, is computed from infinities.
    """
    largest = max(float(X.max()), -float(X.min()))
    limit = math.sqrt(np.finfo(np.float64).max / (4 * X.shape[1]))
    if largest > limit:
        raise ValueError(f"{name} holds values up to {largest:g}: with {X.shape[1]} features the squared distances "
                         f"between its rows overflow float64 beyond about {limit:g}; rescale {name} (for example "
                         f"divide it by its largest absolute value)")


def check_labels(y, n_samples, *, name="y"):
    """Return ``y`` as an int64 vector of length ``n_samples``.

    Float labels are accepted only when every value is integral.  The
    unlabeled marker is exactly ``-1``: any other negative label is refused,
    and so is an unsigned array holding its largest value (``-1`` wrapped,
    e.g. 255 in ``uint8``), which cannot be told from a real label.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(f"X and {name} have mismatched lengths: {n_samples} rows in X, {y.shape[0]} in {name}")
    if y.dtype.kind == "b" or y.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold integer ordinal labels (and {UNLABELED} for unlabeled rows), got dtype {y.dtype}")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all() or not np.array_equal(y, np.round(y)):
            raise ValueError(f"{name} must hold integer ordinal labels; found non-integer values")
    if y.dtype.kind == "u" and y.size and y.max() == np.iinfo(y.dtype).max:
        raise ValueError(f"{name} has the unsigned dtype {y.dtype} and holds {np.iinfo(y.dtype).max}, which is how "
                         f"{UNLABELED} (the unlabeled marker) wraps around; pass a signed integer array")
    y = y.astype(np.int64)
    bad = np.unique(y[(y < 0) & (y != UNLABELED)])
    if bad.size:
        raise ValueError(f"{name} holds negative labels {bad[:5].tolist()}; the only negative value allowed is "
                         f"{UNLABELED}, the unlabeled marker")
    return y


def ordinal_classes(y, classes=None):
    """Sorted ordinal levels: the distinct labeled values, or ``classes`` if given.

    Raises
    ------
    ValueError
        Fewer than two levels, or a labeled row whose label is not in ``classes``.
    """
    observed = np.unique(y[y != UNLABELED])
    if classes is None:
        levels = observed
    else:
        levels = check_classes(classes)
        unknown = np.setdiff1d(observed, levels)
        if unknown.size:
            raise ValueError(f"y holds labels {unknown.tolist()} that are not in classes {levels.tolist()}")
        levels = levels.astype(np.int64)
    if levels.size < 2:
        raise ValueError(f"need at least two ordinal classes among labeled rows, found {levels.size} class(es): "
                         f"{levels.tolist()}")
    return levels


def check_classes(classes):
    """``classes`` as a 1-d array of at least two distinct, increasing integer labels (no data needed)."""
    levels = np.asarray(classes)
    if levels.ndim != 1 or levels.dtype.kind not in "iuf" or not np.array_equal(levels, np.unique(levels)):
        raise ValueError(f"classes must be a 1-d array of distinct, increasing integer labels, got {plain(classes)}")
    if levels.dtype.kind == "f" and not np.array_equal(levels, np.round(levels)):
        raise ValueError(f"classes must hold integer labels, got {plain(classes)}")
    if levels.size < 2:
        raise ValueError(f"classes must list at least two ordinal levels, got {plain(classes)}")
    if np.any((levels < 0)):
        raise ValueError(f"classes must be non-negative ({UNLABELED} marks unlabeled rows), got {plain(classes)}")
    return levels.astype(np.int64)


def split_codes(y, levels):
    """Map labels to class codes ``0..k-1`` (``-1`` stays ``-1``) and check every split.

    Split ``j`` (``j = 0..k-2``) has negatives ``code <= j`` and positives ``code > j``.

    Raises
    ------
    ValueError
        If some split has no labeled positive or no labeled negative row.
    """
    codes = np.full(y.shape, UNLABELED, dtype=np.int64)
    labeled = y != UNLABELED
    codes[labeled] = np.searchsorted(levels, y[labeled])
    counts = np.bincount(codes[labeled], minlength=levels.size)
    below = np.cumsum(counts)[:-1]
    above = labeled.sum() - below
    for j, (n_neg, n_pos) in enumerate(zip(below, above)):
        if n_neg == 0 or n_pos == 0:
            raise ValueError(
                f"split {j} (label <= {levels[j]} vs label > {levels[j]}) has "
                f"{n_pos} positive and {n_neg} negative labeled rows; each split needs both"
            )
    return codes


def check_split_weights(values, name, low=0.0, high=1.0):
    """``values`` (a number or a 1-d array-like) as float64, every entry finite and in ``[low, high]``.

    The data-free part of a per-split parameter's check: the number of splits is known only at fit.
    """
    try:
        weights = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number or a 1-d array of numbers, got {plain(values)}") from None
    if weights.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-d array of numbers, got shape {weights.shape}")
    if not np.all(np.isfinite(weights) & (weights >= low) & (weights <= high)):
        raise ValueError(f"{name} values must lie in [{low:g}, {high:g}], got {np.atleast_1d(weights).tolist()}")
    return weights


def check_random_state(random_state):
    """Check that ``random_state`` is None, an integer >= 0 or a numpy generator (no seed is drawn)."""
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(f"random_state must be None, an integer >= 0 or a numpy Generator, got {plain(random_state)}")
    if random_state < 0:
        raise ValueError(f"random_state must be non-negative, got {random_state}")
    return random_state


SHARED_PARAMS = {"tradeoff": (0.0, 1.0), "pnu_mix": (-1.0, 1.0)}
"""Per-split weights some estimators take, with their ranges."""


def check_shared_params(estimator):
    """The data-free checks of the parameters several estimators share, for those ``estimator`` has.

    ``tradeoff`` and ``pnu_mix`` (numbers or 1-d arrays in their ranges), ``classes`` and
    ``random_state``: the checks their fits would make, run before any data is seen.
    """
    for name, (low, high) in SHARED_PARAMS.items():
        if hasattr(estimator, name):
            check_split_weights(getattr(estimator, name), name, low, high)
    if getattr(estimator, "classes", None) is not None:
        check_classes(estimator.classes)
    if hasattr(estimator, "random_state"):
        check_random_state(estimator.random_state)


def check_tradeoff(tradeoff, n_splits):
    """Return the per-split trade-off weights ``gamma^j`` as a vector in [0, 1]."""
    weights = check_split_weights(tradeoff, "tradeoff")
    if weights.ndim == 0:
        weights = np.full(n_splits, float(weights))
    if weights.shape != (n_splits,):
        raise ValueError(f"tradeoff must be a scalar or {n_splits} values (one per split), got shape {weights.shape}")
    return weights


def check_semisupervised(X, y, *, tradeoff=1.0, classes=None):
    """Validate a semi-supervised ordinal training set.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Ordinal labels; ``-1`` marks unlabeled rows.
    tradeoff : float or array-like of shape (k - 1,)
        Weights ``gamma^j`` of the labeled-only risk; unlabeled rows are
        required whenever some weight is below one.
    classes : array-like, optional
        The full ordered label set, when some levels are absent among labeled rows.

    Returns
    -------
    X : ndarray, float64
    codes : ndarray of int64
        Class codes ``0..k-1`` and ``-1`` for unlabeled rows.
    levels : ndarray
        The ordered labels (``classes_``).
    weights : ndarray of shape (k - 1,)
    """
    X = check_features(X)
    y = check_labels(y, X.shape[0])
    levels = ordinal_classes(y, classes)
    codes = split_codes(y, levels)
    return X, codes, levels, check_semisupervised_tradeoff(tradeoff, codes, levels.size - 1)


def check_semisupervised_tradeoff(tradeoff, codes, n_splits):
    """:func:`check_tradeoff`, and unlabeled rows among ``codes`` whenever some weight is below one."""
    weights = check_tradeoff(tradeoff, n_splits)
    if np.any(weights < 1) and not np.any(codes == UNLABELED):
        raise ValueError("no unlabeled rows (y == -1) were given, but some tradeoff value is below 1; "
                         "use tradeoff=1 for a purely supervised fit")
    return weights


def check_positive(value, name, *, integer=False):
    """Check that a hyperparameter is a positive real (or integer) number."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{name} must be a positive {'integer' if integer else 'number'}, got {plain(value)}")
    if not value > 0 or not np.isfinite(value):
        raise ValueError(f"{name} must be > 0, got {plain(value)}")
    return value


def check_memory_budget(value, name, *, optional=False):
    """``value`` as a memory budget in bytes: a finite number > 0, or None when ``optional``.

    Raises
    ------
    ValueError
        For anything else (``inf``, NaN, 0, a negative number, a string), naming ``name`` and the value.
    """
    if value is None and optional:
        return None
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not (isinstance(value, numbers.Integral) or math.isfinite(value)) or not value > 0):
        expected = "a finite positive number of bytes" + (" or None" if optional else "")
        raise ValueError(f"{name} must be {expected}, got {plain(value)}")
    return value


def check_path_settings(settings, path_params):
    """``settings`` as a non-empty list of dicts naming only ``path_params`` (the parameters a ``fit_path`` varies).

    Raises
    ------
    TypeError
        If ``settings`` is a single dict or not a sequence, or a setting is not a dict.
    ValueError
        If there is no setting or one names another parameter.
    """
    if isinstance(settings, dict):
        raise TypeError(f"settings must be a list of dicts (one per setting), got a single dict; "
                        f"pass [{plain(settings)}]")
    if isinstance(settings, (str, bytes)) or not isinstance(settings, Iterable):
        raise TypeError(f"settings must be a list of dicts (one per setting), got {type(settings).__name__}")
    settings = list(settings)
    if not settings:
        raise ValueError("settings must hold at least one setting, got none")
    for setting in settings:
        if not isinstance(setting, dict):
            raise TypeError(f"settings must be a list of dicts (one per setting), got a {type(setting).__name__} "
                            f"among them")
        other = sorted(set(setting) - set(path_params))
        if other:
            raise ValueError(f"settings may vary only {tuple(path_params)}, got {other}; "
                             "fit_path shares every other parameter")
    return settings
