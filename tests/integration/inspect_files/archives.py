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
