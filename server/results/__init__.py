"""The result model: what a search tool answers (`shape`), where its hits and their text are
(`hits`), and how a person reads it (`listing`, `explain_table`). The CLI, the web UI, the
Python API and the evals read results through this room; it reads none of them."""
