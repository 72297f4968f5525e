"""Process sharing of a data dir's embedded engine: the process holding it serves it to the
others on a Unix socket (`owner`), in JSON-RPC with a fixed set of types (`wire`); the others
reach it over one connection per thread (`channel`), and every process uses the engine through
`SharedBackend` (`shared_backend`)."""

from scoperag.server.store_sharing.shared_backend import SharedBackend

__all__ = ["SharedBackend"]
