"""Filterable fields: a tool parameter, a Qdrant condition and a payload index from one
declaration."""
