"""The vector engines behind one seam (`backend.VectorBackend`): collections, searches, checks."""
