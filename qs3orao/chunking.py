"""Row chunks of bounded size, so that a pass over many rows never holds more than a few MiB at once."""

from __future__ import annotations

__all__ = ["FLOAT_BYTES", "CHUNK_BYTES", "chunk_rows", "chunk_bytes"]

FLOAT_BYTES = 8
CHUNK_BYTES = 16 * 2**20


def chunk_rows(row_floats):
    """Rows per chunk so that a chunk of ``row_floats`` float64 per row takes about 16 MiB."""
    return max(1, CHUNK_BYTES // (FLOAT_BYTES * max(1, int(row_floats))))


def chunk_bytes(n_rows, row_floats, copies=3):
    """Bytes of ``copies`` simultaneous row-chunk buffers (a distance block, its kernel, a product)."""
    return copies * FLOAT_BYTES * min(int(n_rows), chunk_rows(row_floats)) * int(row_floats)
