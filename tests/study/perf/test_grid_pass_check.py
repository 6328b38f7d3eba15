"""The confirmatory check of grid_pass_ratio: the median's interval and the verdict drawn from it."""

import json
import sys

import numpy as np
import pytest

from qs3study.perf import grid_pass_check, summary as perf
from qs3study.perf.grid_pass_check import RUNS, _one_run, grid_pass_settings, main, median_interval, target_verdict


def test_ten_runs_bound_the_median_by_their_second_and_ninth_values():
    values = np.arange(10.0)[::-1]
    assert median_interval(values) == (1.0, 8.0, pytest.approx(1 - 2 * 11 / 1024))


@pytest.mark.slow
def test_the_interval_covers_the_median_as_often_as_it_says():
    rng = np.random.default_rng(0)
    draws = rng.exponential(size=(20_000, RUNS))  # median log 2
    low, high, coverage = zip(*(median_interval(row) for row in draws))
    covered = np.mean((np.array(low) <= np.log(2)) & (np.log(2) <= np.array(high)))
    assert abs(covered - coverage[0]) < 4 * np.sqrt(coverage[0] * (1 - coverage[0]) / draws.shape[0])


def test_too_few_values_cannot_bound_the_median():
    with pytest.raises(ValueError, match="5 values cannot bound the median"):
        median_interval([1.0, 2.0, 3.0, 4.0, 5.0])


@pytest.mark.parametrize("values, verdict", [
    ([2.5] * 9 + [3.5], "holds"),  # one run above the target leaves the interval below it
    ([2.5] * 8 + [3.5] * 2, "inconclusive"),
    ([3.5] * 9 + [2.5], "fails"),
    ([3.0] * 10, "holds"),  # at most the target
])
def test_the_verdict_follows_the_interval(values, verdict):
    assert target_verdict(values, target=3.0) == verdict


def test_the_check_runs_the_perf_rules_default_workload():
    settings, seed = grid_pass_settings()
    assert seed == 0
    assert len(settings["lams"]) * len(settings["tradeoffs"]) == 77


def counting_child(tmp_path, rows):
    """A child process printing ``rows`` (a Python expression of the run number ``n``, 0, 1, ...) as JSON."""
    counter = tmp_path / "runs"
    code = (f"import json, pathlib; p = pathlib.Path({str(counter)!r}); n = int(p.read_text()) if p.exists() else 0; "
            f"p.write_text(str(n + 1)); print('noise'); print(json.dumps({rows}))")
    return [sys.executable, "-c", code]


def test_the_check_judges_each_ratio_row_from_its_runs_and_reports_the_rest_as_context(tmp_path, capsys):
    # Runs 0..9 give 2.0 .. 2.9 for the ratio: interval [2.1, 2.8], below the target; the floor is context.
    main(counting_child(tmp_path, "[['grid_pass_ratio[77]', 2.0 + n / 10], ['grid_pass_floor[77]', 1.0 + n]]"))
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["run 1/10: grid_pass_ratio[77] 2.00  grid_pass_floor[77] 1.00",
                         "run 2/10: grid_pass_ratio[77] 2.10  grid_pass_floor[77] 2.00"]
    assert lines[10] == ("grid_pass_ratio[77]: median 2.45, range 2.00-2.90, median within [2.10, 2.80] "
                         "(coverage 0.979); at most 3: holds")
    assert lines[11].startswith("grid_pass_floor[77]: median 5.50") and lines[11].endswith("at most 3: context")


def test_the_check_stops_at_a_failed_run_with_its_error_output():
    failing = [sys.executable, "-c", "import sys; print('partial'); sys.exit('the measurement failed')"]
    with pytest.raises(SystemExit, match=r"run 1/10 failed \(exit 1\):\nthe measurement failed"):
        main(failing)


def test_the_check_runs_the_command_it_is_given_even_an_empty_one(monkeypatch):
    """Only a missing command means the default measurement; an empty one is the caller's, not replaced."""
    ran = []

    def refuse(command, **_):
        ran.append(command)
        raise OSError("no program")

    monkeypatch.setattr(grid_pass_check.subprocess, "run", refuse)
    with pytest.raises(OSError):
        main([])
    assert ran == [[]]


def test_one_run_measures_the_schema_workload_and_prints_its_rows(monkeypatch, capsys):
    calls = []

    def measured(**kwargs):
        calls.append(kwargs)
        return [("grid_pass_ratio[77]", 2.5, "the detail")]

    monkeypatch.setattr(perf, "grid_pass_ratio", measured)
    _one_run()
    settings, seed = grid_pass_settings()
    assert calls == [{**settings, "seed": seed}]
    assert json.loads(capsys.readouterr().out) == [["grid_pass_ratio[77]", 2.5]]
