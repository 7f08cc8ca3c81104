"""HTML as the model reads it: Markdown (``markdownify``) or plain text (``beautifulsoup4``).

Both drop what is not content — scripts, styles, ``noscript``, frames, objects, embedded
SVG, forms' hidden parts — before converting. Markdown uses ATX headings (``#``), ``-``
bullets and fenced code blocks; relative links and images are made absolute against the
page's URL so the model can follow them.
"""

from __future__ import annotations

import re
import urllib.parse

from bs4 import BeautifulSoup, Tag
from bs4.dammit import UnicodeDammit
from markdownify import ATX, MarkdownConverter

__all__ = ["decode_html", "html_to_markdown", "html_to_text"]

_DROPPED = ("script", "style", "noscript", "iframe", "frame", "object", "embed", "template")
_DROPPED_FOR_MARKDOWN = (*_DROPPED, "meta", "link", "svg", "canvas")
# Paragraph-like blocks get a blank line around them; these only end their line.
_PARAGRAPHS = frozenset(
    {"address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset"}
    | {"figcaption", "figure", "footer", "form", "header", "main", "nav", "ol", "p"}
    | {"section", "table", "title", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre"}
)
_LINES = frozenset({"br", "li", "dd", "dt", "tr", "summary", "caption"})
_CELLS = frozenset({"td", "th"})
# Markers that survive whitespace collapsing (not whitespace themselves).
_PARAGRAPH, _LINE, _CELL, _PRE = "\x01", "\x02", "\x03", "\x04"
_WHITESPACE = re.compile(r"\s+")
_BREAKS = re.compile(r" *([\x01\x02]) *")
_BLANK_RUNS = re.compile(r"\n{3,}")
_KEEP_LINKS = ("#", "data:", "javascript:", "mailto:")


def decode_html(body: bytes, charset: str | None = None) -> str:
    """The page as text: the header's charset if it is known, else what the page declares
    (``<meta charset>``), else a guess."""
    known = [charset] if charset else []
    dammit = UnicodeDammit(body, known_definite_encodings=known, is_html=True)
    if dammit.unicode_markup is not None:
        return dammit.unicode_markup
    return body.decode("utf-8", errors="replace")


def html_to_markdown(html: str, *, base_url: str | None = None) -> str:
    soup = _soup(html, _DROPPED_FOR_MARKDOWN)
    if base_url:
        _absolute_links(soup, base_url)
    converter = MarkdownConverter(
        heading_style=ATX,
        bullets="-",
        code_language_callback=_code_language,
        escape_underscores=False,
        escape_asterisks=False,
    )
    return _tidy(converter.convert_soup(soup))


def html_to_text(html: str) -> str:
    """The visible text: whitespace collapsed as a browser would, one block per line, a blank
    line between paragraphs, table cells separated by tabs, ``<pre>`` kept as it is."""
    soup = _soup(html, _DROPPED)
    preformatted: list[str] = []
    for pre in soup.find_all("pre"):
        preformatted.append(pre.get_text().strip("\n"))
        pre.replace_with(f"{_PARAGRAPH}{_PRE}{len(preformatted) - 1}{_PRE}{_PARAGRAPH}")
    for tag in soup.find_all(True):
        if tag.name in _PARAGRAPHS:
            tag.insert_before(_PARAGRAPH)
            tag.insert_after(_PARAGRAPH)
        elif tag.name in _LINES:
            tag.insert_after(_LINE)
        elif tag.name in _CELLS:
            tag.insert_after(_CELL)
    text = _WHITESPACE.sub(" ", soup.get_text())
    text = re.sub(rf" *{_CELL}[ {_CELL}]*(?=[{_PARAGRAPH}{_LINE}]|$)", "", text)
    text = re.sub(rf" *{_CELL} *", "\t", text)
    text = _BREAKS.sub(lambda m: "\n\n" if m.group(1) == _PARAGRAPH else "\n", text)
    text = re.sub(rf"{_PRE}(\d+){_PRE}", lambda m: preformatted[int(m.group(1))], _tidy(text))
    return text


def _soup(html: str, dropped: tuple[str, ...]) -> BeautifulSoup:
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(list(dropped)):
        tag.decompose()
    for tag in soup.find_all("input", attrs={"type": "hidden"}):
        tag.decompose()
    return soup


def _absolute_links(soup: BeautifulSoup, base_url: str) -> None:
    base = soup.find("base", href=True)
    if isinstance(base, Tag):
        base_url = urllib.parse.urljoin(base_url, str(base["href"]))
    for tag in soup.find_all(True):
        for attribute in ("href", "src"):
            value = tag.get(attribute)
            if isinstance(value, str) and value.strip() and not value.startswith(_KEEP_LINKS):
                tag[attribute] = urllib.parse.urljoin(base_url, value.strip())


def _code_language(pre: object) -> str | None:
    """``<pre><code class="language-python">`` → ``python``."""
    if not isinstance(pre, Tag):
        return None
    for tag in (pre, pre.find("code")):
        if not isinstance(tag, Tag):
            continue
        for name in tag.get_attribute_list("class"):
            if name and name.startswith(("language-", "lang-")):
                return str(name.partition("-")[2]) or None
    return None


def _tidy(text: str) -> str:
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip()
