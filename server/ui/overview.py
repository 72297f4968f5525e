"""The overview's figures: what `scoperag list`, `status` and `check` report, per collection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scoperag.server.samples import SAMPLES
from scoperag.server.ui.context import UiContext


def _disk_size(folder: Path) -> int | None:
    """Bytes the files under `folder` take (None when it is not on this machine's disk)."""
    if not folder.is_dir():
        return None
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def overview(ctx: UiContext) -> dict[str, Any]:
    """Every enabled profile's collection (points, groups, embedder, disk size, the sample's
    command where it is empty), the owner and attached processes, and the check's verdict."""
    from scoperag.server.cli.check import check_backend
    from scoperag.server.cli.status import store_status
    from scoperag.server.data_admin import list_store

    settings = ctx.settings
    backend = ctx.runtime.backend
    listing = list_store(backend, settings)
    check = check_backend(backend, settings)
    problems = {c.name: c.problems for c in check.collections}
    edge = settings.data_dir / "edge" if settings.effective_backend == "edge" else None
    rows = []
    for profile, data in zip(ctx.profiles(), listing.profiles, strict=True):
        sample = SAMPLES / profile.sample.path
        rows.append(
            {
                "data": data,
                "groups": {name: len(values) for name, values in data.groups.items()},
                "disk": _disk_size(edge / data.collection) if edge and data.exists else None,
                "problems": problems.get(data.collection, []),
                "sample_command": profile.sample.command.format(path=sample)
                if not data.points
                else None,
            }
        )
    return {
        "listing": listing,
        "rows": rows,
        "status": store_status(settings),
        "check": check,
        "ok": check.ok,
    }


def size_text(size: int | None) -> str:
    """Bytes as a short figure: 512 B, 3.4 KiB, 12.0 MiB."""
    if size is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
