"""PDFs of plain text made with pypdf's public API, as large as a test needs."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

_FONT = DictionaryObject(
    {
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
    }
)


def text_pdf(path: Path, pages: int, words_per_page: int, line_words: int = 12) -> Path:
    """A PDF of `pages` pages, each `words_per_page` words of text in lines of `line_words`."""
    writer = PdfWriter()
    word = 0
    for _ in range(pages):
        page = writer.add_blank_page(width=612, height=792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): _FONT})}
        )
        lines = []
        for start in range(0, words_per_page, line_words):
            count = min(line_words, words_per_page - start)
            words = " ".join(f"word{(word + n) % 997}" for n in range(count))
            word += count
            lines.append(f"({words}.) Tj T*")
        content = DecodedStreamObject()
        content.set_data(f"BT /F1 8 Tf 10 TL 20 780 Td {' '.join(lines)} ET".encode())
        page.replace_contents(content)
        page.compress_content_streams()
    writer.write(path)
    return path
