"""qdrant-client's engines: local mode (`path=`) and a Qdrant server (`url=`)."""
