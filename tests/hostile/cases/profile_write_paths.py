# case: profile-write-paths
# why: compute: nothing writable but /output and /tmp (Landlock); standard: /workspace and /dev/shm too; / is read-only in both
# expect-outcome: succeeded
# expect-stdout: /output OK
# expect-stdout: /tmp OK
# expect-stdout: /workspace OK
# expect-stdout: /dev/shm OK
# expect-stdout: / EROFS
# expect-stdout: /dev/null OK
# compute-why: Landlock refuses creating or writing files outside /output and /tmp (EACCES); /dev/null stays writable
# compute-expect-outcome: succeeded
# compute-expect-stdout: /output OK
# compute-expect-stdout: /tmp OK
# compute-expect-stdout: /workspace EACCES
# compute-expect-stdout: /dev/shm EACCES
# compute-expect-stdout: / EROFS|/ EACCES
# compute-expect-stdout: /dev/null OK
# compute-expect-stdout: mkdir /workspace/d EACCES
# compute-expect-stdout: symlink in /workspace EACCES
import errno, os
def attempt(f):
    try:
        f(); return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
for d in ("/output", "/tmp", "/workspace", "/dev/shm", "/"):
    path = os.path.join(d, "probe.txt")
    print(d, attempt(lambda: open(path, "w").write("x")))
    if d in ("/tmp", "/workspace", "/dev/shm"):
        try: os.unlink(path)
        except OSError: pass
print("/dev/null", attempt(lambda: open("/dev/null", "w").write("x")))
print("mkdir /workspace/d", attempt(lambda: os.mkdir("/workspace/d")))
print("symlink in /workspace", attempt(lambda: os.symlink("/tmp", "/workspace/link")))
