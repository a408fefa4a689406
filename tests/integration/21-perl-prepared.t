#!/usr/bin/env bash
# 21-perl-prepared: DBD::MariaDB with mariadb_server_prepare=1, i.e. the binary
# protocol (COM_STMT_PREPARE / EXECUTE / CLOSE), through the node versus
# straight to MariaDB.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if ! load_types; then not_ok "load types.sql"; done_testing; exit 1; fi
if ! shoal_start node; then not_ok "node starts"; done_testing; exit 1; fi
ok "node starts (port $node_PORT)"
on_exit "mdb -e 'DROP TABLE IF EXISTS shoal_perl_ps'"

NODE_PORT=$node_PORT perl - <<'PERL'
use strict;
use warnings;
use DBI qw(:sql_types);
use Data::Dumper;
use Digest::MD5;
$Data::Dumper::Sortkeys = 1;
$Data::Dumper::Useqq = 1;
$Data::Dumper::Indent = 0;
$Data::Dumper::Terse = 1;
$Data::Dumper::Deepcopy = 1;

# TAP, numbered in the same sequence as lib.sh (counter file $TAP_STATE).
sub _bump {
    my ($fail) = @_;
    open my $fh, '<', $ENV{TAP_STATE} or die "TAP_STATE: $!";
    my ($n, $f) = split ' ', scalar <$fh>;
    close $fh;
    $n++; $f += $fail ? 1 : 0;
    open $fh, '>', $ENV{TAP_STATE} or die; print $fh "$n $f\n"; close $fh;
    return $n;
}
sub diag { for my $l (map { split /\n/ } @_) { print "# $l\n" } }
sub ok {
    my ($c, $d, @diag) = @_;
    my $n = _bump(!$c);
    print(($c ? "ok" : "not ok") . " $n - $d\n");
    diag(@diag) unless $c;
    return $c;
}
sub show { my $s = Dumper($_[0]); $s = substr($s, 0, 1500) . '...' if length($s) > 1500; $s }
# first_diff(a, b, path): where two structures first differ, or undef.
sub first_diff {
    my ($a, $b, $path) = @_;
    $path //= '';
    return undef if !defined $a && !defined $b;
    return "$path: " . show($a) . " vs " . show($b) if !defined $a || !defined $b || ref($a) ne ref($b);
    if (ref $a eq 'ARRAY') {
        return "$path: " . scalar(@$a) . " vs " . scalar(@$b) . " elements" if @$a != @$b;
        for my $i (0 .. $#$a) { my $d = first_diff($a->[$i], $b->[$i], "$path\[$i]"); return $d if defined $d }
        return undef;
    }
    if (ref $a eq 'HASH') {
        for my $k (sort keys %{ { %$a, %$b } }) { my $d = first_diff($a->{$k}, $b->{$k}, "$path\{$k}"); return $d if defined $d }
        return undef;
    }
    return $a eq $b ? undef : "$path: " . show($a) . " vs " . show($b);
}
sub is_deeply_ {
    my ($got, $want, $d) = @_;
    my $diff = first_diff($got, $want);
    ok(!defined $diff, $d, defined $diff ? ("first difference (via vs direct) at $diff") : ());
}
sub section {
    my ($name, $code) = @_;
    eval { $code->(); 1 } or ok(0, "section $name completes", "died: $@");
}
$| = 1;

my $fake = ($ENV{SHOAL_FAKE_DIRECT} // '') eq '1';
sub dbh {
    my ($port, %attr) = @_;
    return DBI->connect("DBI:MariaDB:database=shoaltest;host=127.0.0.1;port=$port;mariadb_server_prepare=1;mariadb_connect_timeout=10",
        'app', 'pw', { RaiseError => 1, PrintError => 0, AutoCommit => 1, %attr });
}
my $d = dbh($ENV{MDB_PORT});
my $v = dbh($ENV{NODE_PORT});
ok($v->{mariadb_server_prepare}, "server-side prepare is on");

sub meta {
    my ($sth) = @_;
    # (Not PRECISION or mariadb_max_length: Connector/C computes them from the
    # rows fetched, and with MariaDB's CACHE_METADATA capability it keeps the
    # values of earlier executions of the statement, so they depend on the
    # capabilities negotiated rather than on the data; 10-battery.t shows the
    # capability difference itself.)
    return { map { $_ => $sth->{$_} } qw(NAME TYPE SCALE NULLABLE NUM_OF_FIELDS NUM_OF_PARAMS
                                          mariadb_type mariadb_type_name mariadb_is_blob mariadb_is_num
                                          mariadb_is_key mariadb_is_pri_key mariadb_length mariadb_table) };
}
sub run_ps {
    my ($dbh, $sql, $params, %opt) = @_;
    my $sth = $dbh->prepare($sql, $opt{attr} // {});
    my @out;
    for my $p (@$params) {
        my $rv = $sth->execute(@$p);
        my $rows = $sth->{NUM_OF_FIELDS} ? $sth->fetchall_arrayref : [];
        push @out, { rv => $rv, rows => $rows, warnings => $sth->{mariadb_warning_count} };
    }
    my $m = meta($sth);
    $sth->finish;
    return { meta => $m, results => \@out };
}

section "types" => sub {
    my $sql = 'SELECT * FROM shoal_types WHERE id = ?';
    my $params = [[1], [2], [3], [4], [5], [6]];
    my ($rd, $rv) = (run_ps($d, $sql, $params), run_ps($v, $sql, $params));
    is_deeply_($rv->{meta}, $rd->{meta}, "prepared SELECT * over every type: metadata equal");
    for my $i (0 .. $#$params) {
        is_deeply_($rv->{results}[$i], $rd->{results}[$i], "prepared SELECT * WHERE id = $params->[$i][0]: row equal");
    }
    ok(@{ $rd->{results}[3]{rows}[0] } > 40 && !grep({ defined } @{ $rd->{results}[3]{rows}[0] }[1 .. 40]),
       "row 4 is NULL in every column (direct)");
    my $r3 = $rv->{results}[2]{rows}[0];
    my %col; @col{ @{ $rv->{meta}{NAME} } } = (0 .. $#{ $rv->{meta}{NAME} });
    ok(defined $r3 && $r3->[$col{c_datetime}] eq '2024-02-29 12:34:56.123456', "DATETIME(6) through the node", show($r3 && $r3->[$col{c_datetime}]));
    ok(defined $r3 && $r3->[$col{c_decimal}] eq '12345.678901', "DECIMAL(20,6) through the node");
    ok(defined $r3 && $r3->[$col{c_varchar}] eq "Shoal \x{1F41F} caf\x{e9} \x{2014} \x{65E5}\x{672C}\x{8A9E} \x{2713} \x{1F600} \x{1D11E}", "utf8mb4 VARCHAR through the node");
    ok(defined $r3 && $r3->[$col{c_mediumblob}] eq ("\x00\xff" x 1000), "BLOB through the node");
    ok(defined $r3 && $r3->[$col{c_json}] =~ /"tags": \["cache", "proxy"\]/, "JSON through the node");
    my $r2 = $rv->{results}[1]{rows}[0];
    ok(defined $r2 && $r2->[$col{c_bigint_u}] eq '18446744073709551615' && $r2->[$col{c_bigint}] eq '9223372036854775807'
       && $r2->[$col{c_time}] eq '838:59:59.000', "extremes (BIGINT UNSIGNED max, TIME max) through the node",
       show([$r2 && @$r2[$col{c_bigint_u}, $col{c_bigint}, $col{c_time}]]));
};

section "per-type selects" => sub {
    my @cols = qw(c_tinyint c_tinyint_u c_smallint c_smallint_u c_mediumint c_mediumint_u c_int c_int_u c_bigint c_bigint_u
                  c_decimal c_float c_double c_bit8 c_bit64 c_bool c_date c_time c_datetime c_timestamp c_year
                  c_char c_varchar c_binary c_varbinary c_tinyblob c_blob c_mediumblob c_longblob
                  c_tinytext c_text c_mediumtext c_longtext c_latin1 c_enum c_set c_json c_geometry c_point c_inet6 c_uuid);
    my $bad = 0; my @why;
    for my $c (@cols) {
        my $sql = "SELECT id, $c FROM shoal_types WHERE id >= ? ORDER BY id";
        my ($rd, $rv) = (run_ps($d, $sql, [[0]]), run_ps($v, $sql, [[0]]));
        my $diff = first_diff($rv, $rd);
        if (defined $diff) { $bad++; push @why, "$c: via vs direct at $diff" }
    }
    ok(!$bad, "prepared SELECT of each of the " . scalar(@cols) . " type columns alone: equal", @why[0 .. ($#why < 4 ? $#why : 4)]);
};

section "typed parameters" => sub {
    my $sql = 'SELECT ? AS i, ? AS s, ? AS b, ? AS f, ? AS n, ? + 1 AS e';
    my @sets = ([42, "x \x{1F41F}", "\x00\x01\xff", 2.5, undef, 9223372036854775806],
                [-1, '', '', 0, undef, 0]);
    for my $dbh ($d, $v) { }
    my @res;
    for my $dbh ($d, $v) {
        my $sth = $dbh->prepare($sql);
        my @r;
        for my $set (@sets) {
            $sth->bind_param(1, $set->[0], SQL_INTEGER);
            $sth->bind_param(2, $set->[1], SQL_VARCHAR);
            $sth->bind_param(3, $set->[2], SQL_BLOB);
            $sth->bind_param(4, $set->[3], SQL_DOUBLE);
            $sth->bind_param(5, $set->[4], SQL_VARCHAR);
            $sth->bind_param(6, $set->[5], SQL_BIGINT);
            $sth->execute;
            push @r, [meta($sth), $sth->fetchall_arrayref];
        }
        push @res, \@r;
    }
    is_deeply_($res[1], $res[0], "typed parameters (INTEGER, VARCHAR utf8mb4, BLOB, DOUBLE, NULL, BIGINT): equal");
    ok($res[1][0][1][0][1] eq "x \x{1F41F}", "utf8mb4 parameter round trip through the node", show($res[1][0][1]));
};

section "prepared insert" => sub {
    $d->do('DROP TABLE IF EXISTS shoal_perl_ps');
    $d->do('CREATE TABLE shoal_perl_ps (id INT PRIMARY KEY, dt DATETIME(6), dec_ DECIMAL(20,6), b LONGBLOB, j JSON, s VARCHAR(100), n INT) DEFAULT CHARSET=utf8mb4');
    my $ins = $v->prepare('INSERT INTO shoal_perl_ps VALUES (?, ?, ?, ?, ?, ?, ?)');
    my $blob = join('', map { chr($_ % 256) } 0 .. 70000);
    my @rows = ([1, '2024-02-29 12:34:56.123456', '12345.678901', $blob, '{"k": [1, 2]}', "r\x{e9}sum\x{e9} \x{1F41F}", undef],
                [2, '1000-01-01 00:00:00.000000', '-99999999999999.999999', '', '[]', '', 0],
                [3, undef, undef, undef, undef, undef, undef]);
    my $n = 0;
    for my $r (@rows) {
        for my $i (0 .. $#$r) { $ins->bind_param($i + 1, $r->[$i], $i == 3 ? SQL_BLOB : ($i == 0 || $i == 6) ? SQL_INTEGER : SQL_VARCHAR) }
        $n += $ins->execute;
    }
    ok($n == 3, "prepared INSERT executed 3 times through the node, 3 rows affected", "affected $n");
    # re-execution with a duplicate key: error code and SQLSTATE
    my $err = eval { $ins->execute(1, undef, undef, undef, undef, undef, undef); 1 } ? undef : [$ins->err, $ins->state];
    my $sd = $d->prepare('INSERT INTO shoal_perl_ps (id) VALUES (?)');
    my $errd = eval { $sd->execute(1); 1 } ? undef : [$sd->err, $sd->state];
    is_deeply_($err, [1062, '23000'], "prepared INSERT of a duplicate key through the node: 1062 (23000)");
    is_deeply_($err, $errd, "duplicate key error equals MariaDB's");
    my $got = $d->selectall_arrayref('SELECT id, dt, dec_, b, j, s, n FROM shoal_perl_ps ORDER BY id');
    is_deeply_($got, \@rows, "rows inserted with bound parameters through the node read back directly");
    my $sel = 'SELECT * FROM shoal_perl_ps WHERE id IN (?, ?, ?) ORDER BY id';
    is_deeply_(run_ps($v, $sel, [[1, 2, 3]]), run_ps($d, $sel, [[1, 2, 3]]), "prepared SELECT of the inserted rows: equal");
    $ins->finish;
    $d->do('DROP TABLE shoal_perl_ps');
};

section "re-execution" => sub {
    my $sql = 'SELECT id, c_int, c_varchar, c_datetime FROM shoal_types WHERE id = ? OR ? IS NULL ORDER BY id';
    my @params = map { [$_ % 7, ($_ % 11 == 0) ? undef : 1] } 1 .. 200;
    my ($rd, $rv) = (run_ps($d, $sql, \@params), run_ps($v, $sql, \@params));
    is_deeply_($rv, $rd, "one statement executed 200 times with changing parameters: equal");
};

section "many statements" => sub {
    my @res;
    for my $dbh ($d, $v) {
        my @sth = map { $dbh->prepare("SELECT ? * $_ AS x, '$_' AS n") } 1 .. 60;
        my @r;
        for my $round (1 .. 2) {
            for my $i (reverse 0 .. $#sth) { $sth[$i]->execute($round); push @r, $sth[$i]->fetchall_arrayref }
        }
        $_->finish for @sth;
        push @res, \@r;
    }
    is_deeply_($res[1], $res[0], "60 statements prepared at once, executed in turn twice: equal");
};

section "fetch loop" => sub {
    # (mariadb_use_result is not used: DBD::MariaDB 1.21 with server-side
    # prepare returns no rows with it and then hangs, against MariaDB too.)
    my @res;
    for my $dbh ($d, $v) {
        my $sth = $dbh->prepare('SELECT seq, MD5(seq), seq / 3, IF(seq % 5 = 0, NULL, CAST(seq AS DATETIME(6))) FROM seq_1_to_20000 WHERE seq > ?');
        for my $style ('fetchrow_arrayref', 'bind_columns') {
            $sth->execute(0);
            my ($n, $acc) = (0, '');
            if ($style eq 'bind_columns') {
                my @c = (undef) x 4;
                $sth->bind_columns(\(@c));
                while ($sth->fetch) { $n++; $acc = Digest::MD5::md5_hex($acc . join("\x1f", map { $_ // "\\N" } @c)) }
            } else {
                while (my $row = $sth->fetchrow_arrayref) { $n++; $acc = Digest::MD5::md5_hex($acc . join("\x1f", map { $_ // "\\N" } @$row)) }
            }
            push @res, [$style, $n, $acc];
        }
        $sth->finish;
    }
    ok($res[2][1] == 20000 && $res[3][1] == 20000, "fetch loops through the node returned 20000 rows (fetchrow_arrayref and bind_columns)", show(\@res));
    is_deeply_([@res[2, 3]], [@res[0, 1]], "fetch loop results equal");
};

section "errors" => sub {
    my @e;
    for my $dbh ($d, $v) {
        my $r1 = eval { $dbh->prepare('SELEC ?'); 1 } ? undef : [$dbh->err, $dbh->state, $dbh->errstr];
        my $r2 = eval { $dbh->prepare('SELECT * FROM no_such_table WHERE a = ?'); 1 } ? undef : [$dbh->err, $dbh->state, $dbh->errstr];
        my $sth = $dbh->prepare('SELECT 1 FROM shoal_types WHERE id = (SELECT id FROM shoal_types WHERE id > ?)');
        my $r3 = eval { $sth->execute(0); $sth->fetchall_arrayref; 1 } ? undef : [$sth->err, $sth->state, $sth->errstr];
        my $ok = $dbh->selectall_arrayref('SELECT ? AS still', {}, 'alive');
        push @e, [$r1, $r2, $r3, $ok];
    }
    is_deeply_($e[1], $e[0], "prepare/execute errors (1064, 1146, 1242) and recovery: equal");
    ok(defined $e[1][0] && $e[1][0][0] == 1064 && $e[1][0][1] eq '42000', "syntax error at prepare through the node: 1064 (42000)", show($e[1][0]));
};

section "server version" => sub {
    if ($fake) { print "ok " . _bump(0) . " - server version ends with -shoal # SKIP fake mode\n"; return }
    ok($v->{mariadb_serverinfo} eq $d->{mariadb_serverinfo} . '-shoal', "DBD::MariaDB sees the upstream's version + -shoal",
       "via: $v->{mariadb_serverinfo}", "direct: $d->{mariadb_serverinfo}");
};

$d->disconnect;
$v->disconnect;
exit 0;
PERL
prc=$?
[ $prc -eq 0 ] || not_ok "perl part exited $prc (crashed)"
check "node still running" shoal_alive node
done_testing
