"""Shared pytest configuration: hypothesis profiles for local runs and CI, and the ``requires_numba`` marker."""

import functools
import os
from pathlib import Path

import pytest
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
