"""The resident engine: one process per data dir that holds the model, the engine and the tools
and serves them on the store's socket (`resident`); `scoperag serve`, the CLI and
`scoperag.Store()` are doors to it (`door`, `relay`, `remote_cli`), found or started by
`locate`."""
