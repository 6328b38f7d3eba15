"""Snakemake adapter: preprocess one dataset with :func:`qs3orao.datasets.load_ordinal`."""

import sys

LOADER_OPTIONS = ("n_samples", "n_bins", "dedupe", "n_components")


def main(smk):
    """Preprocess ``smk.wildcards.dataset`` and write ``X.npy``, ``y.npy`` and ``info.json``.

    The arrays are plain ``.npy`` files so that training jobs can memory-map
    them and read only the rows of their split.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    import numpy as np

    import bench
    from qs3orao.datasets import load_ordinal

    log = bench.setup_logging(smk.log[0])
    name = smk.wildcards.dataset
    options = {k: v for k, v in smk.params.options.items() if k in LOADER_OPTIONS}
    data = load_ordinal(name, cache_dir=smk.params.cache_dir, mirror=smk.params.mirror,
                        random_state=smk.params.seed, **options)
    log.info("%s: X %s, rows per class %s", name, data.X.shape, data.bin_counts.tolist())
    bench.save_array(smk.output.X, np.ascontiguousarray(data.X, dtype=np.float64))
    bench.save_array(smk.output.y, np.asarray(data.y, dtype=np.int64))
    bench.write_json(smk.output.info, {
        "dataset": name,
        "n_rows": int(data.X.shape[0]),
        "n_features": int(data.X.shape[1]),
        "bin_counts": data.bin_counts.tolist(),
        "options": options,
        "provenance": {k: v for k, v in data.info.items() if k != "cache"},
    })


if __name__ == "__main__":
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821 - injected by Snakemake
    main(snakemake)  # noqa: F821
