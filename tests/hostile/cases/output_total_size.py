# case: output-total-size
# why: files each under the per-file limit (64 MiB) but over the total output limit (256 MiB) are refused once the total is reached
# args: --workspace-size 1G --memory 1G --timeout 30
# expect-outcome: output_rejected
# expect-output: part rejected total
# expect-limit: output_size
chunk = b"\x5a" * (1 << 20)
for i in range(5):
    with open("/output/part%d.txt" % i, "wb") as f:
        for _ in range(60):
            f.write(chunk)
print("PLANTED 5 files of 60 MiB")
