#!/usr/bin/env python3
"""layering.t: scripts/check-layering (TAP, run by make check).

The node's own graph must pass (no loop through src/cache/, none in admin/
or ha/, no loop but the event core's). Then the check must fail when a loop
comes back: the real graph with one dependency added (a cache module calling
back into the core, a loop inside admin/, one inside ha/, one module more in
the core loop, two modules outside the core that call each other), and
small C trees compiled here whose only loop is in the call graph (seen in the
objects) or closed by an #include. Rule 6, no tokenizing outside src/sql/:
the node has none, a planted tokenizer in src/cache/ fails on every one of
its marks (the lexer's insides, a private lexer, character classes, a
comment's mark, a keyword compared as text), and what only looks like one
(a config file's white space, a case-sensitive comparison with a server's
value, a protocol byte, a comment naming the lexer) passes.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("srcdir") or os.path.join(HERE, "..", ".."))
OBJDIR = os.getcwd() if os.path.isdir(os.path.join(os.getcwd(), "src")) else SRCDIR
CHECK = os.path.join(SRCDIR, "scripts", "check-layering")
PLAN = 18
n = 0


def ok(cond, name, detail=""):
    global n
    n += 1
    print(("ok" if cond else "not ok") + f" {n} - {name}")
    if not cond and detail:
        for line in detail.rstrip().splitlines():
            print("# " + line)
    sys.stdout.flush()
    return cond


def run(*args):
    r = subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def loops_of(edges):
    """The loops check-layering finds in edges: {frozenset(members)}."""
    with tempfile.NamedTemporaryFile("w", suffix=".edges", delete=False) as f:
        f.write("\n".join(f"{a} {b} {w}" for a, b, w in edges) + "\n")
    rc, out = run("--edges", f.name)
    os.unlink(f.name)
    found = set()
    for line in out.splitlines():
        if line.strip().startswith("loop of "):
            found.add(frozenset(line.split(": ", 1)[1].split()))
    return rc, out, found


def with_edge(edges, a, b):
    return edges + [(a, b, "uses injected_by_layering_t")]


def compile_tree(files):
    """Write files {path: text} into a temporary tree and compile each .c
    into its .o (the way the build does: -I src -I .)."""
    d = tempfile.mkdtemp(prefix="layering-")
    atexit.register(shutil.rmtree, d, True)   # each run's trees go with it
    for path, text in files.items():
        full = os.path.join(d, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)
    cc = os.environ.get("CC", "cc")
    for path in files:
        if path.endswith(".c"):
            subprocess.run([cc, "-c", "-I", os.path.join(d, "src"), "-I", d, "-o",
                            os.path.join(d, path[:-2] + ".o"), os.path.join(d, path)], check=True)
    return d


print(f"1..{PLAN}")

# --- the node itself
rc, out = run("--top", SRCDIR, "--objdir", OBJDIR)
ok(rc == 0 and "0 place(s) tokenize outside src/sql/" in out,
   "the node's layering holds (no loop through src/cache/, admin/ or ha/; only the event core's; "
   "no tokenizing outside src/sql/)", out)
ok("0 dependencies point up" in out, "no dependency of the node points up the folder order", out)
for line in out.splitlines():
    if not line.startswith("      "):
        print("# " + line)

rc, dump = run("--top", SRCDIR, "--objdir", OBJDIR, "--dump")
edges = []
for line in dump.splitlines():
    p = line.split(None, 2)
    if len(p) == 3:
        edges.append((p[0], p[1], p[2]))
kinds = {w.split()[0] for _, _, w in edges}
ok(rc == 0 and len(edges) > 100 and kinds == {"uses", "includes"},
   f"the graph has call edges (nm) and include edges ({len(edges)} edges)", dump[-2000:])

rc, out, found = loops_of(edges)
core = max(found, key=len) if found else frozenset()
ok(rc == 0 and "src/core/client" in core and not any(m.startswith("src/cache/") for m in core),
   f"fed back as --edges it passes too; the core loop is {' '.join(sorted(core))}", out)

# --- a dependency added to the real graph brings a loop back: it must fail
cache_dep = next(((a, b) for a, b, _ in edges if a in core and b.startswith("src/cache/")), None)
if cache_dep:
    rc, out, found = loops_of(with_edge(edges, cache_dep[1], cache_dep[0]))
    ok(rc == 1 and "BROKEN" in out and cache_dep[1] in out and "contains src/cache/" in out,
       f"{cache_dep[1]} calling back into {cache_dep[0]} fails, and the loop is printed", out)
else:
    ok(False, "the core depends on some src/cache/ module (nothing to invert)")


def inverted_fails(folder):
    """An edge inside folder, inverted: the loop it makes must fail."""
    dep = next(((a, b) for a, b, _ in edges if a.startswith(folder) and b.startswith(folder)), None)
    if not dep:
        ok(False, f"{folder} modules depend on each other (nothing to invert)")
        return
    rc, out, found = loops_of(with_edge(edges, dep[1], dep[0]))
    ok(rc == 1 and f"contains {folder}" in out, f"{dep[1]} -> {dep[0]} (a loop in {folder}) fails", out)


inverted_fails("admin/")

# one module more: one the core uses, made to call back into it (the first
# that joins the core loop alone)
grown = None
for a, b in sorted({(a, b) for a, b, _ in edges if a in core and b not in core and b.startswith("src/")
                     and not b.startswith("src/cache/")}):
    rc, out, found = loops_of(with_edge(edges, b, a))
    if any(len(f) == len(core) + 1 and core < f for f in found):
        grown = (a, b, rc, out)
        break
if grown:
    a, b, rc, out = grown
    ok(rc == 1 and "not the event core's loop: " + b in out,
       f"{b} calling back into {a} makes the core loop {len(core) + 1} modules: fails", out)
else:
    ok(False, "no module outside the core that the core uses (nothing to grow the loop with)")

# two modules outside the core that call each other: a loop of 2 fails too
# (the config loop config <-> config_table that once was allowed by size)
pair = next(((a, b) for a, b, _ in edges if a.startswith("src/") and b.startswith("src/")
             and a not in core and b not in core and not a.startswith("src/cache/")
             and not b.startswith("src/cache/")), None)
if pair:
    rc, out, found = loops_of(with_edge(edges, pair[1], pair[0]))
    ok(rc == 1 and "not the event core's loop" in out and frozenset(pair) in found,
       f"{pair[1]} -> {pair[0]}: a loop of 2 outside the event core fails", out)
else:
    ok(False, "two src/ modules outside the core depend on each other (nothing to invert)")

inverted_fails("ha/")

# the folder order: dependencies that point up are counted; six fail. Each
# goes from src/sql/ to a src/ops/ module that does not reach back, so that
# the edges make no loop and only the count can fail.
mods = {a for a, _, _ in edges} | {b for _, b, _ in edges}
graph = {}
for a, b, _ in edges:
    graph.setdefault(a, set()).add(b)


def reaches(a, b):
    seen, todo = {a}, [a]
    while todo:
        for n in graph.get(todo.pop(), ()):
            if n == b:
                return True
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return False


ups = [(lo, hi, "uses injected_upward") for lo in sorted(m for m in mods if m.startswith("src/sql/"))
       for hi in sorted(m for m in mods if m.startswith("src/ops/")) if not reaches(hi, lo)][:6]
if len(ups) == 6:
    rc, out, _ = loops_of(edges + ups[:1])
    ok(rc == 0 and "1 dependency points up" in out and "up: " + ups[0][0] in out,
       f"one dependency up the folder order ({ups[0][0]} -> {ups[0][1]}) is counted and printed, "
       "and passes", out)
    rc, out, _ = loops_of(edges + ups)
    ok(rc == 1 and "6 dependencies point up" in out and "more than 5 dependencies" in out,
       "six dependencies up the folder order fail", out)
else:
    ok(False, "six pairs of a src/sql/ module and a src/ops/ module that does not reach it")
    ok(False, "  (nothing to point up with)")

# --- compiled trees: the loop seen in the objects, or closed by an include
call_loop = compile_tree({
    "src/core.c": "int cache_get(int);\nint core_resume(int x) { return x + 1; }\n"
                  "int core_step(int x) { return cache_get(x); }\n",
    "src/cache/get.c": "int core_resume(int);\nint cache_get(int x) { return core_resume(x); }\n",
})
rc, out = run("--top", call_loop)
ok(rc == 1 and "src/cache/get -> src/core  (uses core_resume)" in out,
   "a compiled tree whose cache calls back into the core fails (seen in the objects)", out)

include_loop = compile_tree({
    "src/core.h": "struct core { int x; };\nint core_step(struct core *c);\n",
    "src/core.c": '#include "core.h"\nint cache_peek(struct core *c);\n'
                  "int core_step(struct core *c) { return cache_peek(c); }\n",
    "src/cache/peek.c": '#include "core.h"\nint cache_peek(struct core *c) { return c->x; }\n',
})
rc, out = run("--top", include_loop)
ok(rc == 1 and "src/cache/peek -> src/core  (includes core.h)" in out,
   "a compiled tree whose cache reads the core's struct (an include, no call) fails", out)

layered = compile_tree({
    "src/cache/store.h": "int store_get(int);\n",
    "src/cache/store.c": '#include "cache/store.h"\nint store_get(int x) { return x; }\n',
    "src/core.h": "int core_step(int);\n",
    "src/core.c": '#include "core.h"\n#include "cache/store.h"\n'
                  "int core_step(int x) { return store_get(x); }\n",
    "admin/a.c": '#include "core.h"\nint admin_a(int x) { return core_step(x); }\n',
    "src/main.c": "int admin_a(int);\nint main(void) { return admin_a(0); }\n",
})
rc, out = run("--top", layered)
ok(rc == 0 and "0 loop(s)" in out and "0 function(s) defined that nothing calls" in out,
   "a compiled tree with the core above the cache, every function called, passes", out)

# a header with no .c of its own still stands in its folder: base/ including
# a config/ type header points up (it once hid base/log.h -> config/)
type_header = compile_tree({
    "src/config/types.h": "enum level { LEVEL_LOW, LEVEL_HIGH };\n",
    "src/base/log.c": '#include "config/types.h"\nint log_level_of(enum level l) { return (int)l; }\n',
    "src/main.c": "int log_level_of(int);\nint main(void) { return log_level_of(0); }\n",
})
rc, out = run("--top", type_header)
ok("1 dependency points up" in out and "up: src/base/log -> src/config/types  (includes types.h)" in out,
   "a type-only header of a higher folder, included from base/, is counted as pointing up", out)

# --- rule 5: a function nothing calls fails; one only a test calls is listed
uncalled_tree = compile_tree({
    "src/cache/store.c": "static int store_hits;\n"
                         "/* store_forgotten() was once called from here */\n"
                         "int store_forgotten(int x) { return x + store_hits; }\n"
                         "int store_seam(int x) { return x; }\n"
                         "int store_own(int x) { return x; }\n"
                         "int store_get(int x) { return store_own(x); }\n",
    "src/main.c": "int store_get(int);\nint main(void) { return store_get(1); }\n",
    "tests/unit/test_store.c": "int store_seam(int);\nint t(void) { return store_seam(2); }\n",
})
rc, out = run("--top", uncalled_tree)
ok(rc == 1 and "uncalled: store_forgotten (src/cache/store.c)" in out
   and "tests only: store_seam (src/cache/store.c)" in out and "store_own" not in out,
   "a function nothing calls fails (a comment naming it is no call); one only a test calls "
   "is listed; one called in its own file passes", out)

# --- rule 6: tokenizing outside src/sql/
LEXER_H = "struct sql_lex { const char *s; };\nvoid sql_lex_next(struct sql_lex *lx);\n"
planted = compile_tree({
    "src/sql/lexer.h": LEXER_H,
    "src/sql/lexer.c": '#include "sql/lexer.h"\nvoid sql_lex_next(struct sql_lex *lx) { (void)lx; }\n',
    "src/cache/peek.c": '#include <ctype.h>\n#include <strings.h>\n#include "sql/lexer.h"\n'
                        "struct lex { const char *p, *end; };\n"
                        "static int word(struct lex *l, const char *w) { return strncasecmp(l->p, w, 4) == 0; }\n"
                        "int cache_is_kill(struct lex *l)\n{\n"
                        "\twhile (l->p < l->end && isspace((unsigned char)*l->p))\n\t\tl->p++;\n"
                        "\tif (l->p[0] == '/' && l->p[1] == '*')\n\t\treturn 0;\n"
                        "\treturn word(l, \"KILL\");\n}\n"
                        "void cache_walk(struct sql_lex *lx) { sql_lex_next(lx); }\n",
    "src/main.c": "int cache_is_kill(void *); void cache_walk(void *);\n"
                  "int main(void) { cache_walk(0); return cache_is_kill(0); }\n",
})
rc, out = run("--top", planted)
marks = ("private): src/cache/peek.c:4", "class): src/cache/peek.c:8", "comment): src/cache/peek.c:10",
         "keyword): src/cache/peek.c:12", "lexer): src/cache/peek.c:14")
ok(rc == 1 and "5 place(s) tokenize outside src/sql/" in out and all("tokenizes (" + m in out for m in marks),
   "a tokenizer planted in src/cache/ fails on each of its marks: private lexer, class, comment, keyword, "
   "lexer", out)

lookalike = compile_tree({
    "src/config/conf.c": "#include <ctype.h>\nstruct conf_scan { int n; };\n"
                         "int conf_blank(const char *p) { return isspace((unsigned char)*p); }\n",
    "src/cache/rule.c": '#include <string.h>\n/* no sql_lex_next here: stmt.h is read */\n'
                        'int cache_rule(const char *r) { return strncmp(r, "SET", 3) == 0 || r[3] == \'#\'; }\n',
    "src/main.c": 'int conf_blank(const char *); int cache_rule(const char *);\n'
                  'int main(void) { return conf_blank("") + cache_rule("SET NULL"); }\n',
})
rc, out = run("--top", lookalike)
ok(rc == 0 and "0 place(s) tokenize outside src/sql/" in out,
   "what only looks like tokenizing passes: a config file's white space and scanner, a case-sensitive "
   "comparison with a server's value, a protocol byte, a comment naming the lexer", out)

if n != PLAN:
    print(f"# ran {n} of {PLAN}")
