# Counts the PDF names that mean active content, in the document's bytes and in
# every stream that inflates (object streams hide objects from a plain byte
# scan). Runs inside the pdf check's sandbox (service/pdf_reader.cc), never on
# the host: the PDF is hostile. Names may be written with #xx escapes
# (/L#61unch is /Launch), so each name is decoded before it is compared.
# Prints "launch N", "javascript N" and "uri N", one per line.
import re
import sys
import zlib

MAX_INFLATED = 256 << 20  # all streams together; the sandbox's memory and CPU bound the rest
NAME = re.compile(rb"/([^\s/<>\[\]()%{}]*)")
STREAM = re.compile(rb"stream\r?\n")
WANTED = {b"Launch": "launch", b"JavaScript": "javascript", b"JS": "javascript", b"URI": "uri"}


def decode(name):
    return re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name)


def count(data, counts):
    for m in NAME.finditer(data):
        what = WANTED.get(decode(m.group(1)))
        if what:
            counts[what] += 1


def main(path):
    data = open(path, "rb").read()
    counts = {"launch": 0, "javascript": 0, "uri": 0}
    count(data, counts)
    budget = MAX_INFLATED
    for m in STREAM.finditer(data):
        if budget <= 0:
            break
        inflater = zlib.decompressobj()
        try:
            out = inflater.decompress(data[m.end():m.end() + (64 << 20)], budget)
        except zlib.error:
            continue
        budget -= len(out)
        count(out, counts)
    for key in ("launch", "javascript", "uri"):
        print(key, counts[key])


main(sys.argv[1])
