# case: priv-capabilities
# why: all capabilities dropped: effective, permitted, inheritable, ambient and bounding sets are empty
# expect-outcome: succeeded
# expect-stdout: BLOCKED CapEff=0
# expect-stdout: bounding set empty
with open("/proc/self/status") as f:
    st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
caps = {k: int(st[k], 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
print({k: "%#x" % v for k, v in caps.items()})
nonzero = [k for k, v in caps.items() if v and k != "CapBnd"]
print("ESCAPED capabilities: " + ", ".join(nonzero) if nonzero else "BLOCKED CapEff=0 CapPrm=0 CapInh=0 CapAmb=0")
print("bounding set %s" % ("empty" if caps["CapBnd"] == 0 else "NOT EMPTY %#x" % caps["CapBnd"]))
