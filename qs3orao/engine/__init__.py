"""The fast training engine behind :class:`qs3orao.QS3ORAO`."""

from .path import (BLOCK_STORAGE, STEP_BACKENDS, RandomFeatureModel, memory_plan, resolve_n_jobs,
                   resolve_step_backend, train, train_path)

__all__ = ["BLOCK_STORAGE", "STEP_BACKENDS", "RandomFeatureModel", "memory_plan", "resolve_n_jobs",
           "resolve_step_backend", "train", "train_path"]
