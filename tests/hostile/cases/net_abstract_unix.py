# case: net-abstract-unix
# why: abstract unix sockets belong to the network namespace: the host's must be unreachable
# setup: abstract-socket
# expect-outcome: succeeded
# expect-stdout: BLOCKED ECONNREFUSED
# compute-why: compute denies socket() for every family (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import errno, os, socket
name = os.environ["HOSTILE_ABSTRACT"]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0" + name)
    print("ESCAPED connected to host abstract socket @" + name)
except OSError as e:
    print("BLOCKED", errno.errorcode.get(e.errno, e.errno), "@" + name)
