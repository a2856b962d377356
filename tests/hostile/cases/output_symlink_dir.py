# case: output-symlink-dir
# why: a symlinked directory in /output (to / and to /etc) must not be walked
# expect-outcome: output_rejected
# expect-output: rootdir rejected symlink
# expect-output: etcdir rejected symlink
# forbid-record: passwd
# forbid-record: hostname
import os
os.symlink("/", "/output/rootdir")
os.symlink("/etc", "/output/etcdir")
print("PLANTED directory symlinks")
