"""One progress protocol for every long task (ingestion, export and import, migration): a
callable taking `(done, total, note)`, and one renderer of it, a tqdm bar (`ProgressBar`). MCP
progress notifications carry the same three values (progress, total, message)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any, Protocol


class Progress(Protocol):
    """`done` of `total` units so far; `note` says what is being done (may be empty)."""

    def __call__(self, done: int, total: int, note: str = "") -> None: ...


def as_progress(callback: Callable[..., Any] | None) -> Progress | None:
    """A caller's callback as a `Progress` (its note optional); one that takes only
    `(done, total)` gets no note."""
    if callback is None:
        return None
    try:
        inspect.signature(callback).bind(0, 0, "")
    except TypeError:
        return lambda done, total, note="": callback(done, total)
    except ValueError:  # a callable without a signature Python can read: as given
        return callback
    return lambda done, total, note="": callback(done, total, note)


class ProgressBar:
    """A tqdm bar fed `(done, total, note)`: it appears with the first report, follows a total
    that grows (a PDF's pages, once read) and closes when done reaches total. On a terminal
    only (stderr), unless `auto`: then tqdm.auto draws it anywhere, as a widget in Jupyter."""

    def __init__(self, label: str, unit: str = "it", auto: bool = False) -> None:
        self.label, self.unit, self.auto = label, unit, auto
        self._bar: Any = None

    def __call__(self, done: int, total: int, note: str = "") -> None:
        if self._bar is None:
            if self.auto:
                from tqdm.auto import tqdm
            else:
                from tqdm import tqdm
            hidden = not self.auto and not sys.stderr.isatty()
            self._bar = tqdm(total=total, desc=self.label, unit=self.unit, disable=hidden)
        self._bar.total = total
        self._bar.n = done
        if note:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.refresh()
        if total is not None and done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
