"""The pipeline's stages, one module per job kind: data, tuning, training, tables, figures."""
