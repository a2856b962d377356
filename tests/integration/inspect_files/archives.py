# Good and hostile archives for tests/integration/inspect_checks_test.cc, written
# by a job into /output.
import io, tarfile, warnings, zipfile
O = '/output/'
warnings.simplefilter('ignore')

def z(name, entries, comp=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(O + name, 'w', comp) as f:
        for n, d in entries:
            f.writestr(n, d)

z('good.zip', [('summary.csv', 'region,total\nnorth,10\nsouth,20\n'), ('notes.txt', 'two regions\n')])
z('traversal.zip', [('../../etc/cron.d/x', '* * * * * root id\n')])
z('absolute.zip', [('/etc/passwd', 'x')])
z('duplicate.zip', [('a.csv', 'a,b\n1,2\n'), ('./a.csv', 'a,b\n3,4\n')])
z('many.zip', [('f%d.txt' % i, 'x') for i in range(20)])
with zipfile.ZipFile(O + 'symlink.zip', 'w') as f:
    i = zipfile.ZipInfo('link')
    i.create_system = 3
    i.external_attr = 0o120777 << 16
    f.writestr(i, '/etc/shadow')
# 40 MiB of zeros deflate to about 40 KiB: under max_member_bytes, over max_ratio.
with zipfile.ZipFile(O + 'bomb.zip', 'w', zipfile.ZIP_DEFLATED) as f:
    f.writestr('zeros.bin', b'\0' * (40 << 20))
# The same, its headers claiming 1000 bytes.
data = bytearray(open(O + 'bomb.zip', 'rb').read())
for sig, off in ((b'PK\x03\x04', 22), (b'PK\x01\x02', 24)):
    at = data.find(sig)
    data[at + off:at + off + 4] = (1000).to_bytes(4, 'little')
open(O + 'lying.zip', 'wb').write(bytes(data))

def tar(name, infos, mode='w:gz'):
    with tarfile.open(O + name, mode) as t:
        for info, body in infos:
            t.addfile(info, io.BytesIO(body) if body is not None else None)

def ti(name, kind, link=''):
    i = tarfile.TarInfo(name)
    i.type = kind
    i.linkname = link
    return i

f = ti('data.csv', tarfile.REGTYPE); f.size = 8
tar('good.tar.gz', [(f, b'a,b\n1,2\n')])
tar('hardlink.tar', [(f, b'a,b\n1,2\n'), (ti('h', tarfile.LNKTYPE, 'data.csv'), None)], 'w')
tar('device.tar.gz', [(ti('null', tarfile.CHRTYPE), None)])
tar('fifo.tar.gz', [(ti('pipe', tarfile.FIFOTYPE), None)])

# A member only the local headers name: its central directory entry cut out. A streaming
# extractor (bsdtar -xf -, Java's ZipInputStream) would write ../../etc/hidden.
z('hidden.zip', [('a.csv', 'a,b\n1,2\n'), ('../../etc/hidden', 'owned\n'), ('b.csv', 'a,b\n3,4\n')], zipfile.ZIP_STORED)
data = open(O + 'hidden.zip', 'rb').read()
end = data.rindex(b'PK\x05\x06')
size, off = int.from_bytes(data[end + 12:end + 16], 'little'), int.from_bytes(data[end + 16:end + 20], 'little')
kept = [b'PK\x01\x02' + e for e in data[off:off + size].split(b'PK\x01\x02')[1:] if b'../../etc/hidden' not in e]
record = bytearray(data[end:])
record[8:10] = record[10:12] = len(kept).to_bytes(2, 'little')
record[12:16] = len(b''.join(kept)).to_bytes(4, 'little')
open(O + 'hidden.zip', 'wb').write(data[:off] + b''.join(kept) + bytes(record))
# A ZIP holding a ZIP of 10 MiB of zeros.
inner = io.BytesIO()
with zipfile.ZipFile(inner, 'w', zipfile.ZIP_DEFLATED) as f:
    f.writestr('zeros.bin', b'\0' * (10 << 20))
z('nested.zip', [('inner.zip', inner.getvalue())])
