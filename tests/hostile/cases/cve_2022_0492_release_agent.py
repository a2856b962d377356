# case: cve-2022-0492-release-agent
# why: CVE-2022-0492: a cgroup v1 release_agent runs as host root; no /sys/fs/cgroup, cgroup mount and namespaces denied
# expect-outcome: succeeded
# expect-stdout: /sys/fs/cgroup ENOENT
# expect-stdout: mount cgroup EPERM
# expect-stdout: BLOCKED release_agent unreachable
# compute-why: the probe makes a mount point in /workspace: read-only under compute (Landlock, EACCES)
# compute-expect-outcome: failed
# compute-expect-stderr: Permission denied: 'cg'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
escaped = []
try:
    os.listdir("/sys/fs/cgroup")
    print("/sys/fs/cgroup VISIBLE")
    for root, dirs, files in os.walk("/sys/fs/cgroup"):
        if "release_agent" in files:
            try:
                os.close(os.open(os.path.join(root, "release_agent"), os.O_WRONLY))
                escaped.append("release_agent writable at " + root)
            except OSError:
                pass
        if root.count("/") > 5:
            dirs[:] = []
except OSError as e:
    print("/sys/fs/cgroup", en(e.errno))
os.makedirs("cg", exist_ok=True)
r = libc.mount(b"cgroup", b"cg", b"cgroup", 0, b"rdma")
print("mount cgroup", "OK" if r == 0 else en(ctypes.get_errno()))
if r == 0:
    escaped.append("mounted cgroup v1")
    libc.umount2(b"cg", 2)
pid = os.fork()
if pid == 0:
    r = libc.unshare(0x10000000 | 0x00020000 | 0x02000000)  # USER | NS | CGROUP
    os._exit(0 if r == 0 else 100 + ctypes.get_errno())
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print("unshare user+mnt+cgroup", "OK" if code == 0 else en(code - 100))
if code == 0:
    escaped.append("unshare user+mnt+cgroup")
print("ESCAPED " + "; ".join(escaped) if escaped else "BLOCKED release_agent unreachable")
