#!/usr/bin/env bash
# 21-perl-prepared: DBD::MariaDB with mariadb_server_prepare=1, i.e. the binary
# protocol (COM_STMT_PREPARE / EXECUTE / CLOSE), through the node versus
# straight to MariaDB.
#
# A check of a value read through the node runs on the value read straight
# from MariaDB first: when that fails too, the client library (or the
# server) is at fault, not the node, and the check is a skip that says so.
# (Debian 12's libmariadb3 10.11.18, without its updates, returns empty
# DATETIME(6), DECIMAL and TIME values when a server-side prepared statement
# is executed again: the "types" checks skip there.)
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# node starts, 30 checks of the perl part, node still running
plan 32
load_types || bail "load types.sql"
if shoal_start node; then
  ok "node starts (port $node_PORT)"
else
  bail "node starts (port $node_PORT)"
fi
on_exit "mdb -e 'DROP TABLE IF EXISTS shoal_perl_ps'"

CLIENT_LIB="libmariadb3 $(dpkg-query -W -f='${Version}' libmariadb3 2>/dev/null || echo '(version unknown)')"
NODE_PORT=$node_PORT CLIENT_LIB=$CLIENT_LIB perl - <<'PERL'
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
# ok(COND, DESC, DIAG...): the prototype puts COND in scalar context (a failed
# match in list context is an empty list, which would shift DESC into COND);
# a check without a name fails.
sub ok($$@) {
    my ($c, $d, @diag) = @_;
    if (!defined $d || $d eq '') { $c = 0; @diag = ("a check without a name", @diag); $d //= '' }
    my $n = _bump(!$c);
    print(($c ? "ok" : "not ok") . " $n - $d\n");
    diag(@diag) unless $c;
    return $c;
}
sub skip($$) { my ($d, $why) = @_; my $n = _bump(0); print "ok $n - $d # SKIP $why\n"; }
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
my $CLIENT = $ENV{CLIENT_LIB} // 'the client library';
my @client_faults;
# node_ok(CHECK, DIRECT, VIA, DESC, DIAG...): CHECK (a sub on one value) on the
# value read straight from MariaDB first; when that fails, neither side can be
# judged: a skip naming the client library. Else CHECK on the node's value.
sub node_ok {
    my ($check, $direct, $via, $d, @diag) = @_;
    if (!$check->($direct)) {
        push @client_faults, $d;
        skip($d, "fails without a node too (direct: " . show($direct) . "): $CLIENT or the server, not the node");
        return;
    }
    ok(scalar $check->($via), $d, "via: " . show($via), "direct: " . show($direct), @diag);
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
$CLIENT .= " (Connector/C $d->{mariadb_clientinfo})" if $d->{mariadb_clientinfo};
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
    my %col; @col{ @{ $rv->{meta}{NAME} } } = (0 .. $#{ $rv->{meta}{NAME} });
    # the value of column C in row R (0-based) of a side's results, or undef
    my $cell = sub { my ($side, $r, $c) = @_; my $row = $side->{results}[$r]{rows}[0]; defined $row ? $row->[$col{$c}] : undef };
    my @values = (
        [2, 'c_datetime', "DATETIME(6) through the node", sub { defined $_[0] && $_[0] eq '2024-02-29 12:34:56.123456' }],
        [2, 'c_decimal', "DECIMAL(20,6) through the node", sub { defined $_[0] && $_[0] eq '12345.678901' }],
        [2, 'c_varchar', "utf8mb4 VARCHAR through the node",
         sub { defined $_[0] && $_[0] eq "Shoal \x{1F41F} caf\x{e9} \x{2014} \x{65E5}\x{672C}\x{8A9E} \x{2713} \x{1F600} \x{1D11E}" }],
        [2, 'c_mediumblob', "BLOB through the node", sub { defined $_[0] && $_[0] eq ("\x00\xff" x 1000) }],
        [2, 'c_json', "JSON through the node", sub { defined $_[0] && $_[0] =~ /"tags": \["cache", "proxy"\]/ }],
    );
    for my $v (@values) {
        my ($r, $c, $desc, $check) = @$v;
        node_ok($check, $cell->($rd, $r, $c), $cell->($rv, $r, $c), $desc);
    }
    my $extremes = sub { my ($side) = @_; [map { $cell->($side, 1, $_) } qw(c_bigint_u c_bigint c_time)] };
    node_ok(sub { my ($u, $s, $t) = @{ $_[0] }; defined $u && defined $s && defined $t && $u eq '18446744073709551615'
                  && $s eq '9223372036854775807' && $t eq '838:59:59.000' },
            $extremes->($rd), $extremes->($rv), "extremes (BIGINT UNSIGNED max, TIME max) through the node");
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
    node_ok(sub { defined $_[0] && $_[0] eq "x \x{1F41F}" }, $res[0][0][1][0][1], $res[1][0][1][0][1],
            "utf8mb4 parameter round trip through the node");
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
    node_ok(sub { $_[0][0] == 20000 && $_[0][1] == 20000 }, [$res[0][1], $res[1][1]], [$res[2][1], $res[3][1]],
            "fetch loops through the node returned 20000 rows (fetchrow_arrayref and bind_columns)", show(\@res));
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
    node_ok(sub { defined $_[0] && $_[0][0] == 1064 && $_[0][1] eq '42000' }, $e[0][0], $e[1][0],
            "syntax error at prepare through the node: 1064 (42000)");
};

section "server version" => sub {
    ok($v->{mariadb_serverinfo} eq $d->{mariadb_serverinfo}, "DBD::MariaDB sees the upstream's version exactly",
       "via: $v->{mariadb_serverinfo}", "direct: $d->{mariadb_serverinfo}");
};

if (@client_faults) {
    diag(scalar(@client_faults) . " checks skipped because MariaDB's own answer, read without a node, fails them:",
         map({ "  $_" } @client_faults),
         "$CLIENT (DBD::MariaDB's client library) or the server is at fault here, not the node.",
         "(Measured: Debian 12's libmariadb3 1:10.11.18, Connector/C 3.3.19, reads these values of a",
         "re-executed server-side prepared statement as empty from a 10.11.19 server too; 1:10.11.19,",
         "Connector/C 3.3.20, from bookworm-security, reads them right.)");
}
$d->disconnect;
$v->disconnect;
exit 0;
PERL
prc=$?
[ $prc -eq 0 ] || not_ok "perl part exited $prc (crashed)"
check "node still running" shoal_alive node
done_testing
