"""The embedded store's state as every surface reports it: who holds it (`status`) and what
its collections hold and lack (`check`)."""
