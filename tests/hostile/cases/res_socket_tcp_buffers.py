# case: res-socket-tcp-buffers
# why: TCP buffers over the job's own loopback count against --memory (cgroup v1: memory.kmem.tcp; v2: memory.max): at the limit the record says memory_limit
# args: --memory 64M --timeout 60
# expect-outcome: memory_limit
# expect-limit: memory
# expect-reason: socket buffers|the kernel killed
# expect-stdout: BLOCKED
# 200 connections, nobody reads: everything sent stays in send and receive
# buffers. Without a socket limit this held over 112 MiB under --memory 64M.
# compute-why: compute denies socket() (EPERM): no buffers to fill
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import socket
LIMIT = 64 << 20
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(256)
held, keep, chunk = 0, [], b"x" * 65536
for i in range(200):
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    c.connect(listener.getsockname())
    a, _ = listener.accept()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
    c.setblocking(False)
    for _ in range(2000):  # at most 128 MiB a connection
        try:
            held += c.send(chunk)
        except BlockingIOError:
            break
    keep += [c, a]
verdict = "ESCAPED" if held > LIMIT * 3 // 2 else "BLOCKED"
print(verdict, "held", held >> 20, "MiB in TCP buffers", flush=True)
