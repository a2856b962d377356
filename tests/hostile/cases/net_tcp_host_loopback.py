# case: net-tcp-host-loopback
# why: the host's loopback listeners are not reachable: the sandbox has its own loopback (runner checks the listener saw nothing)
# setup: tcp-listener
# expect-outcome: succeeded
# expect-stdout: BLOCKED ECONNREFUSED|BLOCKED ENETUNREACH
# compute-why: compute denies socket(): loopback cannot be used either (EPERM)
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import errno, os, socket
port = int(os.environ["HOSTILE_TCP_PORT"])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(("127.0.0.1", port))
    print("ESCAPED connected to host 127.0.0.1:%d" % port)
except socket.timeout:
    print("BLOCKED timeout")
except OSError as e:
    print("BLOCKED", errno.errorcode.get(e.errno, e.errno), "127.0.0.1:%d" % port)
