"""README.md and docs/: every relative link resolves, and the pages read as reference.

1. Each Markdown link [text](target) that is not a URL names a file or folder that exists,
   relative to the page; a '#anchor' (on its own, or after a .md target) names a heading of
   that page, spelled as GitHub makes anchors (lower case; punctuation but '-' and '_'
   dropped; spaces become '-'; a repeated heading gets '-1', '-2', ...).
2. A section named in quotes after a page, as in docs/SERVER.md "Memory during a swap" or
   [SERVER](docs/SERVER.md) "TLS", is a heading or a bold paragraph label of that page
   (the quoted words start or appear in it, case and `code` marks ignored).
3. No heading or sentence reads as a work diary (the patterns below): the docs describe the
   product, its figures with their commands, and its limits.

Usage: docs_links_test.py SOURCE_DIR. Prints each failure with file and line; exit 1 on any.
"""
import pathlib
import re
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
SECTION_REF = re.compile(r'((?:docs/)?(?:eval/)?[A-Z]+\.md)\)?[,:]? *(?:§[0-9.]+ )?"([^"]{3,80})"')
DIARY_HEADING = re.compile(r"^#+ .*(\bRuns? [A-H]\b|Tried and not kept|Found and fixed|"
                           r"Not done \(yet\)|What each change gained)")
DIARY_TEXT = re.compile(r"session of 20[0-9]{2}|[Tt]he lead\b|\bhelper (run|session)s?\b|"
                        r"^#+ .*\(issue [0-9]+")


def pages(root):
    out = [root / "README.md"]
    out += sorted((root / "docs").rglob("*.md"))
    return [p for p in out if p.is_file()]


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading):
    s = re.sub(r"<[^>]+>", "", heading)  # inline HTML
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # a link keeps its text
    s = s.lower()
    s = "".join(c for c in s if c.isalnum() or c in " -_")
    return s.replace(" ", "-")


def labels(text):
    """Headings and **bold** paragraph labels, normalised for SECTION_REF."""
    out = []
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            out.append(m.group(2))
        out += re.findall(r"\*\*([^*]{3,80})\*\*", line)
    return [norm(x) for x in out]


def norm(s):
    return re.sub(r"[`*]", "", s).lower()


def anchors(text):
    seen, out = {}, set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    cache, label_cache, failures, links = {}, {}, [], 0

    def anchors_of(path):
        if path not in cache:
            cache[path] = anchors(path.read_text(encoding="utf-8"))
        return cache[path]

    checked = pages(root)
    if not checked or not (root / "README.md").is_file():
        print(f"{root}: no README.md")
        return 1
    for page in checked:
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(root)
        for n, line in prose_lines(text):
            if DIARY_HEADING.search(line) or DIARY_TEXT.search(line):
                failures.append(f"{rel}:{n}: reads as a work diary: {line.strip()[:100]}")
            for m in SECTION_REF.finditer(line):
                name, section = m.group(1), m.group(2)
                dest = next((d for d in (root / name, root / "docs" / name) if d.is_file()), None)
                if dest is None:
                    failures.append(f"{rel}:{n}: names {name}: no such file")
                    continue
                if dest not in label_cache:
                    label_cache[dest] = labels(dest.read_text(encoding="utf-8"))
                links += 1
                if not any(norm(section) in h for h in label_cache[dest]):
                    failures.append(f"{rel}:{n}: names {name} \"{section}\": no such heading")
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                links += 1
                path_part, _, anchor = target.partition("#")
                dest = (page.parent / path_part).resolve() if path_part else page
                if not dest.exists():
                    failures.append(f"{rel}:{n}: link to {target}: no such file")
                    continue
                if anchor and dest.suffix == ".md" and anchor not in anchors_of(dest):
                    failures.append(f"{rel}:{n}: link to {target}: {dest.relative_to(root)} "
                                    f"has no heading with anchor #{anchor}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(checked)} pages, {links} relative links and named sections checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
