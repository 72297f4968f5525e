"""Write the reference vectors the local encoder is tested against (tests/data/).

sentence-transformers (with PyTorch) encodes real texts of several lengths with the packaged
all-MiniLM-L6-v2 folder; the texts, their vectors and the weights file's sha256 go into one
JSON file, so the test suite checks the onnxruntime encoder against them without PyTorch. Run
it where sentence-transformers is installed (it is not a dependency of scoperag or its tests):

    python evals/make_reference_vectors.py --book ../shared/data/books/pg1342-*.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

from scoperag.core.embedding.packaged_model import packaged_model_folder

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "minilm_reference_vectors.json"


def texts(book: Path) -> list[str]:
    """Queries, odd strings, and ten 2,000-character book passages (past the 256-token cut)."""
    text = book.read_text(encoding="utf-8")
    passages = [text[start : start + 2000] for start in range(20_000, 60_000, 4_000)]
    queries = ["Why do I get database locked errors?", "fireball damage at higher levels", "a"]
    return [*queries, "  spaced  out  ", "", "Ünïcödé café 東京", *passages]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", type=Path, required=True, help="a plain-text book")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    folder = packaged_model_folder()
    model = SentenceTransformer(str(folder), device="cpu")
    inputs = texts(args.book)
    vectors = model.encode(inputs, normalize_embeddings=True, batch_size=8)
    weights = hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()
    record = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_safetensors_sha256": weights,
        "texts": inputs,
        # float32's shortest round-trip decimal: the file gives back the exact vectors
        "vectors": [[float(str(value)) for value in row] for row in np.asarray(vectors)],
    }
    args.out.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(inputs)} vectors of {vectors.shape[1]} -> {args.out}")


if __name__ == "__main__":
    main()
