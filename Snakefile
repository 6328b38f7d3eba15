"""QS3ORAO benchmark: regenerates the paper's experiments (Figures 2 and 3), the AUC table and a report.

    snakemake                                  # embedded default configuration, minutes on a laptop
    snakemake --configfile workflow/config/paper.yaml
    snakemake --configfile workflow/config/paper.yaml workflow/config/mirror.yaml --config select='[sgemm]'
    snakemake --report report.html
"""

from pathlib import Path

from snakemake.utils import min_version, validate

from qs3study.code_origin import refuse_foreign_code
from qs3study.configuration import check_unique_keys, drop_removed_entries
from qs3study.cpu_baseline import pin_cpu_baseline
from qs3study.live_run import clear_live_run, record_live_run, refuse_beside_live_run

min_version("8.0")

# Jobs run in processes of their own (--mode subprocess or remote) while the run's own process lives.
if workflow.is_main_process:
    refuse_beside_live_run()
    refuse_foreign_code(workflow.basedir)

# The embedded default applies only when no configuration is named on the command line,
# so that a named configuration is never merged with the default one.
if not workflow.overwrite_configfiles:

    configfile: Path(workflow.basedir) / "workflow" / "config" / "default.yaml"


check_unique_keys(workflow.configfiles)
drop_removed_entries(config)
validate(config, "workflow/config/schema.yaml")
# Jobs read these variables when their libraries load; this process has loaded its own already.
pin_cpu_baseline(config["cpu_baseline"])


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/perf.smk"
include: "workflow/rules/theory.smk"


onstart:
    record_live_run()


onsuccess:
    clear_live_run()


onerror:
    clear_live_run()


rule all:
    """The study: results table, figures, AUC table and manifest."""
    input:
        rules.aggregate.output,
        rules.manifest.input.figures,
        rules.manifest.output,
    default_target: True
