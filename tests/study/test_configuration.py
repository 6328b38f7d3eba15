"""The configuration's checks at plan time, without Snakemake: bad values name their key, sizes fit the rows.

* A dataset-level parameter no configured method takes (``gama``) is a configuration error.
* Invalid values (``lam: -0.1``, ``C: 'abc'``, a grid value, ``n_labeled`` over a dataset's
  rows) stop the plan before any job runs, with an error naming the key; each method's
  values are checked by its own estimator's parameter checks, without fitting. So do values
  that would fail every job (``step_offset: Auto``, ``tradeoff: 1.5``, ``classes``).

The pipeline's own refusal of such a configuration is in tests/workflow/test_plan_errors.py.
"""

from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from qs3study.configuration import check_methods, check_rows

CONFIGS = Path(__file__).resolve().parents[2] / "workflow" / "config"


def add_svorex(config, **params):
    config["methods"]["svorex"] = {"method": "svorex", "params": params}


BAD_VALUES = [
    # (change, key named, word of the estimator's complaint)
    (lambda c: c["datasets"]["swd"]["params"].update(gama=0.5), "datasets.swd.params", "gama"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(lam=-0.1), "methods.qs3orao.params", "lam must be > 0"),
    (lambda c: add_svorex(c, C="abc"), "methods.svorex.params", "C must be a positive number"),
    (lambda c: c["datasets"]["swd"]["params"].update(gamma=-1.0), "datasets.swd.params", "gamma must be > 0"),
    (lambda c: c["methods"]["m-pnu-auc"].update(grid={"lam": [0.1, -1.0]}), "methods.m-pnu-auc.grid.lam",
     "lam must be > 0"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(n_iter=2.5), "methods.qs3orao.params", "n_iter"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(trig_backend="cuda"), "methods.qs3orao.params",
     "trig_backend"),
]


@pytest.mark.parametrize("change, key, complaint", BAD_VALUES)
def test_a_bad_method_value_is_a_configuration_error_naming_the_key(tiny_config, change, key, complaint):
    config = tiny_config(change=change)
    with pytest.raises(ValueError, match=f"configuration key '{key}'") as error:
        check_methods(config, list(config["datasets"]))
    assert complaint in str(error.value)


@pytest.mark.parametrize("change, key", [
    (lambda c: c["methods"]["qs3orao"]["params"].update(max_memory=float("nan")), "methods.qs3orao.params.max_memory"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(max_memory=float("inf")), "methods.qs3orao.params.max_memory"),
    (lambda c: c["datasets"]["swd"]["params"].update(max_memory=float("nan")), "datasets.swd.params.max_memory"),
    (lambda c: add_svorex(c, memory_budget=-1), "methods.svorex.params.memory_budget"),
    (lambda c: c["protocol"].update(memory_budget_mb=float("nan")), "protocol.memory_budget_mb"),
    (lambda c: c["protocol"].update(memory_budget_mb=float("inf")), "protocol.memory_budget_mb"),
])
def test_a_memory_budget_must_be_a_finite_positive_number(tiny_config, change, key):
    config = tiny_config(change=change)
    with pytest.raises(ValueError, match=f"configuration key '{key}': .*finite positive number"):
        check_methods(config, list(config["datasets"]))


def test_an_absent_or_null_memory_budget_is_accepted(tiny_config):
    config = tiny_config(svorex=lambda c: add_svorex(c, memory_budget=None))
    check_methods(config, list(config["datasets"]))


@pytest.mark.parametrize("name", ["default", "paper"])
def test_the_shipped_configurations_pass(name):
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    validate(config, str(CONFIGS / "schema.yaml"))
    check_methods(config, list(config["datasets"]))


def test_a_dataset_parameter_taken_by_some_configured_method_is_accepted(tiny_config):
    def svorex(config):
        add_svorex(config, C=1.0)
        config["datasets"]["swd"]["params"]["C"] = 2.0  # SVOREX takes C; QS3ORAO and M-PNU-AUC do not
    check_methods(tiny_config(svorex=svorex), ["swd"])


@pytest.mark.parametrize("protocol, options, key", [
    ({"n_labeled": 1000, "n_unlabeled": 10}, {}, "protocol.n_labeled"),
    ({"n_labeled": 100, "n_unlabeled": 901}, {}, "protocol.n_unlabeled"),
    ({"n_labeled": 100, "n_unlabeled": 10}, {"n_unlabeled": 950}, "datasets.swd.n_unlabeled"),
])
def test_sizes_over_the_rows_name_their_key(protocol, options, key):
    with pytest.raises(ValueError, match=f"configuration key '{key}'"):
        check_rows("swd", 1000, protocol, options)


def test_sizes_that_fit_pass():
    check_rows("swd", 1000, {"n_labeled": 100, "n_unlabeled": 900}, {})
    check_rows("swd", 1000, {"n_labeled": 999, "n_unlabeled": 5000}, {"n_unlabeled": "all"})


PLAN_ERRORS = [
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset="Auto"), "methods.qs3orao.params", "step_offset"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset=-3), "methods.qs3orao.params", "step_offset"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(step_offset=float("nan")), "methods.qs3orao.params",
     "step_offset"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(tradeoff=1.5), "methods.qs3orao.params", "tradeoff"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(random_state="abc"), "methods.qs3orao.params",
     "random_state"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(classes=[0, 1]), "methods.qs3orao.params",
     "'classes' is not configurable"),
    (lambda c: c["methods"]["m-pnu-auc"]["params"].update(pnu_mix=5), "methods.m-pnu-auc.params", "pnu_mix"),
    (lambda c: c["methods"]["qs3orao"].update(grid={"step_offset": [0, "Auto"]}), "methods.qs3orao.grid.step_offset",
     "step_offset"),
]


@pytest.mark.parametrize("change, key, complaint", PLAN_ERRORS)
def test_values_that_fail_every_job_stop_the_plan(tiny_config, change, key, complaint):
    config = tiny_config(change=change)
    with pytest.raises(ValueError, match=f"configuration key '{key}'") as error:
        check_methods(config, list(config["datasets"]))
    assert complaint in str(error.value)


def test_review_columns_may_be_positions_in_the_schema(tiny_config):
    tiny_config(review=lambda c: c["datasets"].update(r={"source": {"path": "r.csv", "format": "csv", "text": 1,
                                                                      "label": 0}}))


@pytest.mark.parametrize("policy", ["refuse", "drop", "keep"])
def test_the_schema_declares_what_to_do_with_records_without_text(tiny_config, policy):
    source = {"path": "r.jsonl", "format": "json-lines", "text": "body", "label": "stars", "empty_text": policy}
    config = tiny_config(reviews=lambda c: c["datasets"].update(r={"source": source}))
    assert config["datasets"]["r"]["source"]["empty_text"] == policy


def test_a_compiled_backend_on_a_machine_without_numba_is_a_configuration_error(tiny_config, monkeypatch):
    from qs3orao import QS3ORAO

    def no_numba(self):
        raise ImportError("step_backend='numba' needs numba, which is not installed (pip install qs3orao[fast])")

    monkeypatch.setattr(QS3ORAO, "_check_params", no_numba)
    config = tiny_config()
    with pytest.raises(ValueError, match="configuration key 'methods.qs3orao.params'.*needs numba"):
        check_methods(config, list(config["datasets"]))
