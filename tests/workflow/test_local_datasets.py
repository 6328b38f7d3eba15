"""A dataset from a local file, through the pipeline: a CSV and a review file run by configuration alone, and
sizes checked against the rows loaded (a clear error, or a sweep point recorded ``beyond_pool``)."""

import json

import yaml

from pipeline import local_dataset, snakemake, write_config
from qs3study.datasets import local_spec
from qs3study.stages import tables


def test_a_configuration_runs_a_local_csv_and_a_local_review_file(local_files, tmp_path):
    config = {
        "name": "local",
        "data": {"cache_dir": "resources", "mirror": None},
        "datasets": {
            "houses": {"source": {"path": str(local_files / "houses.csv.gz"), "format": "csv", "target": "price"},
                       "params": {"gamma": 1.0}},
            "shop_reviews": {"source": {"path": str(local_files / "reviews.jsonl"), "format": "json-lines",
                                        "text": "body", "label": "stars"},
                             "n_svd_components": 20, "params": {"gamma": 0.5}},
        },
        "methods": {"qs3orao": {"method": "qs3orao", "params": {"n_iter": 50, "batch_size": 8, "lam": 0.1}}},
        "protocol": {"n_labeled": 60, "n_unlabeled": 100, "trials": 1},
        "sweep": {"datasets": ["houses"], "n_unlabeled": [200]},
        "tuning": {},
    }
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(config))
    workdir = tmp_path / "run"
    workdir.mkdir()
    snakemake(workdir, "--configfile", tmp_path / "local.yaml")
    table = tables.read_results(workdir / "results" / "tables" / "results.csv")
    assert set(table["dataset"]) == {"houses", "shop_reviews"} and (table["status"] == "ok").all()
    assert table.set_index("dataset").loc["shop_reviews", "n_features"] == 20
    manifest = json.loads((workdir / "figures" / config["name"] / "manifest.json").read_text())
    assert manifest["data"]["houses"]["file_sha256"] == local_spec("h", config["datasets"]["houses"]["source"]).sha256
    assert (workdir / "resources" / "raw" / "shop_reviews" / "reviews.jsonl").is_file()


def local_config(tmp_path, houses_csv, n_rows, *, n_labeled, n_unlabeled, sweep):
    houses_csv(tmp_path / "houses.csv.gz", n=n_rows)
    return {
        "name": "local",
        "data": {"cache_dir": "resources", "mirror": None},
        "datasets": {"houses": {"source": {"path": str(tmp_path / "houses.csv.gz"), "format": "csv",
                                           "target": "price"}, "params": {"gamma": 1.0}}},
        "methods": {"qs3orao": {"method": "qs3orao", "params": {"n_iter": 40, "batch_size": 8, "lam": 0.1}}},
        "protocol": {"n_labeled": n_labeled, "n_unlabeled": n_unlabeled, "trials": 1},
        "sweep": {"datasets": ["houses"], "n_unlabeled": sweep},
        "tuning": {},
    }


def test_sizes_a_local_file_cannot_hold_stop_its_prepare_job(tmp_path, houses_csv):
    """The plan cannot know a local file's rows; prepare checks them and the run exits non-zero."""
    config = local_config(tmp_path, houses_csv, 150, n_labeled=100, n_unlabeled=200, sweep=[20])
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "--configfile", write_config(tmp_path, config), "--keep-going", check=False)
    log = (workdir / "logs" / "prepare" / "houses.log").read_text()
    assert result.returncode != 0
    assert "configuration key 'protocol.n_unlabeled'" in log and "150 rows leave 50" in log
    assert not (workdir / "results" / "data" / "houses" / "X.npy").exists()
    assert not (workdir / "results" / "runs").exists() and not (workdir / "results" / "tables").exists()


def test_a_sweep_size_over_the_rows_loaded_is_recorded_beyond_pool(tmp_path, houses_csv):
    """Sizes follow the rows loaded: a point over the pool is recorded with its reason; the run succeeds."""
    config = local_config(tmp_path, houses_csv, 300, n_labeled=100, n_unlabeled=100, sweep=[150, 1000, "all"])
    workdir = tmp_path / "run"
    workdir.mkdir()
    snakemake(workdir, "--configfile", write_config(tmp_path, config), "--keep-going")
    table = tables.read_results(workdir / "results" / "tables" / "results.csv").set_index("size")
    assert table.loc["1000", "status"] == "beyond_pool"
    assert "n_unlabeled=1000 rows requested, but the 300 rows leave 200" in table.loc["1000", "reason"]
    assert (table.drop(index="1000")["status"] == "ok").all()
    assert table.loc["all", "n_unlabeled"] == 200


def test_a_failed_prepare_job_shows_its_reason_with_dataset_path_and_line(tmp_path):
    path = tmp_path / "houses.csv"
    config = local_dataset(path)
    lines = ["a,b,price"] + [f"{i % 7},{i % 11},{i}" for i in range(300)]
    lines[8] = "1,2,five"
    path.write_text("\n".join(lines) + "\n")
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = snakemake(workdir, "results/data/houses/y.npy", "--configfile", write_config(tmp_path, config),
                       check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "dataset 'houses' (datasets.houses.source.path: " in output and str(path) in output
    assert "line 9, column 'price': 'five' is not a number" in output and "logs/prepare/houses.log" in output
