"""The reliability cases reuse the data layer's fixtures: a local HTTP server and a private cache."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "datasets_fixtures", Path(__file__).resolve().parents[1] / "datasets" / "conftest.py")
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

http_server = _fixtures.http_server
cache_dir = _fixtures.cache_dir
