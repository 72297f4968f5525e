"""Settings, embeddings, vector backends, filter fields and payload contracts."""
