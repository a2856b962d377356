# case: inputs-readonly
# why: /inputs is read-only: admitted files cannot be changed, replaced or added to
# expect-outcome: succeeded
# expect-stdout: BLOCKED /inputs read-only
import errno, os
def en(e): return errno.errorcode.get(e, str(e))
me = "/inputs/inputs_readonly.py"
res = {}
for label, fn in (("open-write", lambda: os.close(os.open(me, os.O_WRONLY | os.O_APPEND))),
                  ("create", lambda: os.close(os.open("/inputs/new.txt", os.O_WRONLY | os.O_CREAT, 0o644))),
                  ("rename", lambda: os.rename(me, "/inputs/renamed.py")),
                  ("unlink", lambda: os.unlink(me)),
                  ("chmod", lambda: os.chmod(me, 0o777))):
    try:
        fn()
        res[label] = "OK"
    except OSError as e:
        res[label] = en(e.errno)
print(res)
if "OK" in res.values():
    print("ESCAPED changed /inputs:", [k for k, v in res.items() if v == "OK"])
elif set(res.values()) <= {"EROFS", "EACCES", "EPERM"}:
    print("BLOCKED /inputs read-only", sorted(set(res.values())))
else:
    print("UNEXPECTED", res)
