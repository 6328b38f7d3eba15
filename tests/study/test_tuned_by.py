"""methods.<label>.tuned_by: a method trained with the values tuned for another (best-effort QS3ORAO)."""

import pytest

from qs3study.configuration import check_methods, method_config


def _config(**qs3orao):
    entry = {"method": "qs3orao-converged", "params": {}, "grid": None, **qs3orao}
    return {"methods": {"qs3orao": entry,
                        "qs3orao-exact": {"method": "qs3orao-exact", "params": {}, "grid": "registry",
                                          "grid_range": {"lam": [-20, 3]}},
                        "svorex": {"method": "svorex", "params": {}, "grid": "registry"},
                        "floor": {"method": "linear-floor", "params": {}, "grid": None}},
            "datasets": {}}


def test_a_method_takes_the_values_tuned_for_f_star():
    config = _config(tuned_by="qs3orao-exact")
    check_methods(config, [])
    assert method_config(config, "qs3orao")["tuned_by"] == "qs3orao-exact"
    assert method_config(config, "svorex")["tuned_by"] is None


@pytest.mark.parametrize("entry, message", [
    ({"tuned_by": "nope"}, "is not another configured method"),
    ({"tuned_by": "qs3orao"}, "is not another configured method"),
    ({"tuned_by": "qs3orao-exact", "grid": "registry"}, "no grid of its own"),
    ({"tuned_by": "floor"}, "has no grid"),
    ({"tuned_by": "svorex"}, r"tunes \['C'\], which 'qs3orao-converged' does not take"),
])
def test_bad_sources_are_refused_naming_the_key(entry, message):
    with pytest.raises(ValueError, match=f"methods.qs3orao.tuned_by.*{message}"):
        check_methods(_config(**entry), [])
