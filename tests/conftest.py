"""Shared pytest configuration: hypothesis profiles for local runs and CI."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def shared_mirror():
    """The real-data mirror (``../shared/data`` or ``$QS3ORAO_DATA_MIRROR``), else skip."""
    path = Path(os.environ.get("QS3ORAO_DATA_MIRROR") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
    if not path.is_dir():
        pytest.skip(f"real-data mirror {path} not found (set QS3ORAO_DATA_MIRROR to run)")
    return path
