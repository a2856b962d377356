"""The job asks, the application decides (docs/data-requests.md), with the
Python SDK. The generated code totals revenue for January and February but
was given only January: instead of failing or inventing numbers it asks the
application for the February export. This application keeps a catalogue of
the exports it may hand out (name -> local file): a request for one of them
is answered with a follow-up that gets the file; any other is refused with a
reason. Then the same in a session, where the kernel keeps its state while
the request is open.

A fixed plan, no model. Run from a checkout, with `airlock serve` running
and a key with the run and read scopes:

    AIRLOCK_API_KEY=alk_... python3 examples/agent/python/data_requests.py
"""
import argparse
import os
import pathlib
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(os.path.dirname(HERE))
try:
    import airlock_serve
except ImportError:  # not installed: use the checkout's sdk/python
    sys.path.insert(0, os.path.join(os.path.dirname(EXAMPLES), "sdk", "python", "src"))
    import airlock_serve

# What this application may hand out, by the name code asks for. The
# request's name only selects from this list; its why is shown, never obeyed.
CATALOGUE = {"sales_feb": pathlib.Path(EXAMPLES, "sales_feb.csv")}

JOB = """\
import csv, os, airlock_request
months = {}
for month in ("jan", "feb"):
    path = f"/inputs/sales_{month}.csv"
    if not os.path.exists(path):
        airlock_request.ask(f"sales_{month}", f"revenue for {month} is needed for the two-month total",
                            description="the sales export (region,product,units,revenue)")
    months[month] = sum(float(r["revenue"]) for r in csv.DictReader(open(path)))
print(" ".join(f"{m}={v:.2f}" for m, v in months.items()), f"total={sum(months.values()):.2f}")
"""

# Asks for something no catalogue has: refused.
GREEDY = """\
import airlock_request
airlock_request.ask("customer_emails", "to mail the top customers", params={"limit": 100})
"""

SESSION_CALL = """\
import csv, os, airlock_request
if not os.path.exists("sales_feb.csv"):
    airlock_request.ask("sales_feb", "February is needed for the comparison")
feb = sum(float(r["revenue"]) for r in csv.DictReader(open("sales_feb.csv")))
round(feb - jan, 2)
"""


def decide(client, asked, upload):
    """For each open request: a file id when the catalogue has it, else None
    (refused, with the reason recorded)."""
    given = {}
    for r in asked:
        print(f"  the code asks for {r.name!r}: {r.why!r}")
        if r.name in CATALOGUE:
            given[r.id] = upload(r)
        else:
            given[r.id] = None
    return given


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default=os.environ.get("AIRLOCK_URL", "http://127.0.0.1:8470"))
    args = p.parse_args()
    key = os.environ.get("AIRLOCK_API_KEY")
    if not key:
        raise SystemExit("set AIRLOCK_API_KEY (airlock keys create --tenant NAME --scopes run,read)")
    client = airlock_serve.Client(args.url, key, timeout=60)
    jan = client.upload(pathlib.Path(EXAMPLES, "sales_jan.csv"))

    # A job: asks, answered by a follow-up job.
    first = client.run(JOB, inputs=[jan["id"]], timeout=120)
    print(f"job {first.id}: {first.outcome}")
    if not first.input_requested:
        raise SystemExit(first.stderr or first.stdout)
    given = decide(client, first.data_requests,
                   lambda r: client.upload(CATALOGUE[r.name], name=f"{r.name}.csv")["id"])
    for rid, file_id in given.items():
        if file_id is None:
            first.refuse(rid, "not in the catalogue of this application")
    answered = [rid for rid, f in given.items() if f]
    follow = client.run(JOB, inputs=[jan["id"]] + [given[r] for r in answered],
                        answers=first.answers(*answered), timeout=120)
    print(f"follow-up job {follow.id}: {follow.outcome}: {follow.stdout.strip()}")
    print(f"  its record answers job {follow.record['answers']['job']}, requests {follow.record['answers']['requests']}")

    # A request no catalogue has: refused.
    greedy = client.run(GREEDY, timeout=120)
    decide(client, greedy.data_requests, lambda r: None)
    for r in greedy.data_requests:
        greedy.refuse(r.id, "not in the catalogue of this application")
    print(f"job {greedy.id}: {greedy.outcome}, request "
          f"{greedy.refresh().data_requests[0].state}: {greedy.data_requests[0].answer.get('reason')}")

    # A session: the call asks, the file is written into the session, the next call answers.
    with client.session(policy={"timeout_s": 120}) as s:
        s.write_file("sales_jan.csv", pathlib.Path(EXAMPLES, "sales_jan.csv"))
        s.run('import csv\njan = sum(float(r["revenue"]) for r in csv.DictReader(open("sales_jan.csv")))')
        call = s.run(SESSION_CALL)
        print(f"session call {call.id}: {call.status}")
        given = decide(client, call.data_requests,
                       lambda r: s.write_file(f"{r.name}.csv", CATALOGUE[r.name])["path"])
        call = s.run(SESSION_CALL, answers=[rid for rid, f in given.items() if f])
        print(f"session call {call.id}: {call.status}: February minus January = {call.value}")


if __name__ == "__main__":
    main()
