"""Moving a store: a profile's collections to a file and back (`formats`, `exporting`,
`importing`), other memory servers' exports in, and one writer shared with `scoperag migrate`
(`collection_writer`)."""
