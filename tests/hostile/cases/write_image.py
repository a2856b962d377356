# case: write-image
# why: the image (/usr, /etc, /) is read-only; nothing can be created or opened for writing
# expect-outcome: succeeded
# expect-stdout: create /usr/bin/airlock-hostile-x EROFS
# expect-stdout: create /airlock-hostile-x EROFS
# expect-stdout: open-write /etc/passwd EROFS|open-write /etc/passwd EACCES|open-write /etc/passwd ENOENT
# expect-stdout: BLOCKED image read-only
import errno, os
def en(e): return errno.errorcode.get(e, str(e))
escaped = []
for path in ("/usr/bin/airlock-hostile-x", "/airlock-hostile-x", "/etc/airlock-hostile-x"):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755)
        os.close(fd)
        os.unlink(path)
        escaped.append(path)
        print("create", path, "CREATED")
    except OSError as e:
        print("create", path, en(e.errno))
# Opening for append is enough to prove write access; nothing is written.
for path in ("/etc/passwd", "/usr/bin/env"):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        os.close(fd)
        escaped.append(path)
        print("open-write", path, "OPENED")
    except OSError as e:
        print("open-write", path, en(e.errno))
try:
    os.mkdir("/usr/airlock-hostile-dir")
    os.rmdir("/usr/airlock-hostile-dir")
    escaped.append("mkdir /usr")
except OSError as e:
    print("mkdir /usr/airlock-hostile-dir", en(e.errno))
print("ESCAPED wrote to " + ", ".join(escaped) if escaped else "BLOCKED image read-only")
