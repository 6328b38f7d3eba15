import doctest

import pytest

import qs3orao.estimator
import qs3orao.kernels
import qs3orao.metrics
import qs3orao.schedule


@pytest.mark.parametrize("module", [qs3orao.metrics, qs3orao.kernels, qs3orao.estimator, qs3orao.schedule])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
