# case: cve-2017-5226-tiocsti
# why: bubblewrap CVE-2017-5226: TIOCSTI on a controlling terminal pushes input to the outer shell; the filter must deny it
# expect-outcome: succeeded
# expect-stdout: BLOCKED TIOCSTI EPERM
# compute-why: the probe forks a process to own a terminal: compute denies new processes (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
# Give ourselves a real controlling terminal (a pty), then try to inject into it.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    try:
        os.setsid()
        master, slave = os.openpty()  # first tty opened after setsid becomes the ctty
        libc.ioctl(slave, 0x540E, 0)  # TIOCSCTTY
        rc = libc.ioctl(slave, 0x5412, ctypes.byref(ctypes.c_char(b"x")))
        msg = "OK" if rc == 0 else en(ctypes.get_errno())
    except OSError as e:
        msg = "pty " + en(e.errno)
    os.write(w, msg.encode())
    os._exit(0)
os.close(w)
msg = os.read(r, 100).decode()
os.waitpid(pid, 0)
print("TIOCSTI on own controlling pty:", msg)
if msg == "OK":
    print("ESCAPED TIOCSTI injected into a controlling terminal")
elif msg == "EPERM":
    print("BLOCKED TIOCSTI EPERM")
elif msg.startswith("pty"):
    # no pty available: fall back to the inherited fds
    res = [en(ctypes.get_errno()) if libc.ioctl(fd, 0x5412, ctypes.byref(ctypes.c_char(b"x"))) else "OK" for fd in (0, 1, 2)]
    print("fds 0,1,2:", res)
    print("ESCAPED" if "OK" in res else ("BLOCKED TIOCSTI EPERM" if set(res) == {"EPERM"} else "NOT-FILTERED %s" % res))
else:
    print("NOT-FILTERED TIOCSTI gave", msg)
