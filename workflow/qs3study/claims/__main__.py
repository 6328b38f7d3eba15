"""``python -m qs3study.claims --out DIR``: the ledger and its figures reassembled from the committed tidy data.

Reads the design and the studies' tidy data (:data:`TIDY` in ``--data``, default
``figures/theory``) and writes into
``DIR`` the same files the theory run commits: the tidy data, the per-cell
summary, the ledger (Markdown, CSV), every figure and a manifest whose
``stage`` says that only the assembly ran. No study is rerun: this takes seconds.
Paths are relative to the repository root, as in the Snakemake run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from qs3study.files import read_columns, refuse_foreign_files
from qs3study.theory.convergence import RECORD_COLUMNS
from qs3study.theory.dataset_facts import FACT_COLUMNS

from .assemble import assemble_ledger, draw_figures, empirical_inputs, figure_names
from .design import load_design
from .manifest import theory_manifest, tree_dirty, write_manifest
from .studies import RATE_COLUMNS

ROOT = Path(__file__).resolve().parents[3]
DESIGN = "workflow/config/theory.yaml"
DATA = "figures/theory"
_SETTING = ("instance", "lam", "theta_lam", "theta", "batch_size", "n_components", "schedule", "step_offset")
_PROBLEM = ("instance", "lam", "n", "fstar_norm", "curvature", "M1", "M", "L", "initial_error", "initial_error_max")
#: The studies' tidy data the assembly reads, and the columns each must hold.
_SWEEP = ("sweep", "size_name", "size", "quantity", "repeat", "value")
TIDY = {"convergence.csv": (*_SETTING, *RECORD_COLUMNS), "problems.csv": _PROBLEM,
        "rate.csv": (*_SETTING, "seed", "t", *RATE_COLUMNS), "rate_v2.csv": (*_SETTING, "seed", "t", *RATE_COLUMNS),
        "huber.csv": (*_SETTING, "huber_delta", *RECORD_COLUMNS), "huber_problems.csv": (*_PROBLEM, "gradient_norm"),
        "huber_informative.csv": (*_SETTING, "huber_delta", *RECORD_COLUMNS),
        "huber_informative_problems.csv": (*_PROBLEM, "gradient_norm"),
        "offset_data.csv": (*_SETTING, *RECORD_COLUMNS), "complexity.csv": _SWEEP, "complexity_v2.csv": _SWEEP,
        "datasets.csv": FACT_COLUMNS}
STAGE = "assembly only: ledger, summary, figures from the committed tidy data (no study rerun)"


def reassemble(out, *, design=DESIGN, data=DATA, progress=None, allow_dirty=False):
    """Reassemble the theory outputs into ``out``; relative paths are read from the repository root.

    Into the repository's ``figures/`` only from a clean tree (tracked files outside ``figures/``
    committed), unless ``allow_dirty``: the manifest then records ``dirty: true``.

    Returns
    -------
    list of str
        The files written (absolute paths), the manifest last.

    Raises
    ------
    FileNotFoundError
        If a tidy file is missing.
    ValueError
        If a tidy file cannot be parsed or lacks a column the assembly reads.
    FileExistsError
        If ``out`` holds a file of an output's name that its manifest does not list (not written by
        the assembly or the theory run): nothing is written then.
    PermissionError
        If ``out`` lies under the repository's ``figures/``, the tree is dirty and not ``allow_dirty``.
    """
    out = os.path.abspath(out)
    say = progress or (lambda message: None)
    cwd = os.getcwd()
    if Path(out).is_relative_to(ROOT / "figures") and tree_dirty(ROOT) and not allow_dirty:
        raise PermissionError(f"{out}: the git tree has uncommitted changes outside figures/; commit them, or pass "
                              "--allow-dirty (the manifest then records dirty: true)")
    os.chdir(ROOT)
    try:
        spec = load_design(design)
        for name, columns in TIDY.items():
            source = os.path.join(data, name)
            if not os.path.isfile(source):
                raise FileNotFoundError(f"data: missing tidy file {source!r} (expected {', '.join(TIDY)})")
            read_columns(source, columns)
        summaries = ("claims_ledger.md", "claims_ledger.csv", "summary.csv", "rate_summary.csv", "huber_summary.csv",
                     "huber_informative_summary.csv", "offset_data_summary.csv")
        figures = [f"{name}.{ext}" for name in figure_names(spec) for ext in ("png", "pdf")]
        # A tidy file is copied as it is: one already holding those bytes (as in the study's own folder) is not foreign.
        copies = {name: Path(data, name).read_bytes() for name in TIDY}
        refuse_foreign_files(out, [*TIDY, *summaries, *figures, "manifest.json"], "manifest.json", copies)
        os.makedirs(out, exist_ok=True)
        for name in TIDY:
            source = os.path.join(data, name)
            if os.path.abspath(source) != os.path.join(out, name):
                shutil.copyfile(source, os.path.join(out, name))
        tidy = {name.removesuffix(".csv"): os.path.join(out, name) for name in TIDY}
        complexity_v1 = tidy.pop("complexity")  # design v1's run: copied and hashed, read by no row
        tables, configurations = empirical_inputs(spec)
        say("ledger: deterministic checks and the studies' summaries")
        paths = {name: os.path.join(out, name) for name in summaries}
        assemble_ledger(design=design, **tidy, results_tables=tables,
                        results_configurations=configurations, md=paths["claims_ledger.md"],
                        csv=paths["claims_ledger.csv"], summary=paths["summary.csv"],
                        rate_summary=paths["rate_summary.csv"], huber_summary=paths["huber_summary.csv"],
                        huber_informative_summary=paths["huber_informative_summary.csv"],
                        offset_data_summary=paths["offset_data_summary.csv"])
        say("figures")
        stems = {name: os.path.join(out, name) for name in figure_names(spec)}
        draw_figures(design=design, convergence=tidy["convergence"], summary=paths["summary.csv"],
                     huber_summary=paths["huber_summary.csv"],
                     huber_informative_summary=paths["huber_informative_summary.csv"],
                     rate_summary=paths["rate_summary.csv"], complexity_v2=tidy["complexity_v2"], stems=stems)
        written = [*tidy.values(), complexity_v1, *paths.values(),
                   *(f"{stem}.{ext}" for stem in stems.values() for ext in ("png", "pdf"))]
        shown = [os.path.relpath(p, ROOT) if Path(p).is_relative_to(ROOT) else p for p in written]
        command = f"python -m qs3study.claims --out {os.path.relpath(out, ROOT) if Path(out).is_relative_to(ROOT) else out}"
        manifest = os.path.join(out, "manifest.json")
        read = [os.path.relpath(os.path.abspath(os.path.join(data, name)), ROOT) for name in TIDY] + list(tables)
        write_manifest(manifest, theory_manifest(design_path=design, outputs=shown, root=str(ROOT), command=command,
                                                 stage=STAGE, inputs=read))
    finally:
        os.chdir(cwd)
    return [*written, manifest]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m qs3study.claims", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--design", default=DESIGN, help=f"design file (default {DESIGN})")
    parser.add_argument("--data", default=DATA, help=f"folder of the committed tidy data (default {DATA})")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write into figures/ from a tree with uncommitted changes (recorded in the manifest)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        written = reassemble(args.out, design=args.design, data=args.data, allow_dirty=args.allow_dirty,
                             progress=lambda message: print(message, file=sys.stderr, flush=True))
    except (ValueError, OSError) as error:
        print(f"python -m qs3study.claims: {error}", file=sys.stderr)
        return 1
    print(f"{len(written)} files in {os.path.abspath(args.out)} ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
