"""`scoperag serve --transport http`: the Starlette app, its access control, its connection
limits."""
