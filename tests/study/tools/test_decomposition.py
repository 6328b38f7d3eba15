"""The gap decomposition: the three parts add up to the total, trial by trial."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from qs3study.tools.decomposition import (PARTS, decomposition_markdown, main, minimisers, summarise,
                                          trial_decomposition, unpaired_datasets)


def _table(aucs, trials=4, seed=0):
    """A tidy results table: method -> mean AUC, with per-trial noise; comparison rows only."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset in ("a", "b"):
        for method, mean in aucs.items():
            for trial in range(trials):
                rows.append({"dataset": dataset, "method": method, "trial": trial, "comparison": True,
                             "status": "ok", "auc": mean + 0.01 * rng.normal(), "n_labeled": 500,
                             "n_unlabeled": 2000})
    rows.append({"dataset": "a", "method": "svorex", "trial": 9, "comparison": True, "status": "failed",
                 "auc": np.nan, "n_labeled": 500, "n_unlabeled": 2000})
    return pd.DataFrame(rows)


PAPER = {"qs3orao": 0.82, "qs3orao-exact": 0.84, "m-pnu-auc": 0.80, "m-samult": 0.85, "svorex": 0.88}
BEST = {"qs3orao": 0.87, "qs3orao-exact": 0.88, "m-pnu-auc": 0.85, "m-samult": 0.86, "svorex": 0.89}


@pytest.mark.parametrize("protocol", ["paper", "best"])
def test_the_three_parts_add_up_to_the_total_per_trial(protocol):
    trials = trial_decomposition(_table(PAPER, seed=1), _table(BEST, seed=2), protocol)
    assert len(trials) == 8 and set(trials["baseline"]) == {"svorex"}
    np.testing.assert_allclose(trials[list(PARTS)].sum(axis=1), trials["total"], atol=1e-12)
    assert (trials["total"] == trials["baseline_auc"] - trials["ours"]).all()
    if protocol == "best":
        assert (trials["grid"] == 0).all()


def test_the_parts_are_the_paired_differences():
    trials = trial_decomposition(_table(PAPER, seed=1), _table(BEST, seed=2), "paper")
    summary = summarise(trials).set_index("dataset")
    assert summary.loc["a", "optimisation_mean"] == pytest.approx(0.02, abs=0.02)
    assert summary.loc["a", "grid_mean"] == pytest.approx(0.04, abs=0.02)
    assert summary.loc["a", "objective_mean"] == pytest.approx(0.0, abs=0.02)
    assert summary.loc["a", "n_trials"] == 4 and summary.loc["a", "total_std"] > 0
    text = decomposition_markdown(summarise(trials), "paper")
    assert "| a | svorex | 4 |" in text


def test_missing_reference_is_refused_and_the_command_writes_three_files(tmp_path):
    paper, best = _table(PAPER), _table(BEST)
    with pytest.raises(ValueError, match="lacks"):
        trial_decomposition(paper[paper["method"] != "qs3orao-exact"], best, "paper")
    paper.to_csv(tmp_path / "paper.csv", index=False)
    best.to_csv(tmp_path / "best.csv", index=False)
    assert main([str(tmp_path / "paper.csv"), str(tmp_path / "best.csv"), "--protocol", "paper",
                 "--out", str(tmp_path / "out")]) == 0
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"decomposition.csv", "decomposition_trials.csv",
                                                              "decomposition.md", "decomposition.json"}


def _write(tmp_path, name, table):
    table.to_csv(tmp_path / name, index=False)
    return str(tmp_path / name)


def test_the_same_table_twice_is_refused():
    with pytest.raises(ValueError, match="same table"):
        trial_decomposition(_table(PAPER), _table(PAPER), "paper")


def test_tables_sharing_no_trial_are_refused_naming_what_did_not_match():
    best = _table(BEST).assign(dataset=lambda t: t["dataset"] + "-other")
    with pytest.raises(ValueError, match=r"no trial.*a-other"):
        trial_decomposition(_table(PAPER), best, "paper")


@pytest.mark.parametrize("damage", ["no comparison column", "ragged"])
def test_a_malformed_table_is_named_with_what_is_wrong(tmp_path, capsys, damage):
    paper = _write(tmp_path, "paper.csv", _table(PAPER))
    if damage == "ragged":
        with open(paper, "a") as handle:
            handle.write("a,qs3orao,1,True,ok,0.5,500,2000,extra,fields\n")
    else:
        _write(tmp_path, "paper.csv", _table(PAPER).drop(columns="comparison"))
    assert main([paper, _write(tmp_path, "best.csv", _table(BEST)), "--protocol", "paper",
                 "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "paper.csv" in err and ("comparison" in err or damage == "ragged") and len(err.strip().splitlines()) == 1


def test_the_command_never_overwrites_a_file_it_did_not_write(tmp_path, capsys):
    paper, best = _write(tmp_path, "paper.csv", _table(PAPER)), _write(tmp_path, "best.csv", _table(BEST))
    out = tmp_path / "figures"
    out.mkdir()
    (out / "results.csv").write_text("the run's own table")  # the protocol's figures folder holds other files
    args = [paper, best, "--protocol", "paper", "--out", str(out)]
    assert main(args) == 0
    assert main(args) == 0  # rerun into its own outputs
    assert main([paper, best, "--protocol", "best", "--out", str(out)]) == 0  # new content, its own files
    assert (out / "results.csv").read_text() == "the run's own table"
    (out / "decomposition.json").unlink()  # the user's decomposition.md, say, is no longer known as its own
    (out / "decomposition.md").write_text("a user's notes")
    assert main(args) == 1 and "decomposition.md" in capsys.readouterr().err
    assert (out / "decomposition.md").read_text() == "a user's notes"


def _manifest(x_a="x", y_a="y", scaling_a=None):
    """A run manifest naming datasets a and b's prepared data and a's feature scaling."""
    datasets = {"a": {} if scaling_a is None else {"feature_scaling": scaling_a}, "b": {}}
    return {"config": {"datasets": datasets},
            "data": {"a": {"X_sha256": x_a, "y_sha256": y_a}, "b": {"X_sha256": "xb", "y_sha256": "yb"}}}


@pytest.mark.parametrize("best_manifest, reason", [
    (_manifest(), None),
    (_manifest(x_a="other"), "prepared features differ"),
    (_manifest(x_a="other", scaling_a="common"), None),
    (_manifest(y_a="other", scaling_a="common"), "prepared labels differ"),
])
def test_a_dataset_prepared_differently_in_the_two_runs_is_not_paired(best_manifest, reason):
    left_out = unpaired_datasets(_table(PAPER), _table(BEST), (_manifest(), best_manifest))
    assert list(left_out) == ([] if reason is None else ["a"])
    if reason:
        assert left_out["a"].startswith(reason)


def test_a_dataset_split_at_other_sizes_is_left_out_and_named(tmp_path):
    best = _table(BEST, seed=2)
    best.loc[(best["dataset"] == "a") & (best["method"] == "svorex"), "n_unlabeled"] = 3500
    left_out = unpaired_datasets(_table(PAPER, seed=1), best)
    assert left_out == {"a": "the runs' sizes differ, so their splits do: none in the paper protocol's only, "
                             "500 labeled and 3,500 unlabeled rows in the best-effort one's only"}
    trials = trial_decomposition(_table(PAPER, seed=1), best, "paper", leave_out=left_out)
    assert set(trials["dataset"]) == {"b"}

    (tmp_path / "paper").mkdir()
    (tmp_path / "best").mkdir()
    (tmp_path / "paper" / "manifest.json").write_text(json.dumps(_manifest()))
    assert main([_write(tmp_path / "paper", "results.csv", _table(PAPER, seed=1)),
                 _write(tmp_path / "best", "results.csv", best), "--protocol", "paper",
                 "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "decomposition.md").read_text()
    assert "| a |" not in text and "| b | svorex | 4 |" in text
    assert "Left out, not the same data or split in both runs:\n\n- a: the runs' sizes differ" in text
    assert f"Prepared data not compared: no manifest beside {tmp_path / 'best' / 'results.csv'}." in text
    record = json.loads((tmp_path / "out" / "decomposition.json").read_text())
    assert list(record["left_out"]) == ["a"]
    tables = [tmp_path / "paper" / "results.csv", tmp_path / "best" / "results.csv"]
    assert record["inputs"] == {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in tables}
    assert record["margin"] == 0.01


def test_the_best_effort_decomposition_reads_its_own_table_alone(tmp_path):
    best = _table(BEST, seed=2)
    best.loc[best["method"] == "svorex", "n_unlabeled"] = 3500
    assert main([_write(tmp_path, "paper.csv", _table(PAPER, seed=1)), _write(tmp_path, "best.csv", best),
                 "--protocol", "best", "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "decomposition.md").read_text()
    assert "| a | svorex | 4 |" in text and "| b | svorex | 4 |" in text and "Left out" not in text


def test_converged_fits_off_their_minimiser_are_counted_from_the_protocols_own_table():
    # Dataset a: QS3ORAO met its criterion in trials 0-2 (trial 2 0.05 below f*, trial 3 unconverged).
    paper, best = _table(PAPER, seed=1), _table(BEST, seed=2)
    ours = (best["method"] == "qs3orao") & (best["dataset"] == "a")
    best.loc[ours, "converged"] = best.loc[ours, "trial"].map({0: True, 1: True, 2: True, 3: False})
    exact = best[(best["method"] == "qs3orao-exact") & (best["dataset"] == "a")].set_index("trial")["auc"]
    best.loc[ours, "auc"] = best.loc[ours, "trial"].map({0: exact[0], 1: exact[1] - 0.005, 2: exact[2] - 0.05,
                                                         3: exact[3] - 0.05})
    trials = trial_decomposition(paper, best, "best")
    assert trials.set_index(["dataset", "trial"])["ours_converged"].loc["a"].tolist() == [True, True, True, False]
    summary = summarise(trials, margin=0.01).set_index("dataset")
    assert summary.loc["a", ["n_converged", "n_converged_off"]].tolist() == [3, 1]
    assert summary.loc["b", ["n_converged", "n_converged_off"]].tolist() == [0, 0]
    assert summarise(trials, margin=0.001).set_index("dataset").loc["a", "n_converged_off"] == 2
    text = decomposition_markdown(summarise(trials, margin=0.01), "best", margin=0.01)
    assert "converged (off M) |" in text and text.splitlines()[2].endswith("| 3 (1) |")
    assert "more than 0.01 AUC (8f's non-inferiority margin) below M" in text
    # the paper protocol's fits have no criterion: the column is not drawn from the other table's flags
    paper_trials = trial_decomposition(paper, best, "paper")
    assert paper_trials["ours_converged"].isna().all()
    assert "converged (off M)" not in decomposition_markdown(summarise(paper_trials), "paper")


@pytest.mark.parametrize("margin", ["0", "-0.01", "nan"])
def test_a_margin_that_is_not_a_positive_auc_distance_is_refused(tmp_path, margin, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([_write(tmp_path, "paper.csv", _table(PAPER)), _write(tmp_path, "best.csv", _table(BEST)),
              "--protocol", "best", "--out", str(tmp_path / "out"), "--margin", margin])
    assert exit_info.value.code == 2 and "--margin must be a positive AUC distance" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option, recorded", [([], 0.02), (["--margin", "0.005"], 0.005)])
def test_the_margin_is_the_runs_own_unless_given(tmp_path, option, recorded):
    (tmp_path / "best").mkdir()
    manifest = {**_manifest(), "config": {**_manifest()["config"], "claims": {"non_inferiority_margin": 0.02}}}
    (tmp_path / "best" / "manifest.json").write_text(json.dumps(manifest))
    assert main([_write(tmp_path, "paper.csv", _table(PAPER)), _write(tmp_path / "best", "results.csv", _table(BEST)),
                 "--protocol", "best", "--out", str(tmp_path / "out"), *option]) == 0
    assert json.loads((tmp_path / "out" / "decomposition.json").read_text())["margin"] == recorded


def test_minimisers_come_from_the_runs_tuned_by():
    manifest = {"config": {"methods": {"qs3orao": {"tuned_by": "qs3orao-exact"}, "svorex": {"tuned_by": None},
                                       "rff-auc": None}}}
    assert minimisers(manifest) == {"qs3orao": "qs3orao-exact"} and minimisers(None) == {}


def test_the_floor_part_is_fstar_minus_the_minimiser_qs3orao_trained_with(tmp_path):
    # QS3ORAO trained with the values of a floored search (0.85) below f* (0.88): the floor part takes
    # the 0.03 and the optimisation part is measured against the floored minimiser, converged-off too.
    paper, best = _table(PAPER, seed=1), _table({**BEST, "qs3orao-exact-floor": 0.85}, seed=2)
    best.loc[best["method"] == "qs3orao", "converged"] = True
    floored = trial_decomposition(paper, best, "best", minimiser="qs3orao-exact-floor")
    np.testing.assert_allclose(floored[list(PARTS)].sum(axis=1), floored["total"], atol=1e-12)
    assert (floored["floor"] == floored["f_star"] - floored["minimiser_auc"]).all()
    assert (floored["optimisation"] == floored["minimiser_auc"] - floored["ours"]).all()
    assert summarise(floored).set_index("dataset")["floor_mean"].tolist() == pytest.approx([0.03, 0.03], abs=0.02)
    plain = trial_decomposition(paper, best, "best")
    assert (plain["floor"] == 0).all() and (plain["minimiser"] == "qs3orao-exact").all()
    assert summarise(plain, margin=0.01)["n_converged_off"].sum() > summarise(floored, margin=0.01)[
        "n_converged_off"].sum()
    with pytest.raises(ValueError, match="qs3orao-exact-labeled-floor"):
        trial_decomposition(paper, best, "best", minimiser="qs3orao-exact-labeled-floor")
    # the command takes M from the run's tuned_by, and records it
    (tmp_path / "best").mkdir()
    manifest = {**_manifest(), "config": {**_manifest()["config"],
                                          "methods": {"qs3orao": {"tuned_by": "qs3orao-exact-floor"}}}}
    (tmp_path / "best" / "manifest.json").write_text(json.dumps(manifest))
    assert main([_write(tmp_path, "paper.csv", paper), _write(tmp_path / "best", "results.csv", best),
                 "--protocol", "best", "--out", str(tmp_path / "out")]) == 0
    written = pd.read_csv(tmp_path / "out" / "decomposition_trials.csv")
    assert (written["minimiser"] == "qs3orao-exact-floor").all() and written["floor"].gt(0.0).all()
    assert json.loads((tmp_path / "out" / "decomposition.json").read_text())["minimiser"] == "qs3orao-exact-floor"
    assert "(`qs3orao-exact-floor`, the run's tuned_by" in (tmp_path / "out" / "decomposition.md").read_text()
