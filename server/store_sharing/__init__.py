"""One data dir's embedded engine shared by its processes: `owner` serves it, `channel` reaches
it, `wire` is what crosses, `shared_backend` is the `VectorBackend` every process uses."""

from scoperag.server.store_sharing.shared_backend import SharedBackend

__all__ = ["SharedBackend"]
