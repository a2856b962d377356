# case: output-symlink-host
# why: Judge0 CVE-2024-28185: a symlink in /output to a host file must be refused, never followed
# expect-outcome: output_rejected
# expect-output: passwd.txt rejected symlink
# expect-output: shadow.txt rejected symlink
# forbid-record: root:x:0:0
# forbid-record: /bin/bash
import os
os.symlink("/etc/passwd", "/output/passwd.txt")
os.symlink("/proc/1/root/etc/shadow", "/output/shadow.txt")
with open("/output/ok.txt", "w") as f:
    f.write("fine\n")
print("PLANTED symlinks to /etc/passwd and /proc/1/root/etc/shadow")
