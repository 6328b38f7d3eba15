"""Configuration checks, the study's design (datasets x methods x trials x sizes) and target lists."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "scripts"))

import bench  # noqa: E402
from baselines.registry import make_method  # noqa: E402
from qs3orao.datasets import DATASETS, get_spec, resolve_mirror  # noqa: E402

SCRIPTS = Path(workflow.basedir) / "workflow" / "scripts"
REPORT = Path(workflow.basedir) / "workflow" / "report"
RESULTS = "results"
FIGURES = "figures"
LOGS = "logs"
BENCHMARKS = "benchmarks"
RUN = "{dataset}/{method}/n{size}/trial{trial}"


def _fail(key, message):
    raise ValueError(f"configuration key {key!r}: {message}")


def _check_semantics(config):
    """Cross-field checks that the JSON schema cannot express (names must resolve)."""
    for name in config["datasets"]:
        if name not in DATASETS:
            _fail(f"datasets.{name}", f"unknown dataset; known: {', '.join(sorted(DATASETS))}")
    for label, method in config["methods"].items():
        if not label.replace("-", "").replace("_", "").isalnum():
            _fail(f"methods.{label}", "labels may contain letters, digits, '-' and '_' only")
        # Dataset-level parameters may not apply to every method, but a method's own must.
        accepted = make_method(method["method"]).get_params()
        unknown = sorted(set(method.get("params") or {}) - set(accepted))
        if unknown:
            _fail(f"methods.{label}.params", f"{unknown} are not parameters of {method['method']!r}; "
                                             f"it takes {', '.join(sorted(accepted))}")
    select = config.get("select", "all")
    if isinstance(select, list):
        for name in select:
            if name not in config["datasets"]:
                _fail("select", f"{name!r} is not a key of 'datasets' ({', '.join(config['datasets'])})")
    sweep = config["sweep"]["datasets"]
    for name in sweep if isinstance(sweep, list) else []:
        if name not in config["datasets"]:
            _fail("sweep.datasets", f"{name!r} is not a key of 'datasets'")
    reference = config["protocol"].get("reference", "qs3orao")
    if reference not in config["methods"]:
        _fail("protocol.reference", f"{reference!r} is not a key of 'methods'")


def _in_mirror(name, mirror):
    """True when ``name`` needs no file, or the mirror holds its file."""
    spec = get_spec(name)
    if spec.fname is None:
        return True
    return mirror is not None and any((mirror / rel).is_file() for rel in spec.mirror_candidates())


def _selected(config):
    select = config.get("select", "all")
    if select == "all":
        return list(config["datasets"])
    if select == "available":
        mirror = resolve_mirror(config["data"].get("mirror"))
        return [name for name in config["datasets"] if _in_mirror(name, mirror)]
    return list(select)


_check_semantics(config)
SELECTED = _selected(config)
if not SELECTED:
    _fail("select", "no configured dataset is available (is data.mirror right?)")
METHODS = list(config["methods"])
PROTOCOL = config["protocol"]
SWEEP = config["sweep"]
SWEEP_DATASETS = [d for d in SELECTED if SWEEP["datasets"] == "all" or d in SWEEP["datasets"]]
FILE_DATASETS = [d for d in SELECTED if get_spec(d).fname is not None]

wildcard_constraints:
    dataset="[a-z0-9_]+",
    method="[A-Za-z0-9_-]+",
    size=r"all|\d+",
    trial=r"\d+",


def dataset_options(dataset):
    """Loading options of a dataset, with schema defaults."""
    return dict(config["datasets"][dataset] or {})


def comparison_size(dataset):
    """Size token of the AUC comparison on ``dataset``."""
    return bench.size_token(dataset_options(dataset).get("n_unlabeled", PROTOCOL["n_unlabeled"]))


def documented_rows(dataset):
    """Rows a dataset is known to have before loading it (None when unknown)."""
    spec = get_spec(dataset)
    options = dataset_options(dataset)
    if options.get("n_samples"):
        return options["n_samples"]
    if spec.default_n_samples:
        return spec.default_n_samples
    return spec.shape[0] if spec.shape else None


def design():
    """Every (dataset, method, size, trial) of the study, without repeats, in a stable order.

    Sweep sizes larger than a dataset's documented unlabeled pool are left out
    (the dataset's ``all`` point covers its end of the curve).
    """
    points = {}
    for dataset in SELECTED:
        sizes = {comparison_size(dataset): PROTOCOL["trials"]}
        rows = documented_rows(dataset)
        if dataset in SWEEP_DATASETS:
            for size in SWEEP["n_unlabeled"]:
                token = bench.size_token(size)
                if token != bench.ALL and rows is not None and int(token) > rows - PROTOCOL["n_labeled"]:
                    continue
                sizes[token] = max(sizes.get(token, 0), SWEEP.get("trials", PROTOCOL["trials"]))
        for method in METHODS:
            for size, trials in sizes.items():
                for trial in range(trials):
                    points[(dataset, method, size, trial)] = None
    return list(points)


def expand_design(pattern):
    """``pattern`` formatted with every design point (fields dataset, method, size, trial)."""
    return [pattern.format(dataset=d, method=m, size=s, trial=t) for d, m, s, t in design()]


def tuned_params_input(wildcards):
    """The tuning result a training job needs, or nothing when the method has no grid."""
    if bench.method_config(config, wildcards.method)["grid"] is None:
        return []
    return f"{RESULTS}/tuning/{wildcards.dataset}/{wildcards.method}/trial{wildcards.trial}.json"


def download_input(wildcards):
    """The download stamp of a file-backed dataset (nothing for embedded data)."""
    if get_spec(wildcards.dataset).fname is None:
        return []
    return f"{RESULTS}/downloads/{wildcards.dataset}.json"


def size_class(wildcards):
    return dataset_options(wildcards.dataset).get("size_class", "small")


_RESOURCE_DEFAULTS = {
    "mem_mb": {"small": 2000, "medium": 8000, "large": 32000},
    "runtime": {"small": 30, "medium": 240, "large": 1440},
}


def resource_by_size(name, factor=1):
    """Resource function: ``config.resources[name][size_class]`` (minutes / MB) times ``factor``."""
    table = {**_RESOURCE_DEFAULTS[name], **config.get("resources", {}).get(name, {})}

    def _resource(wildcards, attempt=1):
        return int(table[size_class(wildcards)] * factor * attempt)

    return _resource


def train_mem_mb(wildcards, attempt=1):
    """Memory of a training job: its dataset's size class, at least the memory budget plus 2 GB."""
    budget = PROTOCOL.get("memory_budget_mb", 8192)
    return max(resource_by_size("mem_mb")(wildcards, attempt), int(budget + 2048))


def figure_targets():
    return [
        f"{FIGURES}/fig2_time_vs_unlabeled.png",
        f"{FIGURES}/fig2_time_vs_unlabeled.pdf",
        f"{FIGURES}/fig3_auc_boxplot.png",
        f"{FIGURES}/fig3_auc_boxplot.pdf",
        f"{FIGURES}/auc_table.md",
        f"{FIGURES}/auc_table.csv",
        f"{FIGURES}/manifest.json",
    ]
