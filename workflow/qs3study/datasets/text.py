"""Review text to vectors as in the paper: TF-IDF, then truncated SVD.

The paper gives no TF-IDF settings; scikit-learn's defaults are used (lower
case, ``\\b\\w\\w+\\b`` tokens, smoothed idf, l2-normalised rows). The fitted
TF-IDF stage (matrix, vocabulary, idf) is cached, so changing only the SVD
width does not re-tokenise the corpus; the SVD output is cached with the
preprocessed arrays by the loader.
"""

import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from .cache import load_entry, save_entry

TFIDF_PARAMS = {"lowercase": True, "sublinear_tf": False, "min_df": 1, "norm": "l2"}
SVD_ALGORITHM = "randomized"
SVD_N_ITER = 5
#: Threads of the SVD, fixed so that the embedding does not depend on the thread count. Its bits still
#: depend on the CPU's BLAS kernel, which a configuration's ``cpu_baseline`` fixes (:mod:`qs3study.cpu_baseline`).
SVD_THREADS = 1


def tfidf_matrix(texts, *, cache_file=None):
    """Fit TF-IDF on ``texts`` (or load the fit from ``cache_file``).

    Returns
    -------
    matrix : scipy.sparse.csr_matrix of shape (n_texts, n_terms)
    vocabulary : ndarray of str, ``vocabulary[j]`` being column ``j``
    cache_hit : bool
    """
    from scipy import sparse

    key = None if cache_file is None else Path(cache_file).stem
    entry = None if cache_file is None else load_entry(cache_file, key)
    if entry is not None:
        arrays, _ = entry
        matrix = sparse.csr_matrix(
            (arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(arrays["shape"])
        )
        return matrix, arrays["vocabulary"], True

    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(dtype=np.float64, **TFIDF_PARAMS)
    matrix = vectorizer.fit_transform(texts).tocsr()
    vocabulary = vectorizer.get_feature_names_out().astype(str)
    if cache_file is not None:
        save_entry(
            cache_file,
            key,
            {"tfidf_params": TFIDF_PARAMS},
            data=matrix.data,
            indices=matrix.indices,
            indptr=matrix.indptr,
            shape=np.array(matrix.shape),
            vocabulary=vocabulary,
            idf=vectorizer.idf_,
        )
    return matrix, vocabulary, False


def svd_embedding(matrix, n_svd_components, *, random_state=0, name="corpus"):
    """Truncated SVD of a (TF-IDF) matrix to ``n_svd_components`` columns.

    When the corpus is too small for the requested width, the width is reduced
    to ``min(n_rows, n_terms) - 1`` with a warning.  The SVD runs on
    ``SVD_THREADS`` BLAS/OpenMP threads whatever the environment allows, so
    its output does not depend on the machine's or the job's thread count
    (on the BLAS kernel the CPU selects it does: :mod:`qs3study.cpu_baseline`).

    Returns
    -------
    Z : ndarray of shape (n_rows, n_used)
    singular_values : ndarray of shape (n_used,)
    """
    from sklearn.decomposition import TruncatedSVD

    if int(n_svd_components) != n_svd_components or n_svd_components < 1:
        raise ValueError(f"n_svd_components must be an integer >= 1, got {n_svd_components!r}")
    limit = min(matrix.shape) - 1
    if limit < 1:
        raise ValueError(f"{name}: a {matrix.shape} TF-IDF matrix has no SVD direction")
    if n_svd_components > limit:
        warnings.warn(
            f"{name}: n_svd_components={n_svd_components} exceeds what a {matrix.shape[0]} x "
            f"{matrix.shape[1]} TF-IDF matrix supports; using {limit}",
            stacklevel=3,
        )
        n_svd_components = limit
    svd = TruncatedSVD(
        n_components=int(n_svd_components),
        algorithm=SVD_ALGORITHM,
        n_iter=SVD_N_ITER,
        random_state=random_state,
    )
    # BLAS and OpenMP split their sums differently with another number of threads, which moves
    # the randomized SVD by about 1e-12 (and an SVOREX fit on it by 1e-5): one thread everywhere.
    with threadpool_limits(limits=SVD_THREADS):
        Z = svd.fit_transform(matrix)
    return np.ascontiguousarray(Z, dtype=np.float64), svd.singular_values_
