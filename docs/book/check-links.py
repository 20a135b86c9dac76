"""Checks every link of the built book: each relative href and src names a file that exists,
and each #fragment an id in that file. Links off the book (http:, https:, mailto:) are counted,
not followed: CI has no network, and the book is read offline too.

    python3 docs/book/check-links.py [BOOK]      (default: target/book)
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[2]


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)
            if key in ("href", "src") and value:
                self.links.append(value)


def parse(path, cache={}):
    if path not in cache:
        page = Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        cache[path] = page
    return cache[path]


def main():
    book = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target" / "book"
    if not (book / "index.html").is_file():
        print(f"{book}: no built book here (run docs/book/build)", file=sys.stderr)
        return 1
    broken, checked, outside = [], 0, 0
    for html in sorted(book.rglob("*.html")):
        # mdBook's print page and 404 page repeat the chapters with other bases: the chapters
        # themselves are what a reader follows.
        if html.name in ("print.html", "404.html"):
            continue
        for link in parse(html).links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https", "mailto") or link.startswith("//"):
                outside += 1
                continue
            if parts.scheme or link.startswith("javascript:"):
                continue
            checked += 1
            target = html if not parts.path else (html.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{html.relative_to(book)}: {link}"
            if not target.is_file():
                broken.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids:
                broken.append(f"{where}: no #{parts.fragment} in {target.name}")
    for b in broken:
        print(b, file=sys.stderr)
    print(f"{checked} links in the book checked, {len(broken)} broken; {outside} off the book, not followed")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
