# case: proc-mountinfo-host-paths
# why: the sandbox's mount table must not reveal host paths (e.g. where airlock stages a job's inputs)
# expect-outcome: succeeded
# expect-stdout: BLOCKED no host paths in mountinfo
leaks = []
with open("/proc/self/mountinfo") as f:
    for line in f:
        fields = line.split()
        root, mountpoint = fields[3], fields[4]
        # a bind mount shows the path of its source inside that filesystem; it
        # should be the same path as inside, the filesystem's own root, or a /dev node
        if root not in ("/", mountpoint) and not (mountpoint.startswith("/proc/") or mountpoint.startswith("/dev/")):
            leaks.append("%s <- %s" % (mountpoint, root))
for l in leaks:
    print("host path:", l)
print("ESCAPED host paths in mountinfo: %d" % len(leaks) if leaks else "BLOCKED no host paths in mountinfo")
