"""Payload contracts and filter declarations, one module per profile."""
