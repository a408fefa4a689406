#!/usr/bin/env bash
# 97-package: scripts/package builds the Debian package, and the package is
# right: control fields (version from configure.ac, Depends resolved by
# dh_shlibdeps to the packages that hold every library the binaries need,
# adduser), contents (/usr/bin/shoal, shoal-ha when the tree builds it, the
# systemd unit and /etc/shoal/shoal.conf as shipped in deploy/, docs),
# conffiles, maintainer scripts (shoal user, service not started on
# install); the extracted binary is hardened, prints its version, and runs
# as a node with the packaged config file. Builds without make check (the
# unit tests run earlier in scripts/test); about 30-60 s.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if fake_mode; then
  skip_all "the package is built from the node's source (fake mode)"
fi
for t in dpkg-buildpackage dh fakeroot; do
  if ! command -v "$t" >/dev/null; then
    skip_all "$t is missing (scripts/lib/common.sh lists debhelper, dpkg-dev, fakeroot)"
  fi
done

# build 7, contents 8, control files 8, the files 6, libraries and
# dependencies 2, the binary as a node 3, the unit 1
plan 35
out="$BUILD_TEST/package"
rm -rf "$out"
version=$(sed -nE 's/^AC_INIT\(\[[^]]*\], *\[([^]]+)\].*/\1/p' "$SRCDIR/configure.ac")
arch=$(dpkg --print-architecture)
deb="$out/shoal_${version}_${arch}.deb"

start=$SECONDS
if "$SRCDIR/scripts/package" --out "$out" --no-check --no-install-deps >"$out.log" 2>&1; then
  ok "scripts/package builds the package ($((SECONDS - start)) s)"
else
  diag_file "$out.log" 40
  [ -f "$out/build.log" ] && { tail -n 30 "$out/build.log" | sed 's/^/#   /'; }
  bail "scripts/package builds the package"
fi
is "$(tail -n 1 "$out.log")" "$deb" "it prints the path of the .deb"
check "the .deb exists: $(basename "$deb")" test -s "$deb"

field() { dpkg-deb -f "$deb" "$1"; }
is "$(field Package)" shoal "Package: shoal"
is "$(field Version)" "$version" "Version: $version (configure.ac)"
is "$(field Architecture)" "$arch" "Architecture: $arch"
depends=$(field Depends)
diag "Depends: $depends"
like "$depends" '(^|, )adduser($|,)' "Depends has adduser (postinst creates the shoal user)"

# Contents.
contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's#^\./#/#')
for f in /usr/bin/shoal /lib/systemd/system/shoal.service /etc/shoal/shoal.conf \
  /usr/share/doc/shoal/README.md /usr/share/doc/shoal/proxysql.md /var/lib/shoal/; do
  like "$contents" "^${f}(\\.gz)?\$" "the package holds $f"
done
if grep -qE '(^|[[:space:]])ha/shoal-ha' "$SRCDIR/Makefile.am"; then
  like "$contents" '^/usr/bin/shoal-ha$' "the package holds /usr/bin/shoal-ha (ha/ is part of the build)"
else
  unlike "$contents" 'shoal-ha' "no shoal-ha yet: Makefile.am does not build ha/shoal-ha"
fi
unlike "$contents" '\.o$|/Makefile|/configure$' "no build output in the package"

# Control files.
ctl=$(mktemp -d "$BUILD_TEST/pkgctl.XXXXXX")
on_exit "rm -rf '$ctl'"
dpkg-deb -e "$deb" "$ctl/DEBIAN"
is "$(cat "$ctl/DEBIAN/conffiles" 2>/dev/null)" "/etc/shoal/shoal.conf" "conffiles: /etc/shoal/shoal.conf"
check "postinst is valid sh" sh -n "$ctl/DEBIAN/postinst"
check "postrm is valid sh" sh -n "$ctl/DEBIAN/postrm"
post=$(cat "$ctl/DEBIAN/postinst")
like "$post" 'adduser --system --group --home /var/lib/shoal' "postinst creates the shoal system user"
like "$post" 'dpkg-statoverride --update --add root shoal 0640 /etc/shoal/shoal.conf' \
  "postinst makes shoal.conf root:shoal 0640 (it may hold passwords)"
like "$post" "deb-systemd-helper update-state 'shoal.service'" "postinst has dh_installsystemd's unit handling"
unlike "$post" "deb-systemd-invoke (start|restart)" "postinst does not start the unconfigured service"
like "$(cat "$ctl/DEBIAN/postrm")" 'purge' "postrm cleans up on purge"

# Extract and look at the files themselves.
root="$ctl/root"
dpkg-deb -x "$deb" "$root"
cmp_files "$SRCDIR/deploy/shoal.conf" "$root/etc/shoal/shoal.conf" "the packaged shoal.conf is deploy/shoal.conf"
cmp_files "$SRCDIR/deploy/systemd/shoal.service" "$root/lib/systemd/system/shoal.service" \
  "the packaged unit is deploy/systemd/shoal.service"
bin="$root/usr/bin/shoal"
v=$("$bin" --version 2>&1)
is "$v" "shoal $version" "the packaged binary prints its version"
hdr=$(readelf -h "$bin" 2>/dev/null | sed -nE 's/^ *Type: *([A-Z]+).*/\1/p')
is "$hdr" DYN "the packaged binary is PIE (hardening=+all)"
like "$(readelf -d "$bin" 2>/dev/null)" 'BIND_NOW|FLAGS.*NOW' "the packaged binary is linked with -z now"
unlike "$(readelf -S "$bin" 2>/dev/null)" '\.debug_info' "the packaged binary is stripped"

# Every library a packaged binary needs is in a package that Depends names
# (one check over all of them: their number depends on the build).
nlibs=0 unnamed=()
for b in "$root"/usr/bin/*; do
  while read -r lib; do
    nlibs=$((nlibs + 1))
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x32|AArch64|64bit|=>/ {print $NF; exit}')
    pkg=$(dpkg -S "$(realpath "$path" 2>/dev/null || echo "$path")" 2>/dev/null | head -n1 | cut -d: -f1)
    [ -n "$pkg" ] || pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -n1 | cut -d: -f1)
    diag "$(basename "$b") needs $lib: ${pkg:-no package}"
    grep -Eq "(^|, )${pkg:-NO-PACKAGE}( |,|\$)" <<<"$depends" || unnamed+=("$(basename "$b"): $lib (${pkg:-no package})")
  done < <(objdump -p "$b" | awk '/NEEDED/ {print $2}')
done
if [ "$nlibs" -gt 0 ] && [ ${#unnamed[@]} -eq 0 ]; then
  ok "each of the $nlibs libraries the packaged binaries need is in a package Depends names"
else
  not_ok "each library the packaged binaries need is in a package Depends names ($nlibs found)"
  for u in "${unnamed[@]}"; do diag "not in Depends: $u"; done
fi
# ... and every dependency is a real package (installed here: the build host).
IFS=',' read -ra deps <<<"$depends"
missing=()
for d in "${deps[@]}"; do
  name=$(sed -E 's/^ *([^ (]+).*/\1/' <<<"$d")
  dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'install ok installed' || missing+=("$name")
done
if [ ${#deps[@]} -gt 0 ] && [ ${#missing[@]} -eq 0 ]; then
  ok "each of the ${#deps[@]} dependencies is an installed Debian package"
else
  not_ok "each dependency is an installed Debian package (not installed: ${missing[*]:-none}; ${#deps[@]} dependencies)"
fi

# The packaged binary runs as a node with the packaged config file (every
# setting commented out, so the defaults) and the test's upstream.
data="$ctl/data"
if SHOAL_BIN="$bin" shoal_start pkg --upstream-db-url "mysql://app:pw@127.0.0.1:$MDB_PORT/shoaltest" \
  --config "$root/etc/shoal/shoal.conf" --data-dir "$data"; then
  ok "the packaged binary serves as a node with the packaged shoal.conf"
  is "$(VIA_PORT=$pkg_PORT via -N -e 'SELECT 6*7')" 42 "a query through it"
  shoal_stop pkg
  is "$pkg_STATUS" 0 "it drains and exits 0 on SIGTERM"
else
  not_ok "the packaged binary serves as a node with the packaged shoal.conf"
fi

# The unit as packaged passes systemd-analyze (ExecStart pointed at the
# extracted binary, since /usr/bin/shoal is not installed here).
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$ctl/unit"
  sed "s#/usr/bin/shoal#$bin#" "$root/lib/systemd/system/shoal.service" >"$ctl/unit/shoal.service"
  sa=$(systemd-analyze verify "$ctl/unit/shoal.service" 2>&1)
  rc=$?
  is "$rc:$sa" "0:" "systemd-analyze verify: the packaged unit has no error or warning"
else
  skip "systemd-analyze verify" "systemd-analyze is not installed"
fi

done_testing
