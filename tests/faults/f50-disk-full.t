#!/usr/bin/env bash
# f50-disk-full: the admin's data_dir is a 1 MiB tmpfs, filled up after the
# node started. A changed setting is loaded to the runtime, then
# SAVE SHOAL VARIABLES TO DISK (and SAVE SHOAL QUERY RULES TO DISK) fail with
# a clear ERROR 1105 naming the file and the cause; the running
# configuration and the disk copy are unchanged and the node keeps serving;
# with space again the same SAVE works. Needs root (mount). About 5 s.
set -uo pipefail
. "$(dirname "$0")/lib-faults.sh"
if fake_mode; then skip_all "node-only"; fi

dd_dir="$BUILD_TEST/f50-data"
mkdir -p "$dd_dir"
while mountpoint -q "$dd_dir"; do umount "$dd_dir" 2>/dev/null || umount -l "$dd_dir"; done
if ! mount -t tmpfs -o size=1m tmpfs "$dd_dir" 2>/dev/null; then
  skip_all "cannot mount a tmpfs here (needs root)"
fi
plan 11
# after the node (on_exit runs before lib.sh stops nodes): lazily if still busy
on_exit "shoal_stop f; umount '$dd_dir' || umount -l '$dd_dir'"
AP=$(free_port)
if ! shoal_start f --data-dir "$dd_dir" --admin-address "127.0.0.1:$AP"; then
  bail "node starts"
fi
ok "node starts with data_dir on a 1 MiB tmpfs"
adm() { mariadb --no-defaults -h127.0.0.1 -P"$AP" -uadmin -padmin -N "$@" 2>&1; }
ttl() { adm -e "SELECT variable_value FROM $1 WHERE variable_name = 'shoal-cache-ttl-ms'"; }

adm -e "UPDATE global_variables SET variable_value = '11111' WHERE variable_name = 'shoal-cache-ttl-ms';
         LOAD SHOAL VARIABLES TO RUNTIME; SAVE SHOAL VARIABLES TO DISK" >/dev/null
disk_before=$(ttl disk.global_variables)
is "$disk_before" 11111 "with space, a value is saved to disk (11111)"
dd if=/dev/zero of="$dd_dir/filler" bs=4k >/dev/null 2>&1
like "$(df -P "$dd_dir" | awk 'NR==2 {print $4}')" '^0$' "the tmpfs is full"
out=$(adm -e "UPDATE global_variables SET variable_value = '23456' WHERE variable_name = 'shoal-cache-ttl-ms';
              LOAD SHOAL VARIABLES TO RUNTIME; SAVE SHOAL VARIABLES TO DISK")
like "$out" "ERROR 1105 \(HY000\).*SAVE SHOAL VARIABLES TO DISK failed: database or disk is full \(writing .*shoal.db; the disk copy and the running configuration are unchanged\)" \
  "SAVE ... TO DISK on a full disk: clear ERROR 1105 [$(tr '\n' ' ' <<<"$out" | grep -o 'ERROR.*' | cut -c1-90)]"
is "$(ttl runtime_global_variables)" 23456 "the running value is the one loaded (23456)"
is "$(ttl global_variables)" 23456 "main still holds it"
is "$(ttl disk.global_variables)" "$disk_before" "the disk copy is unchanged ('$disk_before')"
out=$(adm -e "INSERT INTO query_rules (rule_id, active, match_digest, cache_ttl) VALUES (1, 1, '^SELECT', 1000);
              SAVE SHOAL QUERY RULES TO DISK" )
like "$out" "ERROR 1105 .*disk is full" "SAVE SHOAL QUERY RULES TO DISK: the same clear error [$(grep -o 'ERROR.*' <<<"$out" | cut -c1-60)]"
is "$(via -N -e 'SELECT 5')" 5 "the node still serves queries"
rm -f "$dd_dir/filler"
adm -e "SAVE SHOAL VARIABLES TO DISK" >/dev/null
is "$(ttl disk.global_variables)" 23456 "with space again, SAVE ... TO DISK writes it"
check "node still running" shoal_alive f
done_testing
