# Counts the PDF names that mean active content, among the document's objects as
# a viewer reads them. qpdf (Debian's qpdf) parses the document: the xref tables
# and streams, incremental updates, object streams under any standard filter
# chain (Flate with or without predictors, LZW, ASCIIHex, ASCII85, RunLength)
# and decryption with the empty user password, and writes every object as JSON
# (`qpdf --json=2`). This walks those objects and counts the names /Launch,
# /JS, /JavaScript, /XFA (an XFA form carries scripts) and /URI wherever they
# appear, as a key or a value: deliberately coarse, a name that appears at all
# refuses the document. The raw bytes are scanned for the same names too, so
# an object outside qpdf's view (one left in an older revision) counts as well.
#
# Runs inside the pdf check's sandbox (service/pdf_reader.cc), never on the
# host: the PDF is hostile. Fails (status 1, the reason on stderr) when qpdf is
# missing, cannot open the document (a user password), or had to repair it (a
# broken xref, a stream that does not decode: a viewer's repair may see other
# objects than qpdf's), so that nothing passes unread.
# Prints "launch N", "javascript N" and "uri N", one per line.
import json
import re
import subprocess
import sys

NAME = re.compile(rb"/([^\s/<>\[\]()%{}]*)")
WANTED = {"Launch": "launch", "JavaScript": "javascript", "JS": "javascript", "XFA": "javascript", "URI": "uri"}
QPDF_OK, QPDF_WARNINGS = 0, 3


def decode(name):
    return re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name)


def count_bytes(data, counts):
    for m in NAME.finditer(data):
        what = WANTED.get(decode(m.group(1)).decode("latin-1"))
        if what:
            counts[what] += 1


def name_of(value):
    """The name a qpdf JSON v2 string stands for ("/Launch", "n:/L#61unch"), or None."""
    if value.startswith("n:"):
        value = value[2:]
    if not value.startswith("/"):
        return None  # a string ("u:...", "b:..."), a reference ("4 0 R")
    return decode(value[1:].encode("utf-8", "surrogateescape")).decode("latin-1")


def count_objects(document, counts):
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                what = WANTED.get(name_of(key) or "")
                if what:
                    counts[what] += 1
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            what = WANTED.get(name_of(value) or "")
            if what:
                counts[what] += 1


def fail(why):
    sys.stderr.write("pdf_actions: " + why + "\n")
    sys.exit(1)


def qpdf_objects(path):
    try:
        run = subprocess.run(["qpdf", "--json=2", "--json-key=qpdf", path], capture_output=True)
    except FileNotFoundError:
        fail("qpdf is not installed in the pdf check's image (Debian package qpdf)")
    why = run.stderr.decode("utf-8", "replace").strip().replace("\n", " ")[:150]  # the first warning says most
    if run.returncode == QPDF_WARNINGS:
        fail("qpdf had to repair the document, which is refused: " + why)
    if run.returncode != QPDF_OK:
        fail("qpdf cannot read the document (status %d): %s" % (run.returncode, why))
    try:
        document = json.loads(run.stdout)
    except (ValueError, RecursionError):
        fail("qpdf's JSON view of the document does not parse")
    if not isinstance(document, dict) or not isinstance(document.get("qpdf"), list) or len(document["qpdf"]) != 2:
        fail("qpdf's JSON view of the document has no objects")
    return document["qpdf"][1]


def main(path):
    objects = {"launch": 0, "javascript": 0, "uri": 0}
    count_objects(qpdf_objects(path), objects)
    raw = {"launch": 0, "javascript": 0, "uri": 0}
    with open(path, "rb") as f:
        count_bytes(f.read(), raw)
    for key in ("launch", "javascript", "uri"):
        print(key, max(objects[key], raw[key]))


main(sys.argv[1])
