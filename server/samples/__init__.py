"""Every profile's bundled sample, so each can be tried from an install (package data)."""

from pathlib import Path

SAMPLES = Path(__file__).parent
