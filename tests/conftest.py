"""Shared pytest configuration: hypothesis profiles for local runs and CI, the ``requires_numba`` marker, and
the fixtures the study's unit tests share with the pipeline's end-to-end tests (tests/workflow)."""

import copy
import functools
import gzip
import json
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_numba: needs the optional numba (qs3orao[fast]); skipped without it")


@functools.cache
def numba_importable():
    # An import, not importlib.util.find_spec: a numba that is found but fails to import is as good as none.
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def pytest_runtest_setup(item):
    if item.get_closest_marker("requires_numba") and not numba_importable():
        pytest.skip("numba is not installed (the optional extra qs3orao[fast])")


@pytest.fixture(scope="session")
def shared_mirror():
    """The real-data mirror (``../shared/data`` or ``$QS3ORAO_DATA_MIRROR``), else skip."""
    path = Path(os.environ.get("QS3ORAO_DATA_MIRROR") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
    if not path.is_dir():
        pytest.skip(f"real-data mirror {path} not found (set QS3ORAO_DATA_MIRROR to run)")
    return path


TINY = Path(__file__).resolve().parent / "workflow" / "tiny.yaml"
SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "config" / "schema.yaml"


def configured(config, changes):
    """``config`` with each change applied, validated against the schema (which fills its defaults)."""
    from snakemake.utils import validate

    config = copy.deepcopy(config)
    for change in changes:
        change(config)
    validate(config, str(SCHEMA))
    return config


@pytest.fixture
def tiny_config():
    """``tiny_config(**changes)``: the tiny configuration (tests/workflow/tiny.yaml), each change applied, validated."""
    return lambda **changes: configured(yaml.safe_load(TINY.read_text()), changes.values())


@pytest.fixture
def job():
    """``job(tmp_path, rule, *, input, output, params, wildcards)``: a stand-in for the ``snakemake`` object a
    script receives (named lists, as Snakemake builds them)."""
    from snakemake.iocontainers import Namedlist

    def make(tmp_path, rule, *, input=None, output=None, params=None, wildcards=None):
        log = tmp_path / "logs" / f"{rule}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        output = Namedlist(output) if isinstance(output, list) else Namedlist(fromdict=output or {})
        return SimpleNamespace(rule=rule, input=Namedlist(fromdict=input or {}), output=output,
                               params=Namedlist(fromdict=params or {}), wildcards=Namedlist(fromdict=wildcards or {}),
                               log=[str(log)], threads=1)
    return make


def write_csv_gz(path, n=400, seed=0, header=True):
    """A gzipped CSV of ``n`` generated houses (``rooms,area,age,price``); returns the features and the price."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 3))
    price = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    with gzip.open(path, "wt") as handle:
        if header:
            handle.write("rooms,area,age,price\n")
        for row, target in zip(X, price):
            handle.write(",".join(f"{v:.6f}" for v in row) + f",{target:.6f}\n")
    return X, price


def write_reviews(path, n=300, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(60)]
    with open(path, "w") as handle:
        for _ in range(n):
            stars = int(rng.integers(1, 6))
            text = " ".join(rng.choice(words[(stars - 1) * 10:(stars - 1) * 10 + 20], size=12))
            handle.write(json.dumps({"body": text, "stars": stars, "user": "u"}) + "\n")


@pytest.fixture
def houses_csv():
    """``houses_csv(path, n=400, seed=0, header=True)``: a gzipped CSV of generated houses; returns X and price."""
    return write_csv_gz


@pytest.fixture
def reviews_jsonl():
    """``reviews_jsonl(path, n=300, seed=0)``: a JSON-lines file of generated reviews (``body``, ``stars``)."""
    return write_reviews


@pytest.fixture
def local_files(tmp_path):
    """``tmp_path`` holding ``houses.csv.gz`` (target ``price``) and ``reviews.jsonl`` (``body``, ``stars``)."""
    write_csv_gz(tmp_path / "houses.csv.gz")
    write_reviews(tmp_path / "reviews.jsonl")
    return tmp_path
