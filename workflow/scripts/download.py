"""Snakemake adapter: fetch one dataset file and record where it came from and its sha256."""

import sys


def main(smk):
    """Fetch ``smk.wildcards.dataset`` (mirror, cache or upstream) and write its provenance stamp.

    Parameters
    ----------
    smk : snakemake.script.Snakemake
        The job object injected by Snakemake.
    """
    import bench
    from qs3orao.datasets import fetch, get_spec

    log = bench.setup_logging(smk.log[0])
    spec = get_spec(smk.wildcards.dataset)
    local = fetch(spec, cache_dir=smk.params.cache_dir, mirror=smk.params.mirror)
    log.info("%s: %s from %s (sha256 %s)", spec.name, local.path, local.source, local.sha256)
    bench.write_json(smk.output[0], {
        "dataset": spec.name,
        "file": spec.fname,
        "source": local.source,
        "sha256": local.sha256,
        "sha256_expected": spec.sha256,
    })


if __name__ == "__main__":
    sys.path.insert(0, snakemake.scriptdir)  # noqa: F821 - injected by Snakemake
    main(snakemake)  # noqa: F821
