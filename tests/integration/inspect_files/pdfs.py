# Good and hostile PDFs (JavaScript, Launch, URI, embedded file, encryption,
# a wide page, actions in object streams, a broken xref) for
# inspect_checks_test.cc, written by hand with their xref.
import binascii
import hashlib
import zlib
O = '/output/'

def pdf(catalog=b'', objs=(), page=b'', trailer=b'', box=b'0 0 612 792', content=b'BT /F1 12 Tf 72 712 Td (Report) Tj ET'):
    body = [b'<< /Type /Catalog /Pages 2 0 R ' + catalog + b'>>',
            b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
            b'<< /Type /Page /Parent 2 0 R /MediaBox [' + box + b'] /Contents 4 0 R ' + page + b'>>',
            b'<< /Length %d >>\nstream\n' % len(content) + content + b'\nendstream'] + list(objs)
    out, offsets = b'%PDF-1.4\n', []
    for i, o in enumerate(body):
        offsets.append(len(out))
        out += b'%d 0 obj\n' % (i + 1) + o + b'\nendobj\n'
    xref = len(out)
    out += b'xref\n0 %d\n0000000000 65535 f \n' % (len(body) + 1)
    out += b''.join(b'%010d 00000 n \n' % o for o in offsets)
    out += b'trailer\n<< /Size %d /Root 1 0 R ' % (len(body) + 1) + trailer + b'>>\nstartxref\n%d\n%%%%EOF\n' % xref
    return out

def rc4(key, data):
    s, j, out = list(range(256)), 0, bytearray()
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    i = j = 0
    for c in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(c ^ s[(s[i] + s[j]) % 256])
    return bytes(out)

# The standard security handler, revision 2, empty user password: poppler opens it and says "Encrypted: yes".
PAD = bytes.fromhex('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a')
owner, ident, perms = b'\x11' * 32, b'\x22' * 16, -4
key = hashlib.md5(PAD + owner + (perms & 0xffffffff).to_bytes(4, 'little') + ident).digest()[:5]
user = rc4(key, PAD)
encrypt = b'<< /Filter /Standard /V 1 /R 2 /O <' + owner.hex().encode() + b'> /U <' + user.hex().encode() + b'> /P -4 >>'
files = {
    'plain.pdf': pdf(),
    'wide.pdf': pdf(box=b'0 0 5000 792'),
    'javascript.pdf': pdf(b'/OpenAction 5 0 R ', [b"<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\);) >>"]),
    'launch.pdf': pdf(b'/OpenAction 5 0 R ', [b'<< /Type /Action /S /L#61unch /F (cmd.exe) >>']),
    'uri.pdf': pdf(b'', [b'<< /Type /Annot /Subtype /Link /Rect [0 0 99 99] /A << /S /URI /URI (https://example.invalid/x) >> >>'],
                   page=b'/Annots [5 0 R] '),
    'embedded.pdf': pdf(b'/Names << /EmbeddedFiles << /Names [(a.txt) 5 0 R] >> >> ',
                        [b'<< /Type /Filespec /F (a.txt) /EF << /F 6 0 R >> >>',
                         b'<< /Type /EmbeddedFile /Length 5 >>\nstream\nhello\nendstream']),
}
for name, data in files.items():
    open(O + name, 'wb').write(data)
stream_key = hashlib.md5(key + (4).to_bytes(3, 'little') + (0).to_bytes(2, 'little')).digest()[:10]
enc = pdf(content=rc4(stream_key, b'BT /F1 12 Tf 72 712 Td (Report) Tj ET'), objs=[encrypt], trailer=b'/Encrypt 5 0 R /ID [<' + ident.hex().encode() + b'> <' + ident.hex().encode() + b'>] ')
open(O + 'encrypted.pdf', 'wb').write(enc)


def objstm(action, encode, filt):
    # The catalog's /OpenAction is object 4, inside object stream 5; an xref stream (6) indexes them.
    out, offsets = bytearray(b'%PDF-1.7\n'), {}
    def add(n, body):
        offsets[n] = len(out)
        out.extend(b'%d 0 obj\n' % n + body + b'\nendobj\n')
    add(1, b'<< /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >>')
    add(2, b'<< /Type /Pages /Kids [3 0 R] /Count 1 >>')
    add(3, b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>')
    data = encode(b'4 0 ' + action)
    add(5, b'<< /Type /ObjStm /N 1 /First 4 /Length %d %s >>\nstream\n' % (len(data), filt) + data + b'\nendstream')
    at = len(out)
    rows = [b'\0\0\0\0\xff'] + [b'\1' + offsets[n].to_bytes(3, 'big') + b'\0' for n in (1, 2, 3)]
    rows += [b'\2\0\0\5\0', b'\1' + offsets[5].to_bytes(3, 'big') + b'\0', b'\1' + at.to_bytes(3, 'big') + b'\0']
    table = b''.join(rows)
    out.extend(b'6 0 obj\n<< /Type /XRef /Size 7 /W [1 3 1] /Root 1 0 R /Length %d >>\nstream\n' % len(table) + table)
    out.extend(b'\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n' % at)
    return bytes(out)

def png_up(data, columns=4):
    data += b' ' * (-len(data) % columns)
    rows, prev = [], bytes(columns)
    for i in range(0, len(data), columns):
        row = data[i:i + columns]
        rows.append(b'\2' + bytes((a - b) & 0xff for a, b in zip(row, prev)))
        prev = row
    return zlib.compress(b''.join(rows))

open(O + 'objstm_js.pdf', 'wb').write(objstm(b'<< /S /JavaScript /JS (app.alert\\(1\\)) >>',
                                              lambda d: binascii.hexlify(d) + b'>', b'/Filter /ASCIIHexDecode'))
open(O + 'objstm_launch.pdf', 'wb').write(objstm(b'<< /S /Launch /F (cmd.exe) >>', png_up,
                                                  b'/Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 4 >>'))
# A broken xref table: every offset 7 bytes off. poppler and qpdf repair it; the check refuses it.
good = pdf()
start = good.index(b'xref\n')
table = good[start:good.index(b'trailer')]
shifted = table.split(b'\n')
shifted = [b'%010d 00000 n ' % (int(l[:10]) + 7) if l.endswith(b' n ') else l for l in shifted]
open(O + 'damaged.pdf', 'wb').write(good[:start] + b'\n'.join(shifted) + good[good.index(b'trailer'):])
