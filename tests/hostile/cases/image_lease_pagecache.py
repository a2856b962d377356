# case: image-lease-pagecache
# why: a lease on an image file (F_SETLEASE: signals when another job opens it) and preadv2 RWF_NOWAIT (EAGAIN unless another job read those pages) are denied; /proc/locks lists nothing
# expect-outcome: succeeded
# expect-stdout: lease EPERM
# expect-stdout: rwf_nowait EPERM
# expect-stdout: plain preadv2 OK
# expect-stdout: /proc/locks empty
# expect-stdout: BLOCKED image signals
import errno, fcntl, os, sys
def en(e): return errno.errorcode.get(e, str(e))
F_SETLEASE = 1024
image_file = os.path.realpath(sys.executable)
fd = os.open(image_file, os.O_RDONLY)
res = {}
try:
    fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
    res["lease"] = "OK"
except OSError as e:
    res["lease"] = en(e.errno)
buf = bytearray(4096)
offset = (os.fstat(fd).st_size // 2) & ~4095
try:
    os.preadv(fd, [buf], offset, os.RWF_NOWAIT)
    res["rwf_nowait"] = "OK"
except OSError as e:  # BlockingIOError (EAGAIN) would be the probe's answer
    res["rwf_nowait"] = en(e.errno)
try:
    os.preadv(fd, [buf], offset, 0)
    plain = "OK"
except OSError as e:
    plain = en(e.errno)
with open("/proc/locks") as f:
    locks = f.read()
for k, v in res.items():
    print(k, v)
print("plain preadv2", plain)
print("/proc/locks", "empty" if locks == "" else repr(locks[:200]))
if set(res.values()) == {"EPERM"} and locks == "":
    print("BLOCKED image signals")
else:
    print("ESCAPED", res, locks[:200])
