"""The overview's figures: what `scoperag list` and `status` report per enabled profile, and
(asked separately by the page, as it takes longer) `scoperag check`'s verdict and disk sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoperag.server.samples import SAMPLES
from scoperag.server.ui.context import UiContext


def _disk_size(folder: Path) -> int | None:
    """Bytes the files under `folder` take on disk, allocated blocks (a preallocated file's
    unwritten part is not counted); None when it is not on this machine's disk."""
    if not folder.is_dir():
        return None
    return sum(path.stat().st_blocks * 512 for path in folder.rglob("*") if path.is_file())


def overview(ctx: UiContext) -> dict[str, Any]:
    """Every enabled profile's collection (points, groups, embedder, the sample's command where
    it is empty) and the owner and attached processes."""
    from scoperag.server.data_admin import list_store
    from scoperag.server.store_state.status import store_status

    listing = list_store(ctx.runtime.backend, ctx.settings)
    rows = []
    for profile, data in zip(ctx.profiles(), listing.profiles, strict=True):
        sample = SAMPLES / profile.sample.path
        rows.append(
            {
                "data": data,
                "groups": {name: len(values) for name, values in data.groups.items()},
                "sample_command": None
                if data.points
                else profile.sample.command.format(path=sample),
            }
        )
    return {"listing": listing, "rows": rows, "status": store_status(ctx.settings)}


def health(ctx: UiContext) -> dict[str, Any]:
    """`scoperag check`'s report (with the disk floor and free space) and each collection's
    size on disk."""
    from scoperag.server.store_state.check import check_backend

    settings = ctx.settings
    check = check_backend(ctx.runtime.backend, settings)
    edge = settings.data_dir / "edge" if settings.effective_backend == "edge" else None
    sizes = {
        c.name: size_text(_disk_size(edge / c.name) if edge else None) for c in check.collections
    }
    return {"check": check, "ok": check.ok, "sizes": sizes}


def size_text(size: float | None) -> str:
    """Bytes as a short figure: 512 B, 3.4 KiB, 12.0 MiB."""
    if size is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return "-"
