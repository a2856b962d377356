# case: remount-rw
# why: the mount syscall is denied, so the read-only image cannot be remounted read-write
# expect-outcome: succeeded
# expect-stdout: BLOCKED mount EPERM
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def en(e): return errno.errorcode.get(e, str(e))
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
results = []
for target, flags in (("/", MS_REMOUNT | MS_BIND), ("/usr", MS_REMOUNT | MS_BIND), ("/", MS_REMOUNT)):
    r = libc.mount(None, target.encode(), None, flags, None)
    if r == 0:
        results.append("OK")
        print("remount", target, "SUCCEEDED")
    else:
        results.append(en(ctypes.get_errno()))
        print("remount", target, results[-1])
if "OK" in results:
    print("ESCAPED remounted read-write")
elif all(r == "EPERM" for r in results):
    print("BLOCKED mount EPERM")
else:
    print("BLOCKED other", results)
