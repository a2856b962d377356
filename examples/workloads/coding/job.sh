#!/bin/sh
# The coding agent's job (image build): clone the project from the git bundle
# in /inputs, build it with make, run its tests, and leave a JUnit XML report
# in /output, where airlock's junit check reads it.
set -eu
export HOME=/tmp GIT_CONFIG_NOSYSTEM=1
git clone --quiet /inputs/project.bundle /workspace/project
cd /workspace/project
make -s all
make -s test REPORT=/output/report.xml
