# case: res-socket-unix-buffers
# why: unix socket buffers (stream and datagram pairs, nobody reads) are memory of the job's cgroup on v1 and v2: holding more than --memory ends in an OOM kill
# args: --memory 64M --timeout 60
# expect-outcome: memory_limit
# expect-limit: memory
# expect-reason: the kernel killed
# Each pair may queue up to twice net.core.wmem_max; 400 pairs could hold
# gigabytes. The probe prints ESCAPED only if it survives holding 3x the limit.
import socket
LIMIT = 64 << 20
held, keep, chunk = 0, [], b"x" * 60000
for i in range(400):
    kind = socket.SOCK_STREAM if i % 2 == 0 else socket.SOCK_DGRAM
    a, b = socket.socketpair(socket.AF_UNIX, kind)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    a.setblocking(False)
    for _ in range(200):
        try:
            held += a.send(chunk)
        except (BlockingIOError, OSError):
            break
    keep += [a, b]
    if held > 3 * LIMIT:
        print("ESCAPED held", held >> 20, "MiB in unix socket buffers", flush=True)
        break
print("held", held >> 20, "MiB", flush=True)
