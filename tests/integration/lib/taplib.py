"""TAP output for the python parts of the integration tests.

Numbers results in the same sequence as lib.sh (the counter lives in the file
named by $TAP_STATE, "<count> <failures>"); without TAP_STATE it keeps its own
count and done_testing() prints the plan.
"""
import os
import sys

_state = os.environ.get("TAP_STATE")
_local = [0, 0]


def _bump(failed):
    if _state:
        with open(_state) as f:
            n, fails = (int(x) for x in f.read().split())
    else:
        n, fails = _local
    n += 1
    fails += 1 if failed else 0
    if _state:
        with open(_state, "w") as f:
            f.write("%d %d\n" % (n, fails))
    else:
        _local[0], _local[1] = n, fails
    return n


def diag(*msg):
    text = " ".join(str(m) for m in msg)
    for line in text.splitlines() or [""]:
        sys.stdout.write("# %s\n" % line)
    sys.stdout.flush()


def _line(text):
    """text on one line: a description may carry captured output, and a
    newline would cut the result line (and its name in the summary)."""
    return str(text).replace("\r", "").replace("\n", "\\n")


def ok(cond, desc, *diags):
    desc = _line(desc)
    n = _bump(not cond)
    sys.stdout.write("%s %d - %s\n" % ("ok" if cond else "not ok", n, desc))
    if not cond:
        for d in diags:
            diag(d)
    sys.stdout.flush()
    return bool(cond)


def skip(desc, reason=""):
    desc, reason = _line(desc), _line(reason)
    n = _bump(False)
    sys.stdout.write("ok %d - %s # SKIP %s\n" % (n, desc, reason))
    sys.stdout.flush()


def is_(got, want, desc):
    return ok(got == want, desc, "     got: %r" % (got,), "    want: %r" % (want,))


def node_ok(check, direct, via, desc, *diags):
    """A fixed expectation on a value read through the node, checked on the
    same value read straight from MariaDB (same client) first: when MariaDB's
    own answer fails it, the client or the server is at fault, not the node,
    and the check is a skip that says so. check is a function of one value."""
    if not check(direct):
        skip(desc, "fails without a node too (direct: %s): the client library or the "
             "server, not the node" % (repr(direct)[:200],))
        return None
    return ok(check(via), desc, "     via: %r" % (via,), "  direct: %r" % (direct,), *diags)


def failures():
    if _state:
        with open(_state) as f:
            return int(f.read().split()[1])
    return _local[1]


def count():
    if _state:
        with open(_state) as f:
            return int(f.read().split()[0])
    return _local[0]


def done_testing(always_zero=False):
    """Print the plan when running standalone; exit status = failures > 0
    (always 0 with always_zero: a part of a bigger test, where a non-zero
    status means the part crashed)."""
    if not _state:
        print("1..%d" % _local[0])
    sys.stdout.flush()
    sys.exit(0 if always_zero or not failures() else 1)


def run(desc, fn, *args, **kw):
    """Run fn; an exception is a failed test named desc (with the exception)."""
    try:
        return fn(*args, **kw)
    except Exception as e:  # noqa: BLE001 - any failure is a test failure
        import traceback
        ok(False, desc, "exception: %r" % (e,), traceback.format_exc())
        return None
