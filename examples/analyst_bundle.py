"""The analyst example, published as one bundle: runs analyst.py's work, then packs
/output/summary.csv and /output/chart.png into /output/bundle.zip, the file an application
publishes. The job's request declares an archive check on bundle.zip (members, sizes, digests,
member types csv and png), so the bundle is inspected before it can be published.
"""
import os
import runpy
import zipfile

output = os.environ.get("AIRLOCK_OUTPUT", "/output")
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "analyst.py"), run_name="__main__")

with zipfile.ZipFile(os.path.join(output, "bundle.zip"), "w", zipfile.ZIP_DEFLATED) as bundle:
    for name in ("summary.csv", "chart.png"):
        bundle.write(os.path.join(output, name), arcname=name)
