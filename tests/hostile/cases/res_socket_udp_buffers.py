# case: res-socket-udp-buffers
# why: UDP receive queues over the job's own loopback count against --memory (cgroup v1 charges them to memory.kmem.tcp too; v2: memory.max): past the limit datagrams are dropped and the record says memory_limit
# args: --memory 64M --timeout 60
# expect-outcome: memory_limit
# expect-limit: memory
# expect-reason: socket buffers|the kernel killed
# expect-stdout: BLOCKED
# 200 receivers with the largest receive buffer they may ask for, 160
# datagrams of 60000 bytes each, never read until the end. Without a socket
# limit this held 1.5 GiB under --memory 64M.
# compute-why: compute denies socket() (EPERM): no buffers to fill
# compute-expect-outcome: failed
# compute-expect-stderr: PermissionError: [Errno 1] Operation not permitted
import socket
LIMIT = 64 << 20
receivers, payload = [], b"x" * 60000
sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(200):
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.bind(("127.0.0.1", 0))
    r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
    for _ in range(160):
        sender.sendto(payload, r.getsockname())
    receivers.append(r)
held = 0
for r in receivers:  # what the kernel kept for the job
    r.setblocking(False)
    while True:
        try:
            held += len(r.recv(65536))
        except BlockingIOError:
            break
verdict = "ESCAPED" if held > LIMIT * 3 // 2 else "BLOCKED"
print(verdict, "held", held >> 20, "MiB in UDP receive queues", flush=True)
