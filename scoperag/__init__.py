"""scoperag: metadata-scoped retrieval over Qdrant with LlamaIndex, served as MCP tools.

The one import package. Its parts live in the repository's top-level folders (`core/`,
`pipelines/`, `retrievers/`, `postprocessors/`, `server/`); `pyproject.toml` maps each of them to
`scoperag.<part>`, so an install holds `scoperag` alone at the top of site-packages.
"""
