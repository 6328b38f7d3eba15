"""The generated blocks of README.md and docs/*.md, rendered from the committed outputs under ``figures/``.

A block is the text between ``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->``;
:data:`RENDERERS` maps each ``NAME`` to the function that renders it from the repository's
files. Every number the documents quote comes from such a block, so that a rerun that changes
a committed output shows up as a stale block instead of a stale sentence.

Usage::

    python -m qs3study.tools.documents            # rewrite every block
    python -m qs3study.tools.documents --check    # exit 1 naming each stale block
"""

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

from baselines.registry import METHODS
from qs3study.files import atomic_path
from qs3study.stages.tables import one_draw, read_results
from qs3study.tools import convergence_audit
from qs3study.tools.decomposition import PARTS

REPOSITORY = Path(__file__).resolve().parents[3]
BLOCK = re.compile(r"(<!-- generated:(?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S)
MARKER = re.compile(r"<!-- /?generated:([a-z0-9-]+) -->")
PROTOCOLS = {"paper": "paper protocol", "best": "best-effort protocol"}
EMPIRICAL_ID = re.compile(r"^(?P<claim>8[a-z]2?)-(?P<protocol>paper|best)$")


def documents(root):
    """The files whose blocks are generated: README.md, then docs/*.md in name order.

    Parameters
    ----------
    root : pathlib.Path
        The repository's top folder.

    Returns
    -------
    list of pathlib.Path
    """
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def markdown_table(header, rows):
    """A markdown table; ``|`` inside a cell is escaped so that it stays one cell.

    Parameters
    ----------
    header : sequence of str
    rows : iterable of sequence
        Cells are written with ``str``.

    Returns
    -------
    str
        One line per row, ending in a newline.

    Examples
    --------
    >>> print(markdown_table(["a", "b"], [[1, "x|y"]]), end="")
    | a | b |
    |---|---|
    | 1 | x\\|y |
    """
    def line(cells):
        return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |\n"
    return line(header) + "|" + "---|" * len(header) + "\n" + "".join(line(row) for row in rows)


def run_methods(root, run):
    """The methods of a committed run, by name: their label and whether they train on the labeled rows only.

    Parameters
    ----------
    root : pathlib.Path
    run : str
        The run's folder under ``figures/``.

    Returns
    -------
    dict
        ``name -> (label, labeled_only)``, from the run's manifest and the method registry.
    """
    manifest = json.loads((root / "figures" / run / "manifest.json").read_text())
    methods = {}
    for name, entry in manifest["config"]["methods"].items():
        registered = METHODS.get(entry.get("method", name))
        label = entry.get("label") or (registered.label if registered else name)
        methods[name] = (label, bool(registered and registered.labeled_only))
    return methods


def statement(claim):
    """A ledger claim as the documents show it: without the protocol it names."""
    text = re.sub(r"\s*\((paper|best-effort) protocol\)$", "", claim)
    return text.replace("*", "\\*")


def ledger(root):
    return pd.read_csv(root / "figures" / "theory" / "claims_ledger.csv", dtype=str, keep_default_na=False)


def claims_empirical(root):
    """The paper's empirical claims (ledger rows 8a-paper ... 8f-best): one row per claim, a verdict per protocol."""
    rows = {}
    for entry in ledger(root).itertuples():
        match = EMPIRICAL_ID.match(entry.id)
        if match:
            row = rows.setdefault(match["claim"], {"statement": statement(entry.claim)})
            row[match["protocol"]] = entry.verdict
    header = ["claim", "statement", *(PROTOCOLS[p] for p in PROTOCOLS)]
    return markdown_table(header, ([claim, row["statement"], *(row.get(p, "") for p in PROTOCOLS)]
                                   for claim, row in rows.items()))


def claims_formal(root):
    """Every other ledger row (the formal claims and the project's own): its verdict holds under both protocols."""
    table = ledger(root)
    rows = ([entry.id, statement(entry.claim), entry.verdict] for entry in table.itertuples()
            if not EMPIRICAL_ID.match(entry.id))
    return markdown_table(["claim", "statement", "verdict"], rows)


def auc_table(root, protocol):
    table = pd.read_csv(root / "figures" / f"reproduction-{protocol}" / "auc_table.csv")
    return table[table["n_unlabeled"].notna()]


def _mean_auc(row):
    """A row of an AUC table as its mean AUC, with the trials whose fit stopped unconverged in brackets."""
    unconverged = row.get("n_unconverged", 0)
    marked = f" [{unconverged:.0f} of {row['n_trials']:.0f} unconverged]" if unconverged > 0 else ""
    return f"{row['auc_mean']:.3f}{marked}"


def auc_summary(root):
    """Per dataset and protocol: the method with the best mean AUC, and QS3ORAO's mean AUC (common unlabeled size).

    A mean over trials some of whose fits stopped at their iteration limit unconverged says how many.
    """
    cells = {}
    for protocol in PROTOCOLS:
        methods = run_methods(root, f"reproduction-{protocol}")
        for dataset, rows in auc_table(root, protocol).groupby("dataset", sort=True):
            best = rows.loc[rows["auc_mean"].idxmax()]
            qs3orao = rows[rows["method"] == "qs3orao"]
            cells.setdefault(dataset, []).extend([f"{methods[best['method']][0]} {_mean_auc(best)}",
                                                  _mean_auc(qs3orao.iloc[0]) if len(qs3orao) else "not run"])
    header = ["dataset"]
    for protocol in PROTOCOLS.values():
        header += [f"best method ({protocol})", f"QS3ORAO ({protocol})"]
    return markdown_table(header, ([dataset, *values] for dataset, values in sorted(cells.items())))


def signal_screen(root):
    """Each mirror dataset's screens under both protocols: status and score of each screen that lists it.

    A row with a best method is the fixed-level screen's (that method's CV AUC); one without, the
    permutation screen's (the proxy search's CV AUC; it reads no method of the run).
    """
    cells = {}
    for protocol in PROTOCOLS:
        methods = run_methods(root, f"reproduction-{protocol}")
        screened = pd.read_csv(root / "figures" / f"reproduction-{protocol}" / "screened_datasets.csv")
        for entry in screened.itertuples():
            if pd.isna(entry.best_cv_auc):
                shown = entry.status
            elif pd.isna(entry.best_method):
                shown = f"{entry.status}: permutation null, proxy {entry.best_cv_auc:.3f}"
            else:
                shown = f"{entry.status}: {methods[entry.best_method][0]} {entry.best_cv_auc:.3f}"
            cells.setdefault(entry.dataset, {}).setdefault(protocol, []).append(shown)
    header = ["dataset", *(f"{protocol}: status, best CV AUC" for protocol in PROTOCOLS.values())]
    return markdown_table(header, ([dataset, *("; ".join(row.get(p, [])) for p in PROTOCOLS)]
                                   for dataset, row in sorted(cells.items())))


def decomposition(root):
    """QS3ORAO's AUC gap to the best exact baseline split into optimisation, floor, grid and objective (trial means).

    The last column counts the trials whose QS3ORAO fit met its convergence criterion and, in parentheses,
    those of them off M by more than the decomposition's margin (— where the fits have no criterion).
    """
    rows = []
    for protocol, name in PROTOCOLS.items():
        methods = run_methods(root, f"reproduction-{protocol}")
        table = pd.read_csv(root / "figures" / f"reproduction-{protocol}" / "decomposition.csv")
        criterion = table["n_converged"].gt(0).any()
        for entry in table.sort_values("dataset").itertuples():
            rows.append([name, entry.dataset, methods[entry.baseline][0], f"{entry.total_mean:+.3f}",
                         *(f"{getattr(entry, f'{part}_mean'):+.3f}" for part in PARTS),
                         f"{entry.n_converged} of {entry.n_trials} ({entry.n_converged_off})" if criterion else "—"])
    return markdown_table(["protocol", "dataset", "best baseline", "gap", *PARTS, "converged (off M)"], rows)


def convergence_audit_table(root):
    """The best-effort protocol's QS3ORAO comparison fits that met their criterion, per column and tuning draw."""
    methods = run_methods(root, "reproduction-best")
    table = pd.read_csv(root / "figures" / "reproduction-best" / "convergence_audit.csv")
    rows = ([methods[entry.method][0], entry.tuning_draw, f"{entry.converged} of {entry.fits} ({entry.share:.0%})",
             f"{entry.interval_low:.2f}-{entry.interval_high:.2f}", entry.verdict, entry.off_minimiser]
            for entry in table.itertuples())
    return markdown_table(["column", "tuning draw", "converged", f"{convergence_audit.CONFIDENCE:.0%} interval",
                           f"against the {convergence_audit.BAR:.0%} bar", "converged, off f*"], rows)


def convergence_warmup_table(root):
    """The best-effort QS3ORAO columns' fits in their step's warm-up, and the unconverged ones a larger cap leaves there."""
    methods = run_methods(root, "reproduction-best")
    table = pd.read_csv(root / "figures" / "reproduction-best" / "convergence_audit_warmup.csv")
    multiples = convergence_audit.CAP_MULTIPLES
    rows = ([methods[entry["method"]][0], entry["fits"], f"{entry['in_warmup_converged']} of {entry['in_warmup']}",
             entry["in_warmup_off"], entry["allowed"], *(entry[f"unconverged_x{m}"] for m in multiples)]
            for entry in table.to_dict("records"))
    return markdown_table(["column", "fits", "converged in warm-up", "of those, off f*", "unconverged the bar allows",
                           *(f"unconverged, t0 >= {m} x cap" for m in multiples)], rows)


def mirror_data(root):
    """The rows, features and class sizes of each dataset the best-effort protocol prepared from the mirror."""
    data = json.loads((root / "figures" / "reproduction-best" / "manifest.json").read_text())["data"]
    rows = ([name, entry["n_rows"], entry["n_features"], ", ".join(map(str, entry.get("bin_counts", [])))]
            for name, entry in sorted(data.items()))
    return markdown_table(["dataset", "rows", "features", "rows per class"], rows)


def tuning_check(root):
    """Tuning once per dataset against once per trial: each method's mean AUC change and the trial spread."""
    methods = run_methods(root, "reproduction-tuning-check")
    table = pd.read_csv(root / "figures" / "reproduction-tuning-check" / "tuning_check.csv").sort_values("method")
    rows = ([methods[entry.method][0], entry.n_trials, f"{entry.mean_once:.4f}", f"{entry.mean_per_trial:.4f}",
             f"{entry.change:.4f}", f"{entry.spread:.4f}", "yes" if entry.within else "no"]
            for entry in table.itertuples())
    return markdown_table(["method", "trials", "AUC, tuned once", "AUC, tuned per trial", "change",
                           "trial spread (std)", "change < spread"], rows)


def run_costs(root):
    """Each committed run's size and cost from its manifest: jobs, the jobs' time, wall time, the machine's cores."""
    rows = []
    for manifest_path in sorted((root / "figures").glob("*/manifest.json")):
        manifest = json.loads(manifest_path.read_text())
        if "time" not in manifest:
            continue
        total = manifest["time"]["all"]

        def hours(key):
            return f"{total[key] / 3600:.2f}" if total.get(key) is not None else "not recorded"
        rows.append([f"`{manifest_path.parent.relative_to(root)}`", manifest["created_utc"][:10], total["n_jobs"],
                     hours("job_s"), hours("job_cpu_s"), hours("busy_s"), hours("wall_time_s"),
                     manifest["machine"]["cpu_count"]])
    return markdown_table(["run", "date", "jobs", "jobs' wall time, summed (h)", "jobs' CPU time (h)",
                           "busy time (h)", "wall time (h)", "cores"], rows)


def sgemm_sweep(root):
    """Each method on SGEMM's sweep, per protocol: the largest unlabeled size it finished and its median fit time there.

    Methods that train on the labeled rows only are left out: the unlabeled rows do not reach their fits.
    """
    cells, labels = {}, {}
    for protocol in PROTOCOLS:
        methods = run_methods(root, f"reproduction-{protocol}")
        labels.update({name: label for name, (label, labeled_only) in methods.items() if not labeled_only})
        results = one_draw(read_results(root / "figures" / f"reproduction-{protocol}" / "results.csv"))
        sweep = results[results["dataset"] == "sgemm"]
        for method, rows in sweep[sweep["method"].isin(labels)].groupby("method", sort=True):
            finished = rows.groupby("n_unlabeled")["status"].apply(lambda status: (status == "ok").all())
            sizes = finished[finished].index
            if len(sizes):
                largest = sizes.max()
                fit = rows.loc[rows["n_unlabeled"] == largest, "fit_time"].median()
                cells.setdefault(method, {})[protocol] = f"{int(largest):,} rows, {fit:.1f} s"
    header = ["method", *(f"{protocol}: largest size finished, median fit" for protocol in PROTOCOLS.values())]
    return markdown_table(header, ([labels[method], *(row.get(p, "not run") for p in PROTOCOLS)]
                                   for method, row in sorted(cells.items())))


def seconds(value):
    """A time as the documents show it: three significant digits, whole seconds from 100 s.

    Examples
    --------
    >>> seconds(0.2123), seconds(25.04), seconds(1254.6)
    ('0.212 s', '25 s', '1,255 s')
    """
    return f"{value:,.0f} s" if value >= 100 else f"{value:.3g} s"


def scale_time_at_accuracy(root):
    """Each committed scale study, per dataset and size: the target AUC, the fastest method that reaches it, and
    QS3ORAO and the exact baselines beside it (from the study's ``time_at_accuracy.csv``)."""
    rows = []
    for table_path in sorted((root / "figures").glob("scale-*/time_at_accuracy.csv")):
        study = table_path.parent.name
        labels = {name: label for name, (label, _) in run_methods(root, study).items()}
        for (dataset, size), cell in pd.read_csv(table_path).groupby(["dataset", "n_unlabeled"], sort=True):
            by_method = cell.set_index("method")
            reached = cell[cell["reached"]].sort_values(["median_fit_time", "method"])
            target = cell.iloc[0]

            def shown(method):
                if method not in by_method.index:
                    return "not run"
                entry = by_method.loc[method]
                short = "" if entry["reached"] else f" (short by {entry['shortfall']:.3f})"
                return f"{seconds(entry['median_fit_time'])}, {entry['mean_auc']:.3f}{short}"
            fastest = "none"
            if not reached.empty:
                first = reached.iloc[0]
                fastest = f"{labels.get(first['method'], first['method'])}, {seconds(first['median_fit_time'])}"
            rows.append([f"`{study}`", dataset, f"{size:,}",
                         f"{target['target_auc']:.3f} ({labels.get(target['target_method'], target['target_method'])})",
                         fastest, shown("qs3orao"), shown("m-pnu-auc"), shown("m-samult")])
    return markdown_table(["study", "dataset", "unlabeled rows", "target AUC", "fastest to the target",
                           "QS3ORAO", "M-PNU-AUC", "M-SAMULT"], rows)

RENDERERS = {
    "claims-empirical": claims_empirical,
    "claims-formal": claims_formal,
    "auc-summary": auc_summary,
    "signal-screen": signal_screen,
    "decomposition": decomposition,
    "convergence-audit": convergence_audit_table,
    "convergence-warmup": convergence_warmup_table,
    "mirror-data": mirror_data,
    "tuning-check": tuning_check,
    "run-costs": run_costs,
    "sgemm-sweep": sgemm_sweep,
    "scale-time-at-accuracy": scale_time_at_accuracy,
}


def rewrite(text, root):
    """``text`` with every generated block rendered anew, and the names of the blocks that changed.

    Parameters
    ----------
    text : str
        A document's markdown.
    root : pathlib.Path
        The repository whose committed outputs the blocks are rendered from.

    Returns
    -------
    new_text : str
    stale : list of str
        The names of the blocks whose text differed, in document order.

    Raises
    ------
    ValueError
        For a block name with no renderer, or a marker without its partner.
    """
    opened = MARKER.findall(text)
    paired = [name for match in BLOCK.finditer(text) for name in (match["name"],) * 2]
    if opened != paired:
        raise ValueError(f"generated-block markers do not pair up: {opened}")
    stale = []

    def render(match):
        name = match["name"]
        if name not in RENDERERS:
            raise ValueError(f"no renderer for the generated block {name!r}; known: {sorted(RENDERERS)}")
        body = RENDERERS[name](root)
        if body != match["body"]:
            stale.append(name)
        return match.group(1) + body + match.group(4)

    return BLOCK.sub(render, text), stale


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m qs3study.tools.documents", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 naming each stale block")
    parser.add_argument("--root", type=Path, default=REPOSITORY, help="the repository (default: this one)")
    args = parser.parse_args(argv)
    stale = []
    for path in documents(args.root):
        text = path.read_text()
        new_text, names = rewrite(text, args.root)
        stale += [f"{path.relative_to(args.root)}: {name}" for name in names]
        if not args.check and new_text != text:
            with atomic_path(path) as tmp:
                tmp.write_text(new_text)
    if args.check and stale:
        print("stale generated blocks (run `python -m qs3study.tools.documents`):", *stale, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
