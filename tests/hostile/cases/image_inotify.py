# case: image-inotify
# why: inotify (and its predecessor dnotify, fcntl F_NOTIFY) on the shared image would show which files other jobs open and read: denied
# expect-outcome: succeeded
# expect-stdout: inotify_init1 EPERM
# expect-stdout: inotify_init EPERM
# expect-stdout: dnotify EPERM
# expect-stdout: BLOCKED image watches
import ctypes, errno, fcntl, os
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
IN_ACCESS, IN_OPEN = 0x1, 0x20
res = {}
fd = libc.inotify_init1(os.O_CLOEXEC)
res["inotify_init1"] = "OK" if fd >= 0 else en(ctypes.get_errno())
if fd >= 0:  # would see every read of a library another job loads
    w = libc.inotify_add_watch(fd, b"/usr/lib", IN_ACCESS | IN_OPEN)
    res["watch /usr/lib"] = "OK" if w >= 0 else en(ctypes.get_errno())
SYS_inotify_init = 253
r = libc.syscall(SYS_inotify_init)
res["inotify_init"] = "OK" if r >= 0 else en(ctypes.get_errno())
d = os.open("/usr/lib", os.O_RDONLY | os.O_DIRECTORY)
try:
    fcntl.fcntl(d, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
    res["dnotify"] = "OK"
except OSError as e:
    res["dnotify"] = en(e.errno)
for k, v in res.items():
    print(k, v)
if "OK" in res.values():
    print("ESCAPED image watch:", [k for k, v in res.items() if v == "OK"])
else:
    print("BLOCKED image watches")
