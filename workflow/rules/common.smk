"""Configuration checks, the study's design (datasets x methods x trials x sizes) and target lists."""

from baselines.registry import METHODS as METHOD_REGISTRY
import functools

from qs3study.datasets import DATASETS, resolve_mirror
from qs3study.stages.data import dataset_spec as configured_spec
from qs3study.configuration import (check_methods, check_rows, check_tuning_draws, configuration_error,
                                    job_memory_mb, method_config, method_spec)
from qs3study.design import ALL, BATCH_RECORD, TRIAL_RESULT, size_token

RESULTS = "results"
# Each configuration writes its figures under its own name, so that running one never
# overwrites another's committed reference outputs (figures/theory belongs to the theory stage).
FIGURES = f"figures/{config['name']}"
LOGS = "logs"
BENCHMARKS = "benchmarks"
# A training job is a part of one (dataset, method, size)'s trials (resources.trials_per_job); each trial has
# its own result file in the job's folder.
BATCH = "{dataset}/{method}/n{size}/part{part}"
TRIAL_RESULTS = f"{RESULTS}/runs/{BATCH}/{TRIAL_RESULT}"
BATCH_RECORDS = f"{RESULTS}/runs/{BATCH}/{BATCH_RECORD}"
# The same training job at a tuning draw d >= 1 (tuning.draws); draw 0 is the batch above.
DRAW_BATCH = "{dataset}/{method}/n{size}/draw{draw}/part{part}"
DRAW_TRIAL_RESULTS = f"{RESULTS}/runs/{DRAW_BATCH}/{TRIAL_RESULT}"
DRAW_BATCH_RECORDS = f"{RESULTS}/runs/{DRAW_BATCH}/{BATCH_RECORD}"


def _fail(key, message):
    raise configuration_error(key, message)


def _check_semantics(config):
    """Cross-field checks that the JSON schema cannot express (names must resolve)."""
    if config["name"] == "theory":
        _fail("name", "'theory' is reserved: figures/theory holds the claims ledger of the theory stage")
    for name, options in config["datasets"].items():
        if name not in DATASETS and options.get("source") is None:
            _fail(f"datasets.{name}", f"unknown dataset (known: {', '.join(sorted(DATASETS))}); "
                                      f"give a source: to read a local file")
    for label, method in config["methods"].items():
        if not label.replace("-", "").replace("_", "").isalnum():
            _fail(f"methods.{label}", "labels may contain letters, digits, '-' and '_' only")
        if method["method"] not in METHOD_REGISTRY:
            _fail(f"methods.{label}.method", f"unknown method {method['method']!r}; registered: "
                                             f"{', '.join(METHOD_REGISTRY)}")
    select = config["select"]
    if isinstance(select, list):
        for name in select:
            if name not in config["datasets"]:
                _fail("select", f"{name!r} is not a key of 'datasets' ({', '.join(config['datasets'])})")
    sweep = config["sweep"]["datasets"]
    for name in sweep if isinstance(sweep, list) else []:
        if name not in config["datasets"]:
            _fail("sweep.datasets", f"{name!r} is not a key of 'datasets'")
    for label in config["sweep"].get("max_unlabeled", {}):
        if label not in config["methods"]:
            _fail(f"sweep.max_unlabeled.{label}", f"{label!r} is not a key of 'methods'")
    reference = config["protocol"]["reference"]
    if reference not in config["methods"]:
        _fail("protocol.reference", f"{reference!r} is not a key of 'methods'")


@functools.cache
def dataset_spec(name):
    """The configured dataset ``name`` (a local source's sha256 is computed once, here)."""
    return configured_spec(name, config["datasets"][name])


def source_sha256(wildcards):
    """sha256 of a dataset's local source file (None for other datasets): a new file, a new plan."""
    spec = dataset_spec(wildcards.dataset)
    return spec.sha256 if spec.source_path is not None else None


def _in_mirror(name, mirror):
    """True when ``name`` needs no file, is a local source, or the mirror holds its file."""
    spec = dataset_spec(name)
    if spec.fname is None or spec.source_path is not None:
        return True
    return mirror is not None and any((mirror / rel).is_file() for rel in spec.mirror_candidates())


def _selected(config):
    select = config["select"]
    if select == "all":
        return list(config["datasets"])
    if select == "available":
        mirror = resolve_mirror(config["data"]["mirror"])
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
FILE_DATASETS = [d for d in SELECTED if dataset_spec(d).fname is not None]

wildcard_constraints:
    dataset="[a-z0-9_]+",
    method="[A-Za-z0-9_-]+",
    size=r"all|\d+",
    trial=r"\d+",
    part=r"\d+",
    draw=r"[1-9]\d*",


def dataset_options(dataset):
    """Options of a dataset (``datasets.<name>``, schema defaults filled in)."""
    return config["datasets"][dataset]


def comparison_size(dataset):
    """Size token of the AUC comparison on ``dataset``: its own ``n_unlabeled``, else the protocol's."""
    return size_token(dataset_options(dataset).get("n_unlabeled", PROTOCOL["n_unlabeled"]))


def documented_rows(dataset):
    """Rows a dataset is known to have before loading it (None when unknown)."""
    spec = dataset_spec(dataset)
    options = dataset_options(dataset)
    if options["n_samples"]:
        return options["n_samples"]
    if spec.default_n_samples:
        return spec.default_n_samples
    return spec.shape[0] if spec.shape else None


# Parameters and sizes are checked before any job runs (the prepare jobs check sizes again on the loaded rows).
check_methods(config, SELECTED)
check_tuning_draws(config["tuning"], config["methods"])
#: The tuning draws beyond the single tuning (draw 0), and the methods trained at each.
DRAWS = range(1, config["tuning"]["draws"])
DRAW_METHODS = config["tuning"]["draw_methods"]
for _dataset in SELECTED:
    if documented_rows(_dataset) is not None:
        check_rows(_dataset, documented_rows(_dataset), PROTOCOL, dataset_options(_dataset))


def design():
    """Every (dataset, method, size, trial) of the study, without repeats, in a stable order.

    Sweep sizes larger than a dataset's documented unlabeled pool are left out
    (the dataset's ``all`` point covers its end of the curve), and so are a method's
    sweep sizes above its ``sweep.max_unlabeled`` (a declared cut); a size the
    documented pool holds but the rows actually loaded do not (a partial file
    in a mirror, a local file, deduplicated rows), or a group split's unlabeled
    side does not, is recorded ``beyond_pool`` by its training job.
    """
    points = {}
    for dataset in SELECTED:
        sizes = {comparison_size(dataset): PROTOCOL["trials"]}
        rows = documented_rows(dataset)
        if dataset in SWEEP_DATASETS:
            for size in SWEEP["n_unlabeled"]:
                token = size_token(size)
                if token != ALL and rows is not None and int(token) > rows - PROTOCOL["n_labeled"]:
                    continue
                sizes[token] = max(sizes.get(token, 0), SWEEP.get("trials", PROTOCOL["trials"]))
        for method in METHODS:
            for size, trials in sizes.items():
                if size != comparison_size(dataset) and beyond_method_cap(method, size):
                    continue
                for trial in range(trials):
                    points[(dataset, method, size, trial)] = None
    return list(points)


def beyond_method_cap(method, size):
    """Whether sweep size ``size`` lies above ``method``'s ``sweep.max_unlabeled`` (``all`` lies above every cap)."""
    cap = SWEEP.get("max_unlabeled", {}).get(method)
    return cap is not None and (size == ALL or int(size) > cap)


def trial_part(trial):
    """The part of its (dataset, method, size)'s trials, the training job, that runs ``trial``."""
    per_job = config["resources"]["trials_per_job"]
    return 0 if per_job == ALL else trial // per_job


def expand_design(pattern):
    """``pattern`` formatted with every design point (fields dataset, method, size, trial, part)."""
    return [pattern.format(dataset=d, method=m, size=s, trial=t, part=trial_part(t)) for d, m, s, t in design()]


@functools.cache
def design_batches():
    """The design's training jobs: ``(dataset, method, size, part) -> [trials]``, in design order."""
    batches = {}
    for dataset, method, size, trial in design():
        batches.setdefault((dataset, method, size, trial_part(trial)), []).append(trial)
    return batches


def expand_batches(pattern):
    """``pattern`` formatted with every training job of the design (fields dataset, method, size, part)."""
    return [pattern.format(dataset=d, method=m, size=s, part=p) for d, m, s, p in design_batches()]


def batch_trials(wildcards):
    """The trials of the training job ``wildcards`` (dataset, method, size, part)."""
    return design_batches()[(wildcards.dataset, wildcards.method, wildcards.size, int(wildcards.part))]


def draw_design():
    """Every ``(dataset, method, size, trial, draw)`` trained again at a tuning draw ``>= 1``.

    The methods of ``tuning.draw_methods``, at their dataset's comparison size: the AUC claims' rows.
    """
    return [(dataset, method, size, trial, draw) for draw in DRAWS for dataset, method, size, trial in design()
            if method in DRAW_METHODS and size == comparison_size(dataset)]


def expand_draws(pattern):
    """``pattern`` formatted with every point of :func:`draw_design` (fields dataset, method, size, trial, part,
    draw), each text once."""
    return list(dict.fromkeys(pattern.format(dataset=d, method=m, size=s, trial=t, part=trial_part(t), draw=draw)
                              for d, m, s, t, draw in draw_design()))


def tuning_source(method, trial):
    """``(method, trial)`` of the search whose values a trial of ``method`` trains with, or None without one.

    Its own search, or that of the method it is ``tuned_by``; with ``tuning.per: dataset``, trial 0's.
    """
    source = method_config(config, method)["tuned_by"] or method
    if method_config(config, source)["grid"] is None:
        return None
    return source, trial if config["tuning"]["per"] == "trial" else 0


def tuned_params_path(dataset, method, trial, draw=0):
    """The tuning result a trial's training needs at tuning draw ``draw``, or None without a search."""
    source = tuning_source(method, trial)
    if source is None:
        return None
    pattern = (rules.tune_draw if draw else rules.tune).output[0]
    return expand(pattern, dataset=dataset, method=source[0], trial=source[1], draw=draw)[0]


def batch_tuned_params(wildcards):
    """Per trial of the training job ``wildcards`` (rule ``train``, or ``train_draw`` at its ``draw``), its tuning
    result (None without a search)."""
    draw = int(getattr(wildcards, "draw", 0))
    return [tuned_params_path(wildcards.dataset, wildcards.method, trial, draw) for trial in batch_trials(wildcards)]


def batch_tuned_input(wildcards):
    """The tuning results the training job ``wildcards`` reads, each once."""
    return sorted({path for path in batch_tuned_params(wildcards) if path is not None})


def download_input(wildcards):
    """The download stamp of a file-backed dataset (nothing for embedded data)."""
    if dataset_spec(wildcards.dataset).fname is None:
        return []
    return expand(rules.download.output[0], dataset=wildcards.dataset)[0]


def size_class(wildcards):
    return dataset_options(wildcards.dataset)["size_class"]


def resource_by_size(name, factor=1):
    """Resource function: ``config.resources[name][size_class]`` (minutes / MB) times ``factor``."""
    table = config["resources"][name]

    def _resource(wildcards, attempt=1):
        return int(table[size_class(wildcards)] * factor * attempt)

    return _resource


def train_runtime(wildcards, attempt=1):
    """Minutes of a training job: its size class's runtime per trial, times its trials."""
    return resource_by_size("runtime")(wildcards, attempt) * len(batch_trials(wildcards))


#: MiB a job holds beside its fit's arrays: the interpreter, its libraries, the data and the results.
JOB_RESERVE_MB = 2048


def train_mem_mb(wildcards, attempt=1):
    """Memory of a tuning job: its dataset's size class, at least the memory budget plus the reserve."""
    budget = PROTOCOL["memory_budget_mb"]
    return max(resource_by_size("mem_mb")(wildcards, attempt), int(budget + JOB_RESERVE_MB))


def planned_shape(dataset):
    """``(n_features, n_classes)`` of a dataset as documented before loading, None where either is not."""
    spec, options = dataset_spec(dataset), dataset_options(dataset)
    n_features = options["n_svd_components"] if spec.kind == "reviews" else (spec.shape or (None, None))[1]
    n_classes = {"regression": options["n_bins"], "reviews": 5}.get(spec.kind)
    return None if n_features is None or n_classes is None else (n_features, n_classes)


def fit_memory_mb(wildcards):
    """MiB the method's own estimate gives a training job's fit (its size's rows), None where it cannot be planned."""
    shape, rows = planned_shape(wildcards.dataset), documented_rows(wildcards.dataset)
    n_labeled = PROTOCOL["n_labeled"]
    if shape is None or (wildcards.size == ALL and rows is None):
        return None
    n_rows = rows if wildcards.size == ALL else n_labeled + int(wildcards.size)
    spec = method_spec(config, wildcards.method, wildcards.dataset)
    return job_memory_mb(spec, n_rows=n_rows, n_features=shape[0], n_classes=shape[1], n_labeled=n_labeled)


def train_job_mem_mb(wildcards, attempt=1):
    """Memory of a training job: its fit's own estimate plus the reserve, at least its dataset's size class.

    So that a machine run with ``--resources mem_mb=...`` never starts two jobs whose fits do not fit
    together, and a cluster packs them by memory.  A method without an estimate (or a dataset whose
    shape is not documented) asks for the memory budget plus the reserve, as a tuning job does.
    """
    fit = fit_memory_mb(wildcards)
    if fit is None:
        return train_mem_mb(wildcards, attempt)
    return max(resource_by_size("mem_mb")(wildcards, attempt), (fit + JOB_RESERVE_MB) * attempt)
