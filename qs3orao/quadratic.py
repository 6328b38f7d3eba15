r"""One closed-form engine for every squared-loss pairwise AUC risk of this package.

All the risks here (PNU-AUC, SAMULT, the paper's ordinal objective) are
weighted sums of pair risks between groups of rows,

.. math::

    R(f) = c_0 + \sum_t w_t L(A_t, B_t), \qquad
    L(A, B) = \operatorname{mean}_{a \in A,\, b \in B} (1 - f(a) + f(b))^2,

where a group is a union of "atoms": the class codes ``0..k-1`` and the
unlabeled rows (``-1``).  ``L(A, B)`` is quadratic in the scores ``F``, with

* Hessian ``2 w [diag(1_A / |A| + 1_B / |B|) - (e_A e_B^T + e_B e_A^T) / (|A| |B|)]``
  (this holds for overlapping and equal groups too, e.g. PNU-AUC's ``L(P, P)``),
* gradient at ``F = 0``: ``2 w (e_B / |B| - e_A / |A|)``, and value ``w`` at ``F = 0``,

so ``R = F^T H F / 2 + g^T F + const`` with ``H`` = a diagonal that is constant
on every atom plus a small low-rank part ``E C E^T`` (``E``: indicators of the
distinct groups).  A linear model ``F = Phi alpha`` then has the Hessian
``Phi^T H Phi = sum_atoms d_g G_g + M^T C M`` built from per-atom feature
sums and second moments ``G_g = sum_{i in g} phi_i phi_i^T``: one pass over
the rows, O(n b^2) time, no pairwise loop.  A kernel expansion over every
training row (``F = K c``, RKHS norm) gives ``(H K + lam I) c = -g`` instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from threadpoolctl import threadpool_limits

from .chunking import chunk_rows
from .objective import pair_risk
from .validation import UNLABELED

__all__ = ["PairTerm", "PairwiseRisk", "QuadraticForm", "GroupMoments", "split_groups", "samult_risk",
           "pnu_risk", "ordinal_pairwise_risk", "solve_feature_space", "solve_feature_space_path", "solve_kernel_expansion",
           "solve_kernel_expansion_path", "kernel_root", "rows_in"]


def rows_in(codes, atoms):
    """Boolean mask of the rows whose code is one of ``atoms``."""
    return np.isin(codes, atoms)


@dataclass(frozen=True)
class PairTerm:
    """``weight * L(upper, lower)``; ``upper`` and ``lower`` are tuples of atoms (class codes, -1)."""

    weight: float
    upper: tuple
    lower: tuple


@dataclass(frozen=True)
class PairwiseRisk:
    """``offset + sum_t weight_t L(upper_t, lower_t)``."""

    terms: tuple
    offset: float = 0.0

    def __add__(self, other):
        return PairwiseRisk(self.terms + other.terms, self.offset + other.offset)

    def scaled(self, factor):
        return PairwiseRisk(tuple(PairTerm(factor * t.weight, t.upper, t.lower) for t in self.terms),
                            factor * self.offset)

    def value(self, F, codes):
        """Risk of the scores ``F`` and its gradient in ``F``, by the closed-form pair risk.

        Returns
        -------
        value : float
        grad : ndarray of shape (n,)
        """
        value, grad = self.offset, np.zeros(F.shape[0])
        for term in self.terms:
            upper, lower = rows_in(codes, term.upper), rows_in(codes, term.lower)
            v, ga, gb = pair_risk(F[upper], F[lower])
            value += term.weight * v
            grad[upper] += term.weight * ga
            grad[lower] += term.weight * gb
        return value, grad

    def quadratic(self, counts):
        """The risk as a quadratic form in ``F``, given the row count of every atom.

        Parameters
        ----------
        counts : dict
            Atom -> number of rows.

        Returns
        -------
        QuadraticForm
        """
        groups = sorted({t.upper for t in self.terms} | {t.lower for t in self.terms})
        index = {group: s for s, group in enumerate(groups)}
        size = {group: sum(counts.get(a, 0) for a in group) for group in groups}
        diag = {atom: 0.0 for atom in counts}
        grad = {atom: 0.0 for atom in counts}
        coupling = np.zeros((len(groups), len(groups)))
        for t in self.terms:
            n_a, n_b = size[t.upper], size[t.lower]
            if n_a == 0 or n_b == 0:
                raise ValueError(f"a pair term needs rows on both sides, got {n_a} and {n_b} rows")
            for atom in t.upper:
                diag[atom] += 2.0 * t.weight / n_a
                grad[atom] -= 2.0 * t.weight / n_a
            for atom in t.lower:
                diag[atom] += 2.0 * t.weight / n_b
                grad[atom] += 2.0 * t.weight / n_b
            cross = -2.0 * t.weight / (n_a * n_b)
            coupling[index[t.upper], index[t.lower]] += cross
            coupling[index[t.lower], index[t.upper]] += cross
        constant = self.offset + sum(t.weight for t in self.terms)
        return QuadraticForm(tuple(groups), coupling, diag, grad, constant)


@dataclass(frozen=True)
class QuadraticForm:
    """``R(F) = F^T (D + E C E^T) F / 2 + g^T F + constant``, with ``D`` and ``g`` constant on atoms."""

    groups: tuple
    coupling: np.ndarray
    diag: dict
    grad: dict
    constant: float

    def per_row(self, values, codes):
        """Expand an atom -> value dict to one value per row."""
        out = np.zeros(codes.shape[0])
        for atom, v in values.items():
            out[codes == atom] = v
        return out


def split_groups(j, n_classes):
    """Atoms of split ``j``: positives (codes ``> j``) and negatives (codes ``<= j``)."""
    return tuple(range(j + 1, n_classes)), tuple(range(j + 1))


def samult_risk(j, n_classes, tradeoff):
    """SAMULT risk of split ``j``: ``gamma L(P, N) + (1 - gamma) (L(P, U) + L(U, N) - 1/2)``.

    Xie and Li (2018) treat every unlabeled row as both positive and negative;
    it is also the paper's ``R^j_PNU`` (its Equation (8)).
    """
    pos, neg = split_groups(j, n_classes)
    terms = [PairTerm(tradeoff, pos, neg)] if tradeoff > 0 else []
    if tradeoff < 1:
        terms += [PairTerm(1.0 - tradeoff, pos, (UNLABELED,)), PairTerm(1.0 - tradeoff, (UNLABELED,), neg)]
    return PairwiseRisk(tuple(terms), -0.5 * (1.0 - tradeoff))


def pnu_risk(j, n_classes, pnu_mix, prior):
    r"""PNU-AUC risk of split ``j`` (Sakai, Niu and Sugiyama, 2018).

    ``(1 - pnu_mix) R_PN + pnu_mix R_PU`` for ``pnu_mix >= 0`` and ``(1 + pnu_mix) R_PN - pnu_mix R_NU``
    otherwise, with the unbiased PU and NU estimates of the PN risk

    .. math::

        R_{PU} = (L(P, U) - \theta_P L(P, P)) / \theta_N, \qquad
        R_{NU} = (L(U, N) - \theta_N L(N, N)) / \theta_P,

    where ``theta_P = prior`` is the positive class prior of the split and
    ``L(P, P)`` averages over all ordered pairs, self-pairs included, as the
    original code does.  The negative weights make the risk non-convex when
    the prior is large; the solvers warn if the regularised system is not
    positive definite.
    """
    pos, neg = split_groups(j, n_classes)
    weight = abs(pnu_mix)
    terms = [PairTerm(1.0 - weight, pos, neg)] if weight < 1 else []
    if pnu_mix > 0:
        terms += [PairTerm(weight / (1.0 - prior), pos, (UNLABELED,)),
                  PairTerm(-weight * prior / (1.0 - prior), pos, pos)]
    elif pnu_mix < 0:
        terms += [PairTerm(weight / prior, (UNLABELED,), neg),
                  PairTerm(-weight * (1.0 - prior) / prior, neg, neg)]
    return PairwiseRisk(tuple(terms))


def ordinal_pairwise_risk(n_classes, tradeoff):
    """The paper's ``R_mu = mean_j R^j_PNU`` for one shared function (equals :func:`qs3orao.objective.ordinal_risk`)."""
    total = PairwiseRisk(())
    for j, weight in enumerate(tradeoff):
        total = total + samult_risk(j, n_classes, float(weight))
    return total.scaled(1.0 / len(tradeoff))


def _zeros(b):
    # Fortran order: BLAS and LAPACK update these in place, without copies.
    return np.zeros((b, b), order="F")


def _add_gram(target, block, weight):
    """``target += weight * block^T block`` in place (``target`` Fortran-ordered)."""
    # block.T is a column-major view of the row-major block: no copy on the way to BLAS.
    linalg.blas.dgemm(weight, block.T, block.T, beta=1.0, c=target, trans_b=True, overwrite_c=True)


@dataclass
class GroupMoments:
    """Per-atom row count, feature sum and second moment ``G_g = sum_{i in g} phi_i phi_i^T``.

    Attributes
    ----------
    counts : dict
        Atom -> number of rows.
    sums : dict
        Atom -> ndarray of shape (b,).
    second : dict or None
        Atom -> ``G_g``, shape (b, b); kept when several risks reuse the moments.
    weighted : ndarray of shape (b, b) or None
        ``sum_g d_g G_g`` for the one risk given to :meth:`accumulate`; then
        ``second`` is None and memory is one ``b x b`` matrix instead of one per atom.
    risk : PairwiseRisk or None
        The risk ``weighted`` was built for.
    refill : callable or None
        Makes ``weighted`` again (one more pass over the rows) once a solve has consumed it.
    """

    counts: dict
    sums: dict
    second: dict | None
    weighted: np.ndarray | None = None
    risk: PairwiseRisk | None = None
    refill: Callable | None = None

    @staticmethod
    def nbytes(n_matrices, n_atoms, n_basis):
        """Bytes of ``n_matrices`` ``b x b`` moments and ``n_atoms`` sums."""
        return 8 * (n_matrices * n_basis * n_basis + n_atoms * n_basis)

    @classmethod
    def accumulate(cls, features, X, codes, n_basis, risk=None):
        """One pass over the rows of ``X`` in chunks; ``features(X_chunk)`` gives ``(rows, b)``.

        With ``risk`` given, only the weighted sum of second moments that this
        risk's Hessian needs is accumulated.
        """
        counts = {int(a): int(np.sum(codes == a)) for a in np.unique(codes)}
        sums = {a: np.zeros(n_basis) for a in counts}
        diag = None if risk is None else risk.quadratic(counts).diag
        second = None if risk is not None else {a: _zeros(n_basis) for a in counts}
        weighted = None if risk is None else _zeros(n_basis)
        order = np.argsort(codes, kind="stable")
        step = chunk_rows(n_basis)
        for start in range(0, order.size, step):
            rows = order[start:start + step]
            phi = features(X[rows])
            chunk_codes = codes[rows]
            for a in np.unique(chunk_codes):
                block = phi[chunk_codes == a]
                sums[int(a)] += block.sum(axis=0)
                if risk is None:
                    _add_gram(second[int(a)], block, 1.0)
                elif diag[int(a)] != 0.0:
                    _add_gram(weighted, block, diag[int(a)])
        refill = None if risk is None else lambda: cls.accumulate(features, X, codes, n_basis, risk).weighted
        return cls(counts, sums, second, weighted, risk, refill)


def _warn_not_convex():
    warnings.warn("the regularised risk is not convex here (its Hessian is not positive definite); "
                  "returning its stationary point", RuntimeWarning, stacklevel=4)


def _solve_symmetric(system, rhs, rebuild):
    """Solve ``system x = rhs`` by Cholesky; if not positive definite, warn and use LDL^T.

    ``system`` is overwritten by its factor; ``rebuild()`` makes it again for the fallback.
    """
    factor, info = linalg.lapack.dpotrf(system, lower=False, overwrite_a=True)
    if info == 0:
        return linalg.cho_solve((factor, False), rhs, check_finite=False)
    _warn_not_convex()
    del system, factor  # the failed factor is freed before the system is made again
    return linalg.solve(rebuild(), rhs, assume_a="sym", check_finite=False)


def _check_lams(lams):
    lams = np.asarray(lams, dtype=np.float64).reshape(-1)
    if lams.size == 0 or not np.all(np.isfinite(lams)) or np.any(lams <= 0):
        raise ValueError(f"lams must be one or more finite values > 0, got {lams.tolist()}")
    return lams


def _eigh(matrix):
    """Eigenvalues and eigenvectors of a symmetric matrix (overwritten), on one BLAS thread.

    The tridiagonal reduction is bound by matrix-vector products that synchronise
    the threads at every column, so on a loaded machine more threads make it much
    slower, and the tuning jobs run on one thread anyway.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return linalg.eigh(matrix, overwrite_a=True, check_finite=False)


def _shifted_solves(values, vectors, rhs, lams):
    """``(V diag(values) V^T + lam I)^{-1} rhs`` for every ``lam``, rows of the result; warns when one is not definite."""
    if np.any(values.min() + lams <= 0):
        _warn_not_convex()
    projected = vectors.T @ rhs
    return (vectors @ (projected[:, None] / (values[:, None] + lams[None, :]))).T


def _feature_space_problem(moments, risk):
    """``build()`` making the Hessian of ``R(Phi alpha)`` in ``alpha`` (without ``lam``), and ``-grad R(0)``."""
    form = risk.quadratic(moments.counts)
    group_sums = np.array([sum(moments.sums[a] for a in group if a in moments.sums) for group in form.groups])

    def build():
        if moments.risk is not None:
            if moments.risk is not risk:
                raise ValueError("these moments were weighted for another risk")
            system = moments.weighted if moments.weighted is not None else moments.refill()
            moments.weighted = None
        else:
            system = _zeros(group_sums.shape[1])
            for atom, weight in form.diag.items():
                if weight != 0.0:
                    linalg.blas.daxpy(moments.second[atom].ravel("F"), system.ravel("F"), a=weight)
        linalg.blas.dgemm(1.0, group_sums, form.coupling @ group_sums, beta=1.0, c=system, trans_a=True,
                          overwrite_c=True)
        return system

    gradient = sum(form.grad[a] * moments.sums[a] for a in moments.sums)
    return build, -gradient


def solve_feature_space(moments, risk, lam):
    """Minimise ``lam/2 ||alpha||^2 + R(Phi alpha)`` over ``alpha`` for a linear feature model.

    Parameters
    ----------
    moments : GroupMoments
        Per-atom moments, or moments weighted for ``risk`` (then consumed:
        their matrix is overwritten by the factorisation).
    risk : PairwiseRisk
    lam : float

    Returns
    -------
    ndarray of shape (b,)
    """
    hessian, rhs = _feature_space_problem(moments, risk)

    def build():
        system = hessian()
        system[np.diag_indices_from(system)] += lam
        return system

    return _solve_symmetric(build(), rhs, build)


def solve_feature_space_path(moments, risk, lams):
    """:func:`solve_feature_space` for every ``lam`` of ``lams`` from one eigendecomposition.

    The system is ``A + lam I`` with ``A = V diag(a) V^T`` symmetric, so
    ``alpha(lam) = V diag(1 / (a + lam)) V^T r``: one ``O(b^3)`` decomposition,
    then ``O(b^2)`` per value.  It warns, as the separate solves do, when some
    ``A + lam I`` is not positive definite.

    Returns
    -------
    ndarray of shape (len(lams), b)
    """
    lams = _check_lams(lams)
    hessian, rhs = _feature_space_problem(moments, risk)
    values, vectors = _eigh(hessian())
    return _shifted_solves(values, vectors, rhs, lams)


def _kernel_expansion_problem(K, codes, risk):
    """Diagonal ``d``, indicators ``E``, coupling ``C`` of ``H = diag(d) + E C E^T`` and the gradient ``g`` at 0."""
    counts = {int(a): int(np.sum(codes == a)) for a in np.unique(codes)}
    form = risk.quadratic(counts)
    indicators = np.stack([rows_in(codes, group) for group in form.groups], axis=1).astype(np.float64)
    return form.per_row(form.diag, codes), indicators, form.coupling, form.per_row(form.grad, codes)


def solve_kernel_expansion(K, codes, risk, lam, system=None):
    """Minimise ``lam/2 ||f||_H^2 + R(f)`` over ``f = sum_i c_i k(x_i, .)``, every row a centre.

    The stationarity condition is ``(H K + lam I) c = -g`` (as in :mod:`qs3orao.exact`),
    with ``H = diag(d) + E C E^T``.  Where ``d >= 0`` (every risk whose pair
    weights are non-negative: the paper's and SAMULT's), ``A = diag(d) K + lam I``
    is solved through the symmetric positive definite ``S = D^{1/2} K_PP D^{1/2} + lam I``
    on the rows ``P`` with ``d > 0`` (a row with ``d = 0`` has the row ``lam e_i^T``
    in ``A``), by one Cholesky factorisation of ``S``: ``|P|^3 / 3`` flops against
    ``2 n^3 / 3`` for an LU factorisation of the whole system, and the rows of
    unlabeled data weighed 0 drop out.  The low-rank part ``E C E^T K`` is then
    added by the Woodbury identity, ``A`` solved for ``1 + rank`` right-hand
    sides.  Otherwise (a negative ``d``) the whole system is formed in O(n^2)
    and solved by one LU factorisation.

    The solve reads ``K`` only by row blocks ``K[rows]`` (a slice or an index
    array) and products ``K @ M``, so ``K`` may be any symmetric matrix that
    offers them with ``shape``, e.g. a kernel whose rows are computed when asked
    (:class:`baselines._common.ChunkedKernel`); then the solve holds the
    system (``|P| x |P|`` of it on the Cholesky route) and row chunks.

    Parameters
    ----------
    K : ndarray of shape (n, n), or a matrix offering ``shape``, ``K[rows]`` and ``K @ M``
    codes : ndarray of int, shape (n,)
    risk : PairwiseRisk
    lam : float
    system : ndarray of shape (n, n), optional
        Work array to overwrite, so that repeated solves reuse one allocation.

    Returns
    -------
    ndarray of shape (n,)
    """
    diag, indicators, coupling, grad = _kernel_expansion_problem(K, codes, risk)
    system = np.empty(K.shape) if system is None else system
    if np.all(diag >= 0.0):
        return _solve_by_cholesky(K, diag, indicators, coupling, -grad, lam, system)
    low_rank = coupling @ (K @ indicators).T  # E^T K = (K E)^T, K symmetric
    step = chunk_rows(K.shape[0])
    for start in range(0, K.shape[0], step):
        rows = slice(start, start + step)
        np.multiply(diag[rows, None], K[rows], out=system[rows])
        system[rows] += indicators[rows] @ low_rank
    system[np.diag_indices_from(system)] += lam
    # LAPACK is column-major: factor the transpose in place and solve with trans=1.
    lu, piv = linalg.lu_factor(system.T, overwrite_a=True, check_finite=False)
    return linalg.lu_solve((lu, piv), -grad, trans=1, check_finite=False)


def _curvature(F, diag, indicators, coupling):
    """``H f`` for every row ``f`` of ``F`` (as rows), ``H = diag(d) + E C E^T`` applied from its structure in O(n)."""
    return F * diag[None, :] + (F @ indicators) @ coupling.T @ indicators.T


def _solve_by_cholesky(K, diag, indicators, coupling, rhs, lam, work):
    """``(diag(d) K + E C E^T K + lam I) c = rhs`` for ``d >= 0`` (see :func:`solve_kernel_expansion`)."""
    weighed = np.flatnonzero(diag > 0.0)
    idle = np.flatnonzero(diag == 0.0)
    root = np.sqrt(diag[weighed])
    # S in the work array's first |P|^2 entries, formed in place from row chunks (no temporary of K's size).
    S = work.reshape(-1)[:weighed.size ** 2].reshape(weighed.size, weighed.size)
    step = chunk_rows(K.shape[0])
    for start in range(0, weighed.size, step):
        block = slice(start, start + step)
        if idle.size:
            np.take(K[weighed[block]], weighed, axis=1, out=S[block])
        else:
            S[block] = K[block]
    S *= root[:, None]
    S *= root[None, :]
    S[np.diag_indices_from(S)] += lam
    # S is symmetric: its C-ordered buffer is its own Fortran-ordered transpose, factored in place.
    factor = linalg.cho_factor(S.T, lower=False, overwrite_a=True, check_finite=False) if weighed.size else None

    def solve_A(B):
        X = np.zeros_like(B)
        X[idle] = B[idle] / lam
        coupled = (K @ X)[weighed] if np.any(X[idle]) else 0.0
        if weighed.size:
            X[weighed] = root[:, None] * linalg.cho_solve(factor, B[weighed] / root[:, None] - root[:, None] * coupled,
                                                          check_finite=False)
        return X

    # Woodbury with U = E C and V = E^T K: the solution is x - A^{-1} U (I + V A^{-1} U)^{-1} V x, where A x = b.
    solved_U = solve_A(indicators @ coupling)
    small = linalg.lu_factor(np.eye(coupling.shape[0]) + indicators.T @ (K @ solved_U),
                             check_finite=False)

    def solve(b):
        x = solve_A(b[:, None])
        return (x - solved_U @ linalg.lu_solve(small, indicators.T @ (K @ x), check_finite=False))[:, 0]

    def apply(c):
        return _curvature((K @ c)[None, :], diag, indicators, coupling)[0] + lam * c

    # The Woodbury correction loses accuracy where lam is small against the kernel's spectrum; one step of
    # iterative refinement (the residual of the original system, O(n^2)) brings it to a direct solve's residual.
    coef = solve(rhs)
    return coef + solve(rhs - apply(coef))


def kernel_root(K):
    """The symmetric square root ``K^{1/2}`` of a kernel matrix (its rounding-level negative eigenvalues set to 0)."""
    values, vectors = _eigh(np.array(K))
    return (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T


def solve_kernel_expansion_path(K, codes, risk, lams, root=None):
    r""":func:`solve_kernel_expansion` for every ``lam`` of ``lams`` from one symmetric eigendecomposition.

    With ``R = K^{1/2}`` and ``z = R c``, the system ``(H K + lam I) c = r``
    multiplied by ``R`` is ``(R H R + lam I) z = R r``, symmetric in ``z`` (also
    when ``K`` or ``H`` is singular).  One eigendecomposition of ``R H R``
    gives ``z`` for every ``lam`` in ``O(n^2)``; then the scores are
    ``F = K c = R z`` and the system itself gives ``c = (r - H F) / lam``
    (``H`` applied in ``O(n)`` from its structure).  The division by ``lam``
    magnifies the rounding of ``F``, so one step of iterative refinement (the
    residual of the original system, solved the same way, ``O(n^2)``) brings
    every solution to the residual a direct solve leaves.  Cost: one ``n^3``
    product and one eigendecomposition, against one LU factorisation per value.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    codes : ndarray of int, shape (n,)
    risk : PairwiseRisk
    lams : array-like of float > 0
    root : ndarray of shape (n, n), optional
        :func:`kernel_root` ``(K)``, when already computed (it depends on ``K`` only).

    Returns
    -------
    ndarray of shape (len(lams), n)
    """
    lams = _check_lams(lams)
    diag, indicators, coupling, grad = _kernel_expansion_problem(K, codes, risk)
    root = kernel_root(K) if root is None else root
    spread = root @ indicators
    system = (root * diag[None, :]) @ root + spread @ coupling @ spread.T
    values, vectors = _eigh(system)

    def solve(rhs):  # row l solves (H K + lams[l] I) c = rhs[l]
        z = ((rhs @ root) @ vectors / (values[None, :] + lams[:, None])) @ vectors.T
        return (rhs - _curvature(z @ root, diag, indicators, coupling)) / lams[:, None]

    rhs = np.broadcast_to(-grad, (lams.size, grad.size))
    coef = solve(rhs)
    return coef + solve(rhs - _curvature(coef @ K, diag, indicators, coupling) - lams[:, None] * coef)
