# case: priv-tiocsti
# why: TIOCSTI/TIOCLINUX ioctls are denied by the filter on every fd (legacy_tiocsti=1 on this host)
# expect-outcome: succeeded
# expect-stdout: BLOCKED TIOCSTI EPERM
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
c = ctypes.c_char(b"x")
res = {}
fds = {0: "fd0", 1: "fd1", 2: "fd2"}
try:
    fds[os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)] = "/dev/tty"
except OSError as e:
    print("/dev/tty", en(e.errno))
for fd, name in fds.items():
    for req, rname in ((0x5412, "TIOCSTI"), (0x541C, "TIOCLINUX")):
        arg = ctypes.byref(c) if rname == "TIOCSTI" else ctypes.byref(ctypes.c_char(b"\x06"))
        r = libc.ioctl(fd, req, arg)
        res["%s %s" % (name, rname)] = "OK" if r == 0 else en(ctypes.get_errno())
print(res)
if "OK" in res.values():
    print("ESCAPED TIOCSTI injected")
elif all(v == "EPERM" for v in res.values()):
    print("BLOCKED TIOCSTI EPERM")
else:
    print("NOT-FILTERED", {k: v for k, v in res.items() if v != "EPERM"})
