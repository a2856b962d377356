# case: data-request-flood
# why: the data request channel is bounded: one valid request, then a thousand lines, invalid JSON, a request naming a URL and megabytes with no newline; the host keeps what fits in its limits, counts the rest, closes the channel past 1 MiB (the job's next write fails), and fetches nothing a request names
# expect-outcome: input_requested
# expect-reason: the program asked the application for data (3 requests)
# expect-stdout: BLOCKED the channel closed after the flood
import json, os, signal
import airlock_request
signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a closed channel is an error to see, not a death
airlock_request.add("sales_2025.csv", "the report compares three years", params={"year": 2025})
fd = int(os.environ["AIRLOCK_REQUEST_FD"])
def send(data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
try:
    send(b'{"name": "broken", "why": \n')
    send(json.dumps({"name": "data.csv", "why": "fetch it", "params": {"url": "http://127.0.0.1:9/x"}}).encode() + b"\n")
    send(b"".join(json.dumps({"name": "n%d" % i, "why": "w"}).encode() + b"\n" for i in range(1000)))
    chunk = b"A" * 65536
    for _ in range(80):  # 5 MiB, one line
        send(chunk)
    print("ESCAPED the host took 5 MiB on the channel")
except BrokenPipeError:
    print("BLOCKED the channel closed after the flood")
