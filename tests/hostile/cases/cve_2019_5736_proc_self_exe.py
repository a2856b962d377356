# case: cve-2019-5736-proc-self-exe
# why: runc CVE-2019-5736: overwriting the runtime binary through /proc/self/exe; every path to a binary must refuse writing
# expect-outcome: succeeded
# expect-stdout: BLOCKED /proc/self/exe not writable
import errno, os
def en(e): return errno.errorcode.get(e, str(e))
ok = {"ETXTBSY", "EACCES", "EROFS", "EPERM"}
res = {}
def try_open(label, path, flags=os.O_WRONLY):
    try:
        fd = os.open(path, flags)  # nothing is written: opening proves access
        os.close(fd)
        res[label] = "OPENED"
    except OSError as e:
        res[label] = en(e.errno)
try_open("/proc/self/exe", "/proc/self/exe")
opath = os.open("/proc/self/exe", os.O_PATH)
try_open("/proc/self/fd/O_PATH", "/proc/self/fd/%d" % opath)
try_open("/proc/1/exe", "/proc/1/exe")
try_open("interpreter path", os.readlink("/proc/self/exe"), os.O_WRONLY | os.O_APPEND)
try_open("/bin/sh (not running)", "/bin/sh", os.O_WRONLY | os.O_APPEND)
for k, v in res.items():
    print(k, v)
# On the preloaded path /proc/self/exe is the airlock binary, whose host path
# does not exist inside the sandbox: ENOENT there is a refusal too.
bad = {k: v for k, v in res.items() if v not in ok and not (k in ("/proc/1/exe", "interpreter path") and v in ("ENOENT", "ESRCH"))}
if any(v == "OPENED" for v in res.values()):
    print("ESCAPED opened a binary for writing:", [k for k, v in res.items() if v == "OPENED"])
elif bad:
    print("UNEXPECTED", bad)
else:
    print("BLOCKED /proc/self/exe not writable")
