"""A folder of saved web pages (``*.html``/``*.htm``, recursively).

Keeps the title, the headings and the main text; drops navigation, headers, footers, scripts,
forms and asides. The main text is ``<main>``, else ``<article>``, else ``[role=main]``, else
``<body>``. The url is the page's canonical link (or ``og:url``); without one, the file's path
under the folder. The language is ``<html lang>`` (first two letters), default ``nl``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from lxml import etree, html

from ingestion.connectors.base import BadRecord, Connector, ConnectorError, DocumentRecord, Record, Section

_DROP = ("nav", "header", "footer", "script", "style", "noscript", "form", "aside", "template", "svg", "button")
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
# Elements that start a new line of text; everything else (a, span, strong, …) is inline.
_BLOCKS = {
    "p",
    "li",
    "td",
    "th",
    "dd",
    "dt",
    "blockquote",
    "pre",
    "div",
    "section",
    "tr",
    "ul",
    "ol",
    "dl",
    "table",
    "tbody",
    "thead",
    "article",
    "main",
    "body",
    "figure",
    "figcaption",
    "address",
    "br",
}


def _clean(text: str) -> str:
    return " ".join(text.split())


def _walk(element: etree._Element) -> Iterator[tuple[str, str]]:
    """Yield ``("heading", text)`` and ``("line", text)`` in document order.

    Inline text is gathered into one line until the next block or heading starts, so text that
    sits directly in a container, list items and the text after a nested list are each kept
    once; inline pieces are joined as the browser shows them (no added spaces).
    """
    buffer: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        line = _clean("".join(buffer))
        buffer.clear()
        if line:
            yield ("line", line)

    def visit(node: etree._Element) -> Iterator[tuple[str, str]]:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag in _HEADINGS:
            yield from flush()
            yield ("heading", _clean(" ".join(node.itertext())))
        elif tag in _BLOCKS or node is element:
            yield from flush()
            buffer.append(node.text or "")
            for child in node:
                yield from visit(child)
                buffer.append(child.tail or "")
            yield from flush()
        elif tag:
            buffer.append(node.text or "")
            for child in node:
                yield from visit(child)
                buffer.append(child.tail or "")

    yield from visit(element)
    yield from flush()


class HTMLConnector(Connector):
    """Reads saved pages under a folder (or one file)."""

    name = "html"
    source_key = "html"
    source_name = "Web pages"

    def units(self, path: Path, *, subsets: Sequence[str] = ()) -> list[tuple[Path, Path]]:
        if path.is_file():
            return [(path.parent, path)]
        if not path.is_dir():
            raise ConnectorError(f"HTML path not found: {path}")
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in {".html", ".htm"} and p.is_file())
        return [(path, f) for f in files]

    def records(self, unit: tuple[Path, Path]) -> Iterator[Record]:
        root_dir, file = unit
        relative = file.relative_to(root_dir).as_posix()
        try:
            tree = html.parse(str(file))
            root = tree.getroot()
        except (etree.ParserError, OSError, ValueError) as exc:
            yield BadRecord(location=relative, message=f"unreadable HTML: {exc}")
            return
        if root is None:
            yield BadRecord(location=relative, message="empty HTML document")
            return
        canonical = root.xpath("//link[@rel='canonical']/@href") or root.xpath("//meta[@property='og:url']/@content")
        url = str(canonical[0]).strip() if canonical else f"file:///{relative}"
        lang = (root.get("lang") or "nl")[:2].lower()
        title_el = root.find(".//title")
        h1 = root.find(".//h1")
        title = _clean(title_el.text_content()) if title_el is not None else ""
        title = title or (_clean(h1.text_content()) if h1 is not None else relative)
        description = root.xpath("//meta[@name='description']/@content")

        for element in root.xpath("|".join(f"//{tag}" for tag in _DROP) + "|//*[@role='navigation']"):
            element.drop_tree()
        main = next(
            (
                found[0]
                for found in (root.xpath("//main"), root.xpath("//article"), root.xpath("//*[@role='main']"))
                if found
            ),
            root.find("body") if root.find("body") is not None else root,
        )
        sections: list[Section] = []
        heading, lines = "", list[str]()
        for kind, text in _walk(main):
            if kind == "heading":
                if lines:
                    sections.append(Section(heading=heading, text="\n".join(lines)))
                heading, lines = text, []
            elif text:
                lines.append(text)
        if lines:
            sections.append(Section(heading=heading, text="\n".join(lines)))
        if not sections:
            yield BadRecord(location=relative, message="no main text found")
            return
        yield DocumentRecord(
            # A canonical url identifies the page wherever the saved copy lies; else the path.
            external_id=f"html:{url}" if canonical else f"html:{relative}",
            url=url,
            title=title,
            sections=tuple(sections),
            language=lang,
            context=title,
            summary=_clean(str(description[0])) if description else "",
            metadata={"file": relative},
        )
