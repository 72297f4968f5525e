"""LlamaIndex node postprocessors."""
