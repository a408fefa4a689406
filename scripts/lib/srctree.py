#!/usr/bin/env python3
"""scripts/lib/srctree.py: the source files of a tree, without what a build
made in place (objects, Makefile, configure, build-* directories), with or
without git.

    srctree.py list ROOT [--rules gitignore|dockerignore]
    srctree.py copy ROOT DEST [--rules gitignore|dockerignore]

gitignore (the default): in a git checkout, the files git knows plus the
untracked ones it does not ignore (git ls-files --cached --others
--exclude-standard); elsewhere (a tarball of the tree) every file that
ROOT/.gitignore does not ignore, by git's rules (a pattern without a slash
matches a name at any depth, one with a slash is anchored at ROOT, a
trailing slash matches directories only, "!" re-includes unless a parent
directory is excluded). dockerignore: what `docker build ROOT` sends as its
context: every file that ROOT/.dockerignore does not exclude, by Docker's
rules (patterns anchored at ROOT, "*" within one path component, "**" across
any number, a pattern that matches a directory excludes what is under it,
"!" makes an exception; the last matching line wins).

list prints the relative paths, NUL-terminated. copy copies them to DEST
(made if missing), keeping modes. Used by scripts/package, scripts/test (the
sanitizer pass) and tests/integration/98-deploy-files.t.
"""
import os
import re
import shutil
import subprocess
import sys


def _glob_regex(pat):
    """A glob as a regex: * and ? within one component, ** across any."""
    out, i = "", 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pat.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if c == "*":
            out += "[^/]*"
        elif c == "?":
            out += "[^/]"
        elif c == "[":
            j = pat.find("]", i + 1)
            if j < 0:
                out += re.escape(c)
            else:
                body = pat[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out += "[" + body.replace("\\", "\\\\") + "]"
                i = j
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z")


def _read_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [l.rstrip("\n") for l in f]
    except FileNotFoundError:
        return []


class GitIgnore:
    """ROOT/.gitignore by git's rules (one file at the root, as this tree has)."""

    def __init__(self, lines):
        self.rules = []
        for line in lines:
            if not line.strip() or line.startswith("#"):
                continue
            line = line.rstrip()
            neg = line.startswith("!")
            if neg:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            self.rules.append((neg, dir_only, anchored, _glob_regex(line.lstrip("/"))))

    def _decide(self, sub, is_dir):
        verdict = None
        for neg, dir_only, anchored, rx in self.rules:
            if dir_only and not is_dir:
                continue
            target = sub if anchored else sub.rsplit("/", 1)[-1]
            if rx.match(target):
                verdict = not neg
        return verdict

    def ignored(self, path, is_dir=False):
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            last = i == len(parts)
            verdict = self._decide("/".join(parts[:i]), is_dir if last else True)
            if verdict and not last:
                return True          # an excluded directory: nothing under it comes back
            if last:
                return bool(verdict)
        return False


class DockerIgnore:
    """ROOT/.dockerignore by Docker's rules."""

    def __init__(self, lines):
        self.rules = []
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            neg = line.startswith("!")
            if neg:
                line = line[1:].strip()
            line = os.path.normpath(line).lstrip("/")
            self.rules.append((neg, _glob_regex(line)))

    def ignored(self, path, is_dir=False):
        parts = path.split("/")
        subs = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        verdict = False
        for neg, rx in self.rules:
            if any(rx.match(s) for s in subs):
                verdict = not neg
        return verdict


def _walk(root, rules):
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        rel = "" if rel == "." else rel + "/"
        keep = []
        for n in sorted(dirs):
            if rel + n == ".git":
                continue
            if isinstance(rules, GitIgnore) and rules.ignored(rel + n, True):
                continue
            keep.append(n)
        dirs[:] = keep
        for n in sorted(files):
            if rel + n == ".git":    # a worktree's .git file
                continue
            if not rules.ignored(rel + n):
                out.append(rel + n)
    return out


def git_top(root):
    """ROOT's absolute path when it is the top of a git work tree, else None."""
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return None
    return top if top and os.path.realpath(top) == os.path.realpath(root) else None


def source_files(root, rules="gitignore"):
    if rules == "dockerignore":
        return _walk(root, DockerIgnore(_read_lines(os.path.join(root, ".dockerignore"))))
    if git_top(root):
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        names = [n.decode() for n in out.split(b"\0") if n]
        return [n for n in names if os.path.lexists(os.path.join(root, n))]
    return _walk(root, GitIgnore(_read_lines(os.path.join(root, ".gitignore"))))


def copy(root, dest, names):
    for n in names:
        src, dst = os.path.join(root, n), os.path.join(dest, n)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)


def main(argv):
    rules = "gitignore"
    if "--rules" in argv:
        i = argv.index("--rules")
        rules = argv[i + 1]
        del argv[i:i + 2]
    if rules not in ("gitignore", "dockerignore") or not argv or argv[0] not in ("list", "copy"):
        sys.stderr.write(__doc__)
        return 2
    if argv[0] == "list" and len(argv) == 2:
        for n in source_files(argv[1], rules):
            sys.stdout.write(n + "\0")
        return 0
    if argv[0] == "copy" and len(argv) == 3:
        os.makedirs(argv[2], exist_ok=True)
        copy(argv[1], argv[2], source_files(argv[1], rules))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
