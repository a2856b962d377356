# case: res-thread-bomb
# why: threads count against the pids limit too
# args: --pids 32 --timeout 30
# expect-outcome: succeeded
# expect-limit: pids
# expect-stdout: BLOCKED can't start new thread
import threading
threading.stack_size(256 * 1024)
stop = threading.Event()
threads = []
verdict = "ESCAPED started 2000 threads"
for i in range(2000):
    t = threading.Thread(target=stop.wait)
    try:
        t.start()
    except RuntimeError as e:
        verdict = "BLOCKED %s after %d threads" % (e, len(threads))
        break
    threads.append(t)
stop.set()
for t in threads:
    t.join()
print(verdict)
