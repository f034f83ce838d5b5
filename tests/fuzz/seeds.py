#!/usr/bin/env python3
"""The fuzzers' seed corpora, taken from the docs' examples.

Every curl command in a ```sh block of README.md and docs/*.md that sends a
request to a generator route (a POST body given with -d '...', or a GET
query string) is one seed: tests/fuzz/corpus/<route>/<hash>.json
(the body) or .query (the query string of a GET, with its "?": the
fuzzers read an input that starts with "?" as a query string). The name is a hash of the
content: one seed for an example shown in two places, and moving an
example leaves its seed in place.

  seeds.py SRC_DIR          checks every example has its seed, and every
                            README.md example its lines in readme.golden
                            (a ctest)
  seeds.py SRC_DIR --write  writes the missing ones

Seeds of examples since edited or removed stay: they are still good inputs.
"""
import hashlib
import pathlib
import re
import shlex
import sys

ROUTES = ("junctions", "roads", "networks", "dungeons", "grids")


def sh_blocks(text):
    for m in re.finditer(r"^```sh\n(.*?)^```", text, re.S | re.M):
        yield m.group(1)


def commands(block):
    """Shell commands of a block, continuation lines joined; a quoted
    argument may span lines."""
    block = block.replace("\\\n", " ")
    cur = ""
    for line in block.split("\n"):
        cur = cur + "\n" + line if cur else line
        try:
            shlex.split(cur, comments=True)
        except ValueError:       # an open quote: the command goes on
            continue
        yield cur
        cur = ""


def examples(doc):
    for block in sh_blocks(doc.read_text()):
        for cmd in commands(block):
            lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
            lex.whitespace_split = True
            words = []
            for w in lex:         # the first command of a list or pipeline
                if w in (";", "|", "||", "&", "&&"):
                    break
                words.append(w)
            if not words or words[0] != "curl":
                continue
            url = next((w for w in words if "/v1/" in w), None)
            if not url:
                continue
            m = re.search(r"/v1/([a-z]+)(\?([^ ]*))?$", url)
            if not m or m.group(1) not in ROUTES:
                continue
            route, query = m.group(1), m.group(3) or ""
            body = None
            for i, w in enumerate(words):
                if w in ("-d", "--data", "--data-raw") and i + 1 < len(words):
                    body = words[i + 1]
            if body is not None:
                if body.startswith("$"):
                    continue        # a shell variable: not a literal example
                yield route, "json", body
            else:
                pairs = [p for p in query.split("&") if p and not p.startswith("format=")]
                if pairs:
                    yield route, "query", "?" + "&".join(pairs)


def main():
    src = pathlib.Path(sys.argv[1])
    write = "--write" in sys.argv[2:]
    docs = [src / "README.md"] + sorted((src / "docs").glob("*.md"))
    corpus = src / "tests" / "fuzz" / "corpus"
    missing = []
    count = 0
    golden = src / "tests" / "fuzz" / "readme.golden"
    listed = {line.split()[0] for line in golden.read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    for doc in docs:
        for route, ext, content in examples(doc):
            count += 1
            data = content.encode()
            name = f"{hashlib.sha1(data).hexdigest()[:12]}.{ext}"
            path = corpus / route / name
            if doc.name == "README.md" and f"{route}/{name}" not in listed:
                missing.append(f"{route}/{name}: a README example without its lines in "
                               f"tests/fuzz/readme.golden ({content[:60]!r})")
            if path.exists() and path.read_bytes() == data:
                continue
            if write:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                print(f"wrote {path.relative_to(src)}")
            else:
                missing.append(f"{path.relative_to(src)} ({doc.name}: {content[:60]!r})")
    if count == 0:
        print("no examples found: the extractor is broken", file=sys.stderr)
        return 1
    if missing:
        print("examples without a seed (run tests/fuzz/seeds.py . --write and add the files) "
              "or README examples without golden lines (docs/determinism.md):", file=sys.stderr)
        for m in missing:
            print("  " + m, file=sys.stderr)
        return 1
    print(f"{count} examples, every one with its seed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
