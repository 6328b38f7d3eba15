"""The fast training engine behind :class:`qs3orao.QS3ORAO`.

It computes what :mod:`qs3orao._reference` computes (same rows, same blocks,
same coefficients, to rounding) without its O(t^2) cost.  Steps are taken in
groups of ``G`` consecutive iterations:

* the rows of the whole group are drawn ahead (row sampling does not depend on
  the scores) and the group's ``G`` frequency blocks are generated;
* the random features of the group's sampled rows for all ``G`` blocks are
  computed with one matrix product and one ``cos``/``sin`` pass;
* inside the group the sampled rows' scores are kept up to date block by block
  from those features (``|S| x 2m`` per step), so a step reads its rows'
  scores instead of re-evaluating every earlier block;
* after the group, the scores of every training row take the group's ``G``
  blocks in one pass (one ``n x d`` by ``d x Gm`` product and ``n x Gm``
  trigonometric values, the same work as a prediction), split by rows over
  threads.  When the features of all ``n`` rows for a group fit in the working
  budget ("dense" plan) the group's rows are simply all rows and this pass is
  not needed.

The shrinkage ``1 - eta_t lam`` of every earlier coefficient is one global
factor.  The frequency blocks are kept for prediction when they fit within
``max_memory`` and regenerated from their seeds otherwise (the paper's memory
argument).  Peak memory is the data, a few length-``n`` vectors, the
coefficients, the kept blocks if any, and feature buffers bounded by the
working budget: it never grows with ``n x D`` or ``n^2``.  With threads, the
next group's features are computed (in a second set of buffers) while the
main thread takes the current group's steps.

Optionally the projections and trigonometric values are computed in float32
(scores and coefficients stay float64): about 3 times faster on the
trigonometric part, at an absolute error of order ``1e-6`` per feature.
The trigonometric part runs on the backend ``trig_backend`` names
(:mod:`qs3orao.trig`: numpy, or a fused compiled loop with numba), and a
group's steps on the one ``step_backend`` names (numpy calls per step, or
the whole group in one loop compiled with numba, :mod:`qs3orao.engine._steps_numba`).

Modules: :mod:`~qs3orao.engine.single` (:func:`train`) and
:mod:`~qs3orao.engine.path` (:func:`train_path`) run the iteration on
:mod:`~qs3orao.engine.plan` (memory and group sizes),
:mod:`~qs3orao.engine.groups` (each group's blocks, rows and features),
:mod:`~qs3orao.engine.steps` (a group's steps), :mod:`~qs3orao.engine.threads`
(row chunks over threads) and :mod:`~qs3orao.engine.progress`; the result is
a :class:`~qs3orao.engine.model.RandomFeatureModel`.
"""

from .model import RandomFeatureModel
from .path import train_path
from .plan import BLOCK_STORAGE, compiled_group_length, group_plan, memory_plan
from .single import train
from .steps import STEP_BACKENDS, resolve_step_backend
from .threads import resolve_n_jobs

__all__ = ["BLOCK_STORAGE", "STEP_BACKENDS", "RandomFeatureModel", "compiled_group_length", "group_plan",
           "memory_plan", "resolve_n_jobs", "resolve_step_backend", "train", "train_path"]
