"""A protocol stand-in for Ollama's HTTP API on 127.0.0.1 (it is not Ollama).

No Ollama runs here, so the Ollama path is tested against this small server, which answers the
requests scoperag sends with the JSON shapes and status codes of Ollama's API
(docs.ollama.com/api/embed). The client side is real: ollama-python under LlamaIndex's
`OllamaEmbedding`, over real HTTP. The vectors come from the real all-MiniLM-L6-v2 model,
served under Ollama's name for it, `all-minilm`.

    POST /api/embed  {"model", "input": str | [str], "truncate"?, "options"?, "keep_alive"?,
                      "dimensions"?}
      200 {"model", "embeddings": [[float, ...], ...], "total_duration", "load_duration",
           "prompt_eval_count"}
      404 {"error": "model \\"NAME\\" not found, try pulling it first"}  (model not pulled)
      400 {"error": "..."}                                                (malformed request)

`dimensions` shortens each vector and re-normalises it (as Ollama does for models that support
it); with `honours_dimensions=False` the field is ignored, as an Ollama release that predates
it ignores an unknown JSON field.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Embed = Callable[[list[str]], list[list[float]]]


class OllamaStandIn:
    """Serves `models` (name -> embedding function) until `stop()`; records every request."""

    def __init__(self, models: dict[str, Embed], honours_dimensions: bool = True) -> None:
        self.models = models
        self.honours_dimensions = honours_dimensions
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OllamaStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def embed(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, JSON body) of Ollama's answer to POST /api/embed."""
        started = time.perf_counter_ns()
        model, given = body.get("model"), body.get("input")
        texts = [given] if isinstance(given, str) else given
        if not model or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, {"error": "invalid input: need a model and a string or list of strings"}
        if model not in self.models:
            return 404, {"error": f'model "{model}" not found, try pulling it first'}
        vectors = self.models[model](texts)
        size = body.get("dimensions")
        if self.honours_dimensions and isinstance(size, int) and 0 < size < len(vectors[0]):
            vectors = [_unit(vector[:size]) for vector in vectors]
        return 200, {
            "model": model,
            "embeddings": vectors,
            "total_duration": time.perf_counter_ns() - started,
            "load_duration": 0,
            "prompt_eval_count": sum(len(text.split()) for text in texts),
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                if self.path != "/api/embed":
                    self._reply(404, {"error": "404 page not found"})
                    return
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._reply(400, {"error": "invalid JSON body"})
                    return
                standin.requests.append(body)
                self._reply(*standin.embed(body))

            def log_message(self, *args: object) -> None:
                """Quiet: the tests read `requests` instead."""

        return Handler


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]
