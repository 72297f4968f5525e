"""What an export and an import report."""

from __future__ import annotations

from pydantic import BaseModel, Field

from scoperag.server.transfer.collection_writer import CollectionCopy

SHOWN = 100  # refusals listed one by one; the count says how many in all


class ExportReport(BaseModel):
    """One export: the file, its format, and the points of each collection written."""

    file: str
    format: str
    profile: str
    collections: dict[str, int] = Field(description="Collection -> points written.")
    seconds: float


class ImportReport(BaseModel):
    """One import: what was written, what was already there, and what was refused and why."""

    file: str
    format: str = Field(description="The format read, detected from the content.")
    profile: str
    collections: list[CollectionCopy] = Field(default_factory=list)
    imported: int = Field(default=0, description="Points (or memories) written.")
    duplicates: int = Field(
        default=0, description="Memories skipped as an exact duplicate of one stored."
    )
    refused: list[str] = Field(
        default_factory=list, description=f"Why each item was refused (the first {SHOWN})."
    )
    refused_count: int = 0
    reembedded: bool = False
    state: int = Field(
        default=0, description="State items restored beside the points (books: reading positions)."
    )
    dropped: dict[str, str] = Field(
        default_factory=dict,
        description="Fields of another server's format found in the file and not kept: why.",
    )
    resumed: str | None = Field(
        default=None, description="An earlier import of this file that stopped, now finished."
    )

    def refuse(self, reason: str) -> None:
        """Count a refused item, listing its reason among the first ones."""
        self.refused_count += 1
        if len(self.refused) < SHOWN:
            self.refused.append(reason)
