# case: priv-uid-gid
# why: the code runs as uid/gid 1000 (real, effective, saved, fs) with no supplementary groups
# expect-outcome: succeeded
# expect-stdout: BLOCKED uid=1000 gid=1000 groups=[]
import os
with open("/proc/self/status") as f:
    st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
uids, gids = st["Uid"].split(), st["Gid"].split()
groups = [g for g in os.getgroups() if g != 1000]
print("Uid:", uids, "Gid:", gids, "groups:", os.getgroups())
if set(uids) == {"1000"} and set(gids) == {"1000"} and not groups:
    print("BLOCKED uid=1000 gid=1000 groups=[]")
else:
    print("ESCAPED uid", uids, "gid", gids, "groups", groups)
