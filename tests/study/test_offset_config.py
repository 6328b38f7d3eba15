"""step_offset="auto-data" in a workflow configuration: accepted at plan time like "auto", misspellings refused."""

import pytest

from qs3study.configuration import check_methods


@pytest.mark.parametrize("change", [
    lambda c: c["methods"]["qs3orao"]["params"].update(step_offset="auto-data"),
    lambda c: c["methods"]["qs3orao"].update(grid={"step_offset": [0, "auto", "auto-data"]}),
])
def test_auto_data_passes_the_plan(tiny_config, change):
    config = tiny_config(change=change)
    check_methods(config, list(config["datasets"]))


@pytest.mark.parametrize("change, key", [
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset="auto_data"), "methods.qs3orao.params"),
    (lambda c: c["methods"]["qs3orao"].update(grid={"step_offset": [0, "Auto-Data"]}),
     "methods.qs3orao.grid.step_offset"),
])
def test_a_misspelt_auto_data_stops_the_plan(tiny_config, change, key):
    config = tiny_config(change=change)
    with pytest.raises(ValueError, match=f"configuration key '{key}'") as error:
        check_methods(config, list(config["datasets"]))
    assert "auto-data" in str(error.value)
