"""One ingestion pipeline per source kind."""
