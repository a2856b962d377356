# Writes the PDFs of pdf_actions_test.cc into the directory argv[1]: actions
# (JavaScript, Launch, URI) hidden in object streams under every standard
# filter and chain, added by an incremental update, encrypted, and a document
# whose xref is broken. Built here byte by byte (zlib, base64, binascii and
# small encoders below), and with qpdf for encryption and qpdf's own object
# streams.
import base64
import binascii
import os
import subprocess
import sys
import zlib

OUT = sys.argv[1]
JS = b"<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\)) >>"
LAUNCH = b"<< /Type /Action /S /L#61unch /F (cmd.exe) >>"
URI = b"<< /Type /Action /S /URI /URI (https://example.invalid/x) >>"
CONTENT = b"BT /F1 12 Tf 72 712 Td (Report) Tj ET"


def lzw(data):
    # LZWDecode with the default EarlyChange 1; short data only, so every code stays 9 bits wide.
    assert len(data) < 200
    table = {bytes([i]): i for i in range(256)}
    next_code, codes, w = 258, [256], b""
    for c in data:
        wc = w + bytes([c])
        if wc in table:
            w = wc
            continue
        codes.append(table[w])
        table[wc] = next_code
        next_code += 1
        w = bytes([c])
    codes += [table[w], 257]
    bits = "".join(format(code, "09b") for code in codes)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def run_length(data):
    out = bytearray()
    for i in range(0, len(data), 128):
        chunk = data[i:i + 128]
        out += bytes([len(chunk) - 1]) + chunk
    return bytes(out + b"\x80")


def rows(data, columns):
    data += b" " * (-len(data) % columns)  # white space after the last object: harmless
    return [data[i:i + columns] for i in range(0, len(data), columns)]


def png_up(data, columns=4):
    out, prev = bytearray(), bytes(columns)
    for row in rows(data, columns):
        out += b"\x02" + bytes((a - b) & 0xFF for a, b in zip(row, prev))
        prev = row
    return zlib.compress(bytes(out))


def tiff(data, columns=4):
    out = bytearray()
    for row in rows(data, columns):
        out += bytes([row[0]]) + bytes((row[i] - row[i - 1]) & 0xFF for i in range(1, len(row)))
    return zlib.compress(bytes(out))


def a85(data):
    return base64.a85encode(data, adobe=True)[2:]  # without "<~": the filter reads up to "~>"


def ahx(data):
    return binascii.hexlify(data) + b">"


class Pdf:
    """Objects written in order; an xref table or stream at the end."""

    def __init__(self, out=b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"):
        self.out, self.offsets, self.compressed = bytearray(out), {}, {}

    def add(self, num, body):
        self.offsets[num] = len(self.out)
        self.out += b"%d 0 obj\n" % num + body + b"\nendobj\n"

    def stream(self, num, data, entries=b""):
        self.add(num, b"<< /Length %d %s >>\nstream\n" % (len(data), entries) + data + b"\nendstream")

    def objstm(self, num, objects, encode, filter_entry):
        # objects: {number: body}, all in one object stream under the given filters.
        header, body = b"", b""
        for n, text in objects.items():
            header += b"%d %d " % (n, len(body))
            body += text + b" "
            self.compressed[n] = (num, len(self.compressed))
        self.stream(num, encode(header + body), b"/Type /ObjStm /N %d /First %d %s" % (len(objects), len(header), filter_entry))

    def xref_stream(self, num, root, prev=None, startxref=None):
        at = len(self.out)
        self.offsets[num] = at
        size = max(list(self.offsets) + list(self.compressed)) + 1
        table = bytearray()
        first = 0 if prev is None else min(list(self.offsets) + list(self.compressed))
        index = b"" if prev is None else b"/Index [%d %d] " % (first, size - first)
        for n in range(first, size):
            if n in self.offsets:
                table += b"\x01" + self.offsets[n].to_bytes(4, "big") + b"\x00"
            elif n in self.compressed:
                stm, i = self.compressed[n]
                table += b"\x02" + stm.to_bytes(4, "big") + bytes([i])
            else:
                table += b"\x00" * 5 + b"\xff" if n == 0 else b"\x00" * 6
        extra = b"" if prev is None else b"/Prev %d " % prev
        self.out += b"%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 1] %s/Root %d 0 R %s/Length %d >>\nstream\n" % (
            num, size, index, root, extra, len(table)) + bytes(table) + b"\nendstream\nendobj\n"
        self.out += b"startxref\n%d\n%%%%EOF\n" % (at if startxref is None else startxref)
        return at

    def xref_table(self, root):
        at = len(self.out)
        size = max(self.offsets) + 1
        self.out += b"xref\n0 %d\n0000000000 65535 f \n" % size
        self.out += b"".join(b"%010d 00000 n \n" % self.offsets[n] if n in self.offsets else b"0000000000 00001 f \n"
                             for n in range(1, size))
        self.out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, at)
        return at


def page_objects(pdf):
    pdf.add(2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
    pdf.add(3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R >>")
    pdf.stream(6, CONTENT)


def hidden(action, encode, filter_entry):
    """The catalog's /OpenAction is object 4, inside object stream 5 under the given filters."""
    pdf = Pdf()
    pdf.add(1, b"<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>")
    page_objects(pdf)
    pdf.objstm(5, {4: action}, encode, filter_entry)
    pdf.xref_stream(7, 1)
    return bytes(pdf.out)


FILTERS = {
    "flate": (zlib.compress, b"/Filter /FlateDecode"),
    "flate_png": (png_up, b"/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4 >>"),
    "flate_tiff": (tiff, b"/Filter /FlateDecode /DecodeParms << /Predictor 2 /Columns 4 >>"),
    "ahx": (ahx, b"/Filter /ASCIIHexDecode"),
    "a85": (a85, b"/Filter /ASCII85Decode"),
    "lzw": (lzw, b"/Filter /LZWDecode"),
    "rl": (run_length, b"/Filter /RunLengthDecode"),
    "a85_flate": (lambda d: a85(zlib.compress(d)), b"/Filter [/ASCII85Decode /FlateDecode]"),
    "ahx_flate_png": (lambda d: ahx(png_up(d)),
                      b"/Filter [/ASCIIHexDecode /FlateDecode] /DecodeParms [null << /Predictor 12 /Columns 4 >>]"),
    "a85_lzw": (lambda d: a85(lzw(d)), b"/Filter [/A85 /LZW]"),  # the abbreviated names
    "ahx_rl": (lambda d: ahx(run_length(d)), b"/Filter [/AHx /RL]"),
    "flate_flate": (lambda d: zlib.compress(zlib.compress(d)), b"/Filter [/FlateDecode /Fl]"),
}


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def qpdf(*args):
    subprocess.run(["qpdf", *args], check=True)


def main():
    for fname, (encode, entry) in FILTERS.items():
        for aname, action in (("js", JS), ("launch", LAUNCH), ("uri", URI)):
            write("%s_%s.pdf" % (aname, fname), hidden(action, encode, entry))
    # A clean document in object streams, and the same through qpdf's own writer.
    write("clean_ahx.pdf", hidden(b"<< /Type /Action /S /GoTo /D [3 0 R /Fit] >>", ahx, b"/Filter /ASCIIHexDecode"))
    qpdf("--object-streams=generate", os.path.join(OUT, "clean_ahx.pdf"), os.path.join(OUT, "clean_qpdf.pdf"))
    # An incremental update adds the action: a new catalog, and object 4 in an object stream.
    pdf = Pdf()
    pdf.add(1, b"<< /Type /Catalog /Pages 2 0 R >>")
    page_objects(pdf)
    base = pdf.xref_table(1)
    write("update_base.pdf", bytes(pdf.out))
    update = Pdf(pdf.out)
    update.add(1, b"<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>")
    update.objstm(5, {4: JS}, ahx, b"/Filter /ASCIIHexDecode")
    update.xref_stream(7, 1, prev=base)
    write("update_js.pdf", bytes(update.out))
    # A broken xref: startxref points into the middle of the file.
    data = hidden(JS, ahx, b"/Filter /ASCIIHexDecode")
    broken = data[:data.rindex(b"startxref")] + b"startxref\n%d\n%%%%EOF\n" % (len(data) // 2)
    write("broken_xref_js.pdf", broken)
    # A broken xref table (its offsets shifted): qpdf repairs it, with warnings.
    pdf = Pdf()
    pdf.add(1, b"<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>")
    page_objects(pdf)
    pdf.add(4, JS)
    pdf.offsets = {n: at + 7 for n, at in pdf.offsets.items()}
    pdf.xref_table(1)
    write("broken_table_js.pdf", bytes(pdf.out))
    # Encrypted (AES-256): with an empty user password, which every viewer opens without asking, and with a real one.
    src = os.path.join(OUT, "js_flate.pdf")
    qpdf("--encrypt", "", "owner", "256", "--", src, os.path.join(OUT, "encrypted_empty_js.pdf"))
    qpdf("--encrypt", "", "owner", "256", "--", os.path.join(OUT, "clean_ahx.pdf"), os.path.join(OUT, "encrypted_empty_clean.pdf"))
    qpdf("--encrypt", "secret", "owner", "256", "--", src, os.path.join(OUT, "encrypted_password_js.pdf"))


main()
