# case: read-etc-shadow
# why: host secrets must not be visible: the image has no /etc/shadow the code could reach
# expect-outcome: succeeded
# expect-stdout: BLOCKED ENOENT
import errno
try:
    with open("/etc/shadow", "rb") as f:
        data = f.read(200)
    print("ESCAPED read /etc/shadow:", data[:40])
except OSError as e:
    print("BLOCKED", errno.errorcode.get(e.errno, e.errno), "/etc/shadow")
