"""One data dir's embedded engine shared by its processes: `owner` serves it, `channel` reaches
it, `wire` is what crosses, `shared_backend` is the `VectorBackend` every process uses."""
