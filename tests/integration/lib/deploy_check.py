"""deploy_check.py: readers for the files under deploy/ used by
98-deploy-files.t: the node's settings from `shoal --help`, ProxySQL's
libconfig-style proxysql.cnf, the compose file, deploy/shoal.conf, and the
metric names referenced by the alert rules and the Grafana dashboard."""
import json
import re
import subprocess


def settings(shoal_bin):
    """{file_key: (env, default_text)} from `shoal --help`."""
    out = subprocess.run([shoal_bin, "--help"], capture_output=True, text=True).stdout
    lines = out.split("\n")
    res = {}
    for i, line in enumerate(lines):
        m = re.match(r"\s+env (\w+), file key (\w+)$", line)
        if m and i + 1 < len(lines):
            d = re.match(r"\s+default: (.*)$", lines[i + 1])
            res[m.group(2)] = (m.group(1), d.group(1) if d else "")
    return res


def env_names(shoal_bin):
    out = subprocess.run([shoal_bin, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"\benv (\w+)", out))


# ------------------------------------------------------------ libconfig
class CfgError(Exception):
    pass


_TOKEN = re.compile(r'\s*(?:(#[^\n]*|//[^\n]*|/\*.*?\*/)|("(?:[^"\\]|\\.)*")|'
                    r'([A-Za-z_][\w-]*)|([-+]?0x[0-9a-fA-F]+|[-+]?\d+(?:\.\d+)?)|([=:;,{}()\[\]]))', re.S)


def _tokens(text):
    pos, toks = 0, []
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            line = text.count("\n", 0, pos) + 1
            raise CfgError("line %d: cannot read %r" % (line, text[pos:pos + 20]))
        pos = m.end()
        if m.group(1):
            continue
        if m.group(2):
            toks.append(("str", json.loads(m.group(2))))
        elif m.group(3):
            w = m.group(3)
            toks.append(("bool", w.lower() == "true") if w.lower() in ("true", "false") else ("name", w))
        elif m.group(4):
            toks.append(("num", int(m.group(4), 0) if "." not in m.group(4) else float(m.group(4))))
        else:
            toks.append(("p", m.group(5)))
    return toks


def parse_libconfig(text):
    """ProxySQL's config format (libconfig): settings name = value; groups
    { }, lists ( ), arrays [ ], strings, numbers, booleans."""
    toks = _tokens(text)
    i = [0]

    def peek():
        return toks[i[0]] if i[0] < len(toks) else ("eof", None)

    def take(kind=None, val=None):
        t = peek()
        if (kind and t[0] != kind) or (val is not None and t[1] != val):
            raise CfgError("expected %s %s, got %r (token %d)" % (kind, val or "", t, i[0]))
        i[0] += 1
        return t

    def value():
        t = peek()
        if t == ("p", "{"):
            take()
            g = settings_until("}")
            take("p", "}")
            return g
        if t[0] == "p" and t[1] in "([":
            close = ")" if t[1] == "(" else "]"
            take()
            items = []
            while peek() != ("p", close):
                items.append(value())
                if peek() == ("p", ","):
                    take()
                elif peek() != ("p", close):
                    raise CfgError("expected , or %s in a list, got %r" % (close, peek()))
            take()
            return items
        if t[0] in ("str", "num", "bool"):
            take()
            return t[1]
        raise CfgError("unexpected %r" % (t,))

    def settings_until(end):
        g = {}
        while peek()[0] != "eof" and peek() != ("p", end):
            name = take("name")[1]
            if peek()[1] not in ("=", ":"):
                raise CfgError("expected = after %s" % name)
            take()
            if name in g:
                raise CfgError("%s given twice" % name)
            g[name] = value()
            if peek()[0] == "p" and peek()[1] in (";", ","):
                take()
        return g

    res = settings_until(None)
    if peek()[0] != "eof":
        raise CfgError("trailing %r" % (peek(),))
    return res


# ------------------------------------------------------------ shoal.conf
def conf_settings(path):
    """[(key, value)] of the commented-out "# key = value" lines."""
    res = []
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^# ([a-z][a-z0-9_]*) = ?(.*?)\s*$", line)
        if m:
            res.append((m.group(1), m.group(2)))
    return res


# ------------------------------------------------------------ metrics
PROMQL_WORDS = {"sum", "by", "rate", "and", "on", "or", "unless", "max", "min", "topk",
                "histogram_quantile", "without", "avg", "count", "ignoring", "bool",
                "group_left", "group_right", "absent", "irate", "increase", "le", "offset"}


def promql_metrics(expr):
    """Metric names in a PromQL expression: identifiers followed by { or
    by a range/space/paren that are not functions, keywords or labels."""
    names = set()
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)          # label values
    expr = re.sub(r"\{[^}]*\}", lambda m: "{" + " " * (len(m.group(0)) - 2) + "}", expr)
    expr = re.sub(r"\b(by|on|without|ignoring)\s*\([^)]*\)", " ", expr)
    for m in re.finditer(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?", expr):
        name, call = m.group(1), m.group(2)
        if call or name in PROMQL_WORDS or re.match(r"^\d", name):
            continue
        if re.match(r"^\d+[smhdwy]$", name):
            continue
        names.add(name)
    return names


def promql_selectors(expr):
    """(metric, {label: value}) for each selector with = or =~ matchers."""
    res = []
    for m in re.finditer(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}", expr):
        labels = dict(re.findall(r'(\w+)\s*=~?\s*"([^"]*)"', m.group(2)))
        res.append((m.group(1), labels))
    return res


def alert_exprs(path):
    import yaml
    doc = yaml.safe_load(open(path))
    return [(r["alert"], r["expr"]) for g in doc["groups"] for r in g["rules"]]


def dashboard_exprs(path):
    doc = json.load(open(path))
    res = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                res.append((p.get("title", "?"), t["expr"]))
            walk(p.get("panels", []))
    walk(doc.get("panels", []))
    for v in doc.get("templating", {}).get("list", []):
        q = v.get("definition") or ""
        m = re.match(r"label_values\((.*),\s*\w+\)$", q)
        if m:
            res.append(("variable " + v["name"], m.group(1)))
    return res


def scrape_samples(text):
    """{sample name: [label dicts]} from Prometheus text."""
    res = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s", line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            res.setdefault(m.group(1), []).append(labels)
    return res
