"""Settings, the paths a client may make the server read, and the limits of one ingestion."""
