# Good and hostile PDFs (JavaScript, Launch, URI, embedded file, encryption,
# a wide page) for inspect_checks_test.cc, written by hand with their xref.
import hashlib
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
