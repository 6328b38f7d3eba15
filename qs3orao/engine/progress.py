"""Progress of a fit, printed to stderr."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """Iterations per second and time left, printed to stderr every few seconds."""

    def __init__(self, total, enabled, every=2.0):
        self.total, self.enabled, self.every = total, enabled, every
        self.start = self.last = time.perf_counter()

    def update(self, done):
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < self.every and done < self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-12)
        print(f"QS3ORAO: iteration {done}/{self.total}, {rate:.1f} it/s, "
              f"{(self.total - done) / rate:.1f} s left", file=sys.stderr, flush=True)
