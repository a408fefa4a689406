#!/usr/bin/env python3
"""test-numbers.t: each integration test has a number of its own (TAP, run
by make check). scripts/test runs tests/integration/NN-name.t in the order
of their names, and logs, docs and SHOAL_TESTS name them by that number:
two tests sharing one make "88-*" mean two things."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("srcdir") or os.path.join(HERE, "..", ".."))
ITEST = os.path.join(SRCDIR, "tests", "integration")

names = sorted(f for f in os.listdir(ITEST) if f.endswith(".t"))
by_number = {}
bad_names = []
for f in names:
    m = re.match(r"^(\d\d)-[a-z0-9-]+\.t$", f)
    if not m:
        bad_names.append(f)
        continue
    by_number.setdefault(m.group(1), []).append(f)
shared = {k: v for k, v in by_number.items() if len(v) > 1}

print("1..3")
print(("ok" if len(names) > 30 else "not ok") + f" 1 - {len(names)} integration tests found in tests/integration")
print(("ok" if not bad_names else "not ok") + " 2 - every name is NN-words.t" +
      (f": not {', '.join(bad_names)}" if bad_names else ""))
print(("ok" if not shared else "not ok") + " 3 - no two tests share a number" +
      "".join(f"\n# {k}: {' '.join(v)}" for k, v in sorted(shared.items())))
sys.exit(0)
