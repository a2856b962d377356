# case: core-dumps
# why: no crash makes a dump, not even through the host's pipe core_pattern (run as root): RLIMIT_CORE is 1 (a pipe pattern aborts at exactly 1, a file needs a page), no process can change it, core_pattern is not writable
# setup: pipe-core-pattern
# expect-outcome: succeeded
# expect-stdout: RLIMIT_CORE 1 1
# expect-stdout: lower to 0: EPERM
# expect-stdout: raise: EPERM
# expect-stdout: setrlimit to 0: EPERM
# expect-stdout: lower another process: EPERM
# expect-stdout: crashed child: SIGSEGV
# expect-stdout: BLOCKED core dumps
# The runner sets a pipe core_pattern whose helper leaves a marker for the
# job's host uid: the record check fails if the segfaults below started it.
# compute-why: the probe forks the child it crashes: compute denies new processes (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import ctypes, errno, os, resource, signal, time
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))

class rlimit(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]

def prlimit_core(pid, soft, hard):
    new = rlimit(soft, hard)
    if libc.prlimit(pid, resource.RLIMIT_CORE, ctypes.byref(new), None) == 0:
        return "OK"
    return en(ctypes.get_errno())

soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
print("RLIMIT_CORE", soft, hard)
changed = []
for label, (lo, hi) in [("lower to 0", (0, 0)), ("raise", (2**64 - 1, 2**64 - 1))]:
    r = prlimit_core(0, lo, hi)
    print(label + ":", r)
    if r == "OK": changed.append(label)
zero = rlimit(0, 0)
r = "OK" if libc.setrlimit(resource.RLIMIT_CORE, ctypes.byref(zero)) == 0 else en(ctypes.get_errno())
print("setrlimit to 0:", r)
if r == "OK": changed.append("setrlimit")

# Another process of the job: a child that waits, then crashes.
child = os.fork()
if child == 0:
    time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGSEGV)
    os._exit(0)
r = prlimit_core(child, 0, 0)
print("lower another process:", r)
if r == "OK": changed.append("other process")
_, status = os.waitpid(child, 0)
print("crashed child:", signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else status)

# A child that first tries to lower its own limit, then segfaults for real.
child = os.fork()
if child == 0:
    prlimit_core(0, 0, 0)
    ctypes.string_at(0)
    os._exit(0)
_, status = os.waitpid(child, 0)
print("segfaulting child:", signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else status,
      "core dumped" if os.WCOREDUMP(status) else "no core")

try:
    fd = os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY)
    os.close(fd)
    changed.append("core_pattern writable")
except OSError as e:
    print("core_pattern", en(e.errno))
if changed or (soft, hard) != (1, 1):
    print("ESCAPED core dumps possible:", changed)
else:
    print("BLOCKED core dumps")
