# case: priv-setuid-exec
# why: setuid binaries must not raise privilege (no_new_privs, nosuid): su keeps euid 1000
# expect-outcome: succeeded
# expect-stdout: BLOCKED euid stays
# compute-why: compute refuses the exec itself (EPERM from init), before any setuid bit could matter
# compute-expect-outcome: succeeded
# compute-expect-stdout: BLOCKED exec /bin/su EPERM
import errno, os, subprocess, time
def en(e): return errno.errorcode.get(e, str(e))
try:
    os.setuid(0)
    print("ESCAPED setuid(0) worked")
except OSError as e:
    print("setuid(0)", en(e.errno))
verdict = None
for binary in ("/bin/su", "/usr/bin/su", "/usr/bin/passwd", "/usr/bin/newgrp"):
    if verdict:
        break
    for attempt in range(20):
        try:
            # stdin is a pipe nobody writes: su blocks at its password prompt
            p = subprocess.Popen([binary, "root", "-c", "true"] if "su" in binary else [binary],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as e:
            print(binary, "exec", en(e.errno))
            if e.errno == errno.ENOENT:
                break
            verdict = "BLOCKED exec %s %s" % (binary, en(e.errno))
            break
        euids = set()
        deadline = time.time() + 2
        while time.time() < deadline and p.poll() is None:
            try:
                with open("/proc/%d/status" % p.pid) as f:
                    st = dict(l.split(":", 1) for l in f if ":" in l)
            except OSError:
                break
            if st["Name"].strip() != "python3":  # after execve
                euids.add(int(st["Uid"].split()[1]))
                if len(euids) and time.time() > deadline - 1.5:
                    break
        p.kill()
        p.wait()
        if euids:
            print(binary, "euid seen after exec:", sorted(euids))
            if euids - {os.getuid()}:
                verdict = "ESCAPED %s ran with euid %s" % (binary, sorted(euids))
            else:
                verdict = "BLOCKED euid stays %d in %s" % (os.getuid(), binary)
            break
print(verdict or "INCONCLUSIVE no setuid binary observed")
