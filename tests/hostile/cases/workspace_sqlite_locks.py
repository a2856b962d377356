# case: workspace-sqlite-locks
# why: what runtimes need of file locks still works: sqlite in /workspace (fcntl F_SETLK and F_GETLK, WAL mode with two connections)
# expect-outcome: succeeded
# expect-stdout: journal wal
# expect-stdout: rows 100 seen by the second connection
# expect-stdout: locked out: database is locked
# compute-why: the database is made in /workspace: read-only under compute (Landlock)
# compute-expect-outcome: failed
# compute-expect-stderr: unable to open database file
import sqlite3
a = sqlite3.connect("/workspace/t.db", timeout=0)
print("journal", a.execute("pragma journal_mode=wal").fetchone()[0])
a.execute("create table t (x)")
a.executemany("insert into t values (?)", [(i,) for i in range(100)])
a.commit()
b = sqlite3.connect("/workspace/t.db", timeout=0)
print("rows", b.execute("select count(*) from t").fetchone()[0], "seen by the second connection")
a.execute("begin exclusive")
try:
    b.execute("begin exclusive")
    print("not locked out")
except sqlite3.OperationalError as e:
    print("locked out:", e)
a.rollback()
