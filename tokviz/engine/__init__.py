"""Pure-Python tokenizer engine: stages, components and the pipeline. Never imports Qt."""
