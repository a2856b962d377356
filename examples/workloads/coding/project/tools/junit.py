"""Turns the test program's lines ("pass NAME", "fail NAME: MESSAGE") into a
JUnit XML report. Usage: junit.py SUITE RESULTS REPORT"""
import sys
from xml.sax.saxutils import escape, quoteattr

suite, results, report = sys.argv[1:4]
cases = []
for line in open(results, encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("pass "):
        cases.append((line[5:], None))
    elif line.startswith("fail "):
        name, _, message = line[5:].partition(": ")
        cases.append((name, message))
failed = sum(1 for _, message in cases if message is not None)
with open(report, "w", encoding="utf-8") as out:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write('<testsuites tests="%d" failures="%d" errors="0">\n' % (len(cases), failed))
    out.write('  <testsuite name=%s tests="%d" failures="%d" errors="0" skipped="0">\n'
              % (quoteattr(suite), len(cases), failed))
    for name, message in cases:
        if message is None:
            out.write('    <testcase classname=%s name=%s/>\n' % (quoteattr(suite), quoteattr(name)))
        else:
            out.write('    <testcase classname=%s name=%s><failure message=%s>%s</failure></testcase>\n'
                      % (quoteattr(suite), quoteattr(name), quoteattr(message), escape(message)))
    out.write("  </testsuite>\n</testsuites>\n")
print("%s: %d tests, %d failures" % (suite, len(cases), failed))
