"""A configuration error stops the plan before any job runs, with an error naming the key."""

import pytest

from pipeline import local_dataset, snakemake, tiny, write_config


# One of each kind of value the plan refuses (tests/study/test_configuration.py checks them all without Snakemake).
@pytest.mark.parametrize("change, key, complaint", [
    (lambda c: c["datasets"]["swd"]["params"].update(gama=0.5), "datasets.swd.params", "gama"),
    (lambda c: c["methods"]["qs3orao"]["params"].update(lam=-0.1), "methods.qs3orao.params", "lam must be > 0"),
    (lambda c: c["methods"].update(svorex={"method": "svorex", "params": {"C": "abc"}}), "methods.svorex.params",
     "C must be a positive number"),
    (lambda c: c["protocol"].update(n_labeled=1000), "protocol.n_labeled", "swd"),  # swd has 1000 rows
])
def test_the_plan_stops_before_any_job_runs(tmp_path, change, key, complaint):
    config = tiny()
    change(config)
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "--configfile", write_config(tmp_path, config), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and f"configuration key '{key}'" in output and complaint in output
    assert not (workdir / "results").exists() and not (workdir / "logs").exists()


@pytest.mark.parametrize("name", ["Houses", "my-houses", "UCI-Protein"])
def test_a_dataset_name_the_pipeline_cannot_use_stops_even_a_dry_run(tmp_path, name, houses_csv):
    houses_csv(tmp_path / "houses.csv.gz", n=300)
    workdir = tmp_path / "run"
    workdir.mkdir()
    config = local_dataset(tmp_path / "houses.csv.gz", name)
    result = snakemake(workdir, "-n", "--configfile", write_config(tmp_path, config), check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"'{name}' does not match '^[a-z0-9_]+$'" in output and "lower-case letters, digits and '_'" in output
