"""Readers for the upstream file formats.

Each reader takes a local path and returns ``(X, target)`` (float64 arrays) for
regression data or ``(texts, ratings)`` for review data. Heavy libraries are
imported inside the readers so that ``import qs3study.datasets`` needs only the
core dependencies.
"""

import gzip
import json
import zipfile

import numpy as np

SGEMM_MEMBER = "sgemm_product.csv"
SGEMM_N_PARAMETERS = 14
YEAR_N_FEATURES = 90
YOLANDA_TARGET = "101"
REVIEW_TEXT_FIELD = "reviewText"
REVIEW_RATING_FIELD = "overall"


def read_csv_last_column_target(path):
    """Headerless numeric CSV (optionally gzip), last column = target.

    Used for the ``uci_datasets`` files and for 3D Road Network text files.
    """
    import pandas as pd

    table = pd.read_csv(path, header=None, dtype=np.float64, compression="infer")
    values = table.to_numpy()
    return values[:, :-1], values[:, -1].copy()


def read_sgemm_zip(path):
    """UCI SGEMM zip: 14 kernel parameters; target = mean of the four run times (ms).

    The paper states a single target per row without saying which; the mean
    of ``Run1 (ms)`` .. ``Run4 (ms)`` is the common choice. Equal-frequency
    bins are invariant to monotone transforms, so a log target would give the
    same labels.
    """
    import pandas as pd

    with zipfile.ZipFile(path) as archive, archive.open(SGEMM_MEMBER) as member:
        table = pd.read_csv(member, dtype=np.float64)
    runs = [column for column in table.columns if column.startswith("Run")]
    if table.shape[1] != SGEMM_N_PARAMETERS + 4 or len(runs) != 4:
        raise ValueError(
            f"{path}: expected {SGEMM_N_PARAMETERS} parameters and 4 'Run' columns, "
            f"found columns {list(table.columns)}"
        )
    X = table.drop(columns=runs).to_numpy()
    return X, table[runs].to_numpy().mean(axis=1)


def read_libsvm_year(path):
    """LIBSVM text (plain or ``.bz2``) of YearPredictionMSD: label = year, 90 features."""
    from sklearn.datasets import load_svmlight_file

    X, year = load_svmlight_file(str(path), n_features=YEAR_N_FEATURES, dtype=np.float64)
    return X.toarray(), year.astype(np.float64)


def read_yolanda_parquet(path):
    """OpenML Yolanda parquet: 100 feature columns and the target column ``"101"``."""
    import pandas as pd

    table = pd.read_parquet(path)
    if YOLANDA_TARGET not in table.columns:
        raise ValueError(f"{path}: target column {YOLANDA_TARGET!r} not found")
    target = table.pop(YOLANDA_TARGET).to_numpy(dtype=np.float64)
    return table.to_numpy(dtype=np.float64), target


def read_amazon_reviews(path):
    """McAuley 2014 Amazon review file: gzip, one strict-JSON object per line.

    Returns ``reviewText`` (empty string when missing) and the integer
    ``overall`` rating.
    """
    texts, ratings = [], []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            review = json.loads(line)
            if REVIEW_RATING_FIELD not in review:
                raise ValueError(f"{path}, line {number}: no {REVIEW_RATING_FIELD!r} field")
            texts.append(review.get(REVIEW_TEXT_FIELD) or "")
            ratings.append(review[REVIEW_RATING_FIELD])
    ratings = np.asarray(ratings, dtype=np.float64)
    if not np.array_equal(ratings, np.round(ratings)):
        raise ValueError(f"{path}: non-integer {REVIEW_RATING_FIELD!r} ratings")
    return texts, ratings.astype(np.int64)


def skordinal_reader(loader_name):
    """Reader for an ordinal dataset bundled in skordinal (no file needed).

    Parameters
    ----------
    loader_name : str
        Name of the loader in ``skordinal.datasets``, e.g. ``"load_lev"``.
    """

    def read(_path=None):
        from skordinal import datasets

        X, y = getattr(datasets, loader_name)(return_X_y=True)
        return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)

    read.__name__ = f"read_{loader_name}"
    return read

