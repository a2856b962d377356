# case: core-dumps
# why: no core dumps: RLIMIT_CORE is 0 (soft and hard), cannot be raised, core_pattern is not writable
# expect-outcome: succeeded
# expect-stdout: RLIMIT_CORE 0 0
# expect-stdout: raise EPERM
# expect-stdout: BLOCKED core dumps
import ctypes, errno, os, resource
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
print("RLIMIT_CORE", soft, hard)
class rlimit(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_uint64), ("max", ctypes.c_uint64)]
new = rlimit(2**64 - 1, 2**64 - 1)
r = libc.prlimit(0, resource.RLIMIT_CORE, ctypes.byref(new), None)
raised = r == 0
print("raise", "OK" if raised else en(ctypes.get_errno()))
try:
    fd = os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY)
    os.close(fd)
    pattern = "WRITABLE"
except OSError as e:
    pattern = en(e.errno)
print("core_pattern", pattern)
if raised or pattern == "WRITABLE" or (soft, hard) != (0, 0):
    print("ESCAPED core dumps possible")
else:
    print("BLOCKED core dumps")
