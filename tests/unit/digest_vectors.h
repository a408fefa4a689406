/*
 * digest_vectors.h: Shoal's digest test table, derived from ProxySQL's
 * stage-by-stage normalisation vectors (test/tap/tests/tokenizer_payloads/
 * *.hjson in ProxySQL 2.7).  Each row is one input with the settings of the
 * stage it checks:
 *   - "s3" rows: replace_null on, grouping_limit 3, groups_grouping_limit 0
 *     (the harness's full run with group-of-groups off);
 *   - "s4" rows: replace_null on, grouping_limit 3, groups_grouping_limit 1
 *     (the harness's defaults);
 *   - "mz" rows: replace_null on and the row's own grouping limits;
 *   - "prod" rows: production defaults (replace_null off, 3, 10), one per
 *     distinct input, with the text ProxySQL 2.7 produces for it.
 * The s3/s4/mz texts are the hjson's own expectations, unchanged.  The
 * digest column is SpookyHash64 of the text (ProxySQL's value).
 *
 * hjson expectations that are not rows here, and why:
 *   - mz cases with replace_digits (query_digests_no_digits) or keep_comment:
 *     options Shoal does not implement (both off in production);
 *   - mz cases whose expected text depends on a small digest_max_size
 *     (query_digests_max_query_length cut mid-query: regular#74 sizes 55 and
 *     54, #76/#77 size 99, #78/#79 size 98, #81 size 68); production uses
 *     65000, where the same inputs give the rows below;
 *   - "dr" expectations (query_digests_no_digits), for the same reason;
 *   - digest_corner_cases_2/3.hjson (standalone files): their expected texts
 *     are those of grouping_limit 3 while the files ask for 1 (ProxySQL's
 *     own code gives our text; the same inputs with the right settings are
 *     in regular_tokenizer_digests.hjson and are rows here).
 */
#ifndef SHOAL_DIGEST_VECTORS_H
#define SHOAL_DIGEST_VECTORS_H

#include <stdint.h>

struct digest_vector {
	int query;      /* index into dv_queries */
	int replace_null, grouping_limit, groups_grouping_limit;
	uint64_t digest;
	const char *text;
};

static const char *const dv_queries[] = {
	/* 0 */ "INSERT INTO db.table ( col1, col2,col3,col4, col5 ) VALUES ('val',1, 2,3,'foo'), ('val2',3,NULL,4,'foo2'), ('val2', 5,0x0239192,4,'foo2'), ("
		"'val2', 7,NULL,4,'foo2')",
	/* 1 */ "INSERT INTO db.table (col1,col2,col3) VALUES  (   -106884.372400,   Null,   96967.675019, \"uOkKFcQuotJLSsXHnlrRkMjkOHbnLL\",  nUll  ,   0xf"
		"ffffffffffe2fa4,-98747,'FHnJDcaJuHYKrcLQjmPRgBPeEMVqHG',   0xfffffffffffe5f92   )   ,  (-65981.543813 , 0x18a51  ,  -63726 ,   -40277   ,   "
		"'RZLWNxLKntCNvKyywPcuWWDkunJDzi'  ,  95651.912060 , -120483.104736  ,  'zoMQmSNOsvEMwhAupPPxSdjGlpIwUF',   -92653 )  ,( 79071.944789  ,   29"
		"637 ,Null   , 0xa3e3  ,   69742.506092   ,   nuLl ,   nUlL ,   32587 ,    nuLL ),( NUll  ,   193562   , NuLl,nUll   ,51124 ,63407.690405,128"
		"80.173141  ,  -42003.235292  ,  nULl   )   , (  14465,   0xd769, 35866, -71474 , 238970.003674  ,   49471.298925,nULl   , 196468.485221,    "
		" 'OQWWhgSLBQWiPGkidCLtmcJVjccXhT' )  ,   (15979.107082 ,   0xffffffffffffdecb, 'yAsavJoqsYcdRnqzuionGLUcgKzptM' , 52201.974227   ,  nUll  ,0"
		"xfffffffffffec75a , 152701.076362,  'vmWBqXdCYmBiZgIkQxPlMKkJzwoIjl'   ,   \"TzKdJzIgwVycdGJjnYiKVhYOVLhuHO\"  ) ,   ( 0x12a   ,   'wlbxzkxi"
		"geNkGceygISXGXHwHpNJfL', \"MjoQpMZYZlelqYyYFQQoXXvgMLxxIB\"   ,-14336.956478 ,79770.092506  , 0x8a19,   -209691 ,  -142530,    NuLl  )  , ( "
		" 7107 ,   48803.646634   ,   nuLl ,\"RxqHnGFqRGECSvsXmdfPutRczeoBWM\"   ,   4707.102185  ,   -123755.871365   ,   0x3803a ,0x892e ,     0x73"
		"34   )   ,   (  Null ,  \"BwQbhYkWShweQqlAgdiJjZVNkghTFt\",   27725.575520   , 0x7363  , 0x21ca2   ,   null   ,  \"rSBYTyRDrmKCgMEKvLeDeMmGJ"
		"rEWto\"   ,\"mpuVGXNeZsbPgbpKVUREyQBVpbsmLq\"   ,0xffffffffffff5b11 )    ON DUPLICATE KEY UPDATE col1 = VALUES(col2)",
	/* 2 */ "INSERT INTO db.table (col1,col2,col3) VALUES    (   0xfffffffffffdfa31  ,  'ytWVaafHnboBDSJHpKDfIlWSWvUNjq'  ,   16908.503755   ,  -11736.37"
		"2712,  0x1e798  , 'UlMwBSOlzzGgmKbjZavKKIgvDTzolx'  ,  9905.137073   ,  \"tGVoLiPoDsHOXXtXBqDrzwJHmWdOph\"   ),   ('XYvotpHOhBUaIKLLCPdeZamz"
		"yIQEIX'   , 39167.355124  ,  52963,   'HcfcZWuJpfTKhleWQNiEkydsyTPzwV' ,17553.074771   ,  0xfffffffffffea0e9   ,   -27669  ,    0xffffffffff"
		"fed5a4) ,   (   Null ,  -28382.553547, 0xffffffffffff6813   ,   33781  ,   -31269.369619,  0xfffffffffffdd05b   ,  \"ziXUovhpqIxEQTRDRoFVlmc"
		"XeXeXwE\",    0xffffffffffff22db   ) ,(0xfffffffffffec225   ,-54614  ,-130076.423664,  87245,   'lIDxwrQRGyVEhNJyflzVVVqgWKhcGQ'  ,0xfffffff"
		"fffffc016  ,0xfffffffffffe2ebb  ,  7161.573031 ) ,( 86691 ,  nulL   ,   'wArHVQUJjIkruXUMYQZmdGwACUHfCl' ,   nUlL ,  nuLL,   \"IjkZVgqmoRbNh"
		"HXEXCuapacSrarUmf\" ,\"zbXFcuBLBViyEjNoOMRfGzqVGzGYnV\"  ,  65818.863137  )  ,  (   17501.998482, -19763.038658  , NuLl  , nULL   ,   0xffff"
		"ffffffff8053,   \"FaiYqJUJdeMBqhSXLvNRjkRdoBKHCi\",NuLl  ,   -125847 ) ,   (   'FzlNatGeghhHXEaEvGZCzQAinUIark'  ,   -10893.427711 , 0xf36e "
		"  , nULl, 0xfffffffffffe71a8 ,  195649.986775, 61898   ,    \"SvtCaHMKbyDCcWqvZnsMKHRNRGPRFC\"   ),  (   69426   ,   'mZiasHoxeIhKBTaiSGTQJt"
		"wxtvoobg' ,'ZHWcgyackLzxYXDOwAgVbWRANJZWoW'  ,  'wGkUsXdrbWcmOrGRxGyilsQAEijGvW'  ,   \"OqKCBdtgWHePQzvBEzRUkypYgXdIbs\"   ,   nUll ,'SOPYdo"
		"FzxfIlwcCUsnLsIlcLNugdIJ'   ,   0x1be89   ),      (NuLL   , null  , nuLl  , 94923.703353  ,   24742.987834 , -47458,  -78436,    0xfffffffff"
		"ffcda0f   )  ON DUPLICATE KEY UPDATE col1 = VALUES(col2)",
	/* 3 */ "INSERT INTO db.table (col1,col2,col3) VALUES    (  0x1bb81  ,  214957.551736 , NuLL   ,  13931.135294  , 23747.192325   ,123446.135101   ,  "
		"NULL  ,   \"qishXAQYMGjKECmKDOMPhdcAnCKsIZ\"   ,  0xdf06 )   ,  (   0xeeb2, 61634.403212  ,\"WLrEhMSFQunfdVMBlNTHuTOoJnZWXp\"  , 134001  ,0x"
		"11691   ,-117247   ,   null   , 185039.893374,0xfffffffffffdec0c   )   , (   63386.842817 ,NUll , NuLL ,'rjEesshgtPbGPhQQPPJdzShBDxgqtX', -7"
		"0027.364007   ,   -33812,16088,  -55381.721224 ,    30937.841446  )  , (   -86381.060501   ,42818   , \"dWQiQvHpsqARowGWJYDfCWFfftJCQF\"  , "
		" \"usJPVckeqNRKoRbJhZcnjlKWxdRFqx\",   'vmHWbmdhfopTPzKzBktGDHfgAWvTjK' , -144765.876660  ,'zpUGEePzmDcktBrkWvpAjFvIYJLjJk'   ,   nuLL   ,  "
		" nulL) , (  Null  , -60588.485877,0xfffffffffffef1d8  ,   0x186f3   ,   'YRTtjWCbHXxqDAjfhqAeyOkflwUkUy'   ,   Null   ,   30300 ,   -79082  "
		" ,   -53386.660287 )   , (nuLL,  101067.756480,  'QJqcLLvbdUKvElZnitrCPiBmxttzPR'   , 82544.127490, \"pLwcmgkGEruDvPuJbjVWqigQKLtApm\" , NuL"
		"l ,\"pHCWIfigWjGHRWGbmrEYboNjNRrVle\"   ,   273.951202 , 0x1611e) ,  (  'xEqRpKSqBETVFlBrmUWDBNvXiWhLAv' ,0x2d71b   , -7610.975745 ,   49496"
		".141605   ,  0x5a3b, 41343,   187409,  \"ogsXdRWyoxDtZIIsgbUQIBnHRPVBCr\" ,    \"OKDhJKxprZcDdKrveMoCipXkyBOWzB\")  ,(179771.894977 ,  'exEZ"
		"ujUOHgZlQNHbNBmzuqGvfIjSmh'   , 110148.494099  ,  0x22668,0xbb55   ,'WUAcoNyluxqJGkRXIynFEAzaHGoNUm', 99168  ,98435.675651   ,    83750.7939"
		"47 ),    ( -55183.197960  ,  -209785 ,NULl  ,-131058  ,-40439.196182  , 0xfffffffffffeef1e  ,   'bOWeCuKfVyMAHgcRjonjLlHffKkVUj',-152886   ,"
		"  74587.327657 )  ON DUPLICATE KEY UPDATE col1 = VALUES(col2)",
	/* 4 */ "select /* COMMENT */ 1",
	/* 5 */ "select/* COMMENT */ 1",
	/* 6 */ "select/* COMMENT */1",
	/* 7 */ "/* COMMENT */select 1",
	/* 8 */ "/* COMMENT */ select 1 ",
	/* 9 */ "select 1/* COMMENT */  ",
	/* 10 */ "select 1 /* COMMENT */ ",
	/* 11 */ "# random_comment \012   select 1.1",
	/* 12 */ "#random_comment \012select 1.1",
	/* 13 */ "#random_comment\012select 1.1",
	/* 14 */ "-- random_comment \012 select 1.1",
	/* 15 */ "   --   random_comment\012select 1.1",
	/* 16 */ "# random_comment\012 select 1.1 #final_comment\012   ",
	/* 17 */ "# random_comment\012 select 1.1# final_comment   \012",
	/* 18 */ "# random_comment\012 select 1.1   #final_comment  \012  ",
	/* 19 */ "-- random_comment\012 select 1.1 -- final_comment\012   ",
	/* 20 */ "-- random_comment\012 select 1.1-- final_comment   \012",
	/* 21 */ "-- random_comment\012 select 1.1   -- final_comment  \012  ",
	/* 22 */ "SELECT\015\012\0111",
	/* 23 */ "SELECT\015\012\011 1",
	/* 24 */ "SELECT \015\012\0111",
	/* 25 */ "SELECT \015\012\011 1",
	/* 26 */ "SELECT \015\012\011 1\015\012\011",
	/* 27 */ "SELECT \015\012\011 1 \015\012\011",
	/* 28 */ "SELECT\012'foo',\012\0114\012\011",
	/* 29 */ "SELECT\012\011 'foo',\012\0114\012\011",
	/* 30 */ "SELECT\012\011 'foo' ,\012\0114\012\011",
	/* 31 */ "SELECT \012\011 'foo' ,\012\0114\012\011",
	/* 32 */ "SELECT \012\011 'foo' \012\011 ,\012\0114\012\011",
	/* 33 */ "SELECT\012\011 \012\011'foo',\012\0114\012\011",
	/* 34 */ "SELECT\012\011 \012\011'foo',\012\011 \012\0114\012\011",
	/* 35 */ "SELECT\012\011-\011'1'",
	/* 36 */ "SELECT\012\011-\011'1'\012\011",
	/* 37 */ "SELECT\012\011 -\011'1'\012\011",
	/* 38 */ "SELECT\012\011 - \011'1'",
	/* 39 */ "SELECT\012\011 -\012\011 '1'",
	/* 40 */ "SELECT\012\011 - \012\011 '1' \012\011",
	/* 41 */ "SELECT (\012  \011 + \011\011 2   / 2 \011\011)",
	/* 42 */ "SELECT (\011\011+2/2\011\011)",
	/* 43 */ "SELECT 1,\012-4",
	/* 44 */ "SELECT 1, \012-4",
	/* 45 */ "SELECT 1,\012 -4",
	/* 46 */ "SELECT 1, \012 -4",
	/* 47 */ "SELECT 'foo',\012\011-4",
	/* 48 */ "SELECT 'foo', \012\011-4",
	/* 49 */ "SELECT 'foo',\012\011 -4",
	/* 50 */ "SELECT 'foo', \012\011 -4",
	/* 51 */ "  /* comment */SELECT * FROM test.select_for_update_foo FOR UPDATE           ;",
	/* 52 */ "/* comment */ SELECT * FROM test.select_for_update_foo FOR UPDATE;       ",
	/* 53 */ "SELECT * FROM test.select_for_update_foo FOR UPDATE  ;  /* comment */",
	/* 54 */ "-- random_comment\012 SELECT * FROM test.select_for_update_foo FOR UPDATE; -- final_comment\012   ",
	/* 55 */ "  /* comment */SELECT * FROM test.select_for_update_foo FOR UPDATE  ; SELECT 1         ;",
	/* 56 */ "/* comment */ SELECT * FROM test.select_for_update_foo FOR UPDATE ;  SELECT 1;     ",
	/* 57 */ "SELECT * FROM test.select_for_update_foo FOR UPDATE  ;  /* comment */ SELECT 1     ;",
	/* 58 */ "-- random_comment\012 SELECT * FROM test.select_for_update_foo FOR UPDATE ; -- final_comment\012 SELECT 1;  -- final_comment\012  ",
	/* 59 */ "  /* comment */SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT 1         ;",
	/* 60 */ "/* comment */ SELECT * FROM test.select_for_update_foo FOR UPDATE;  SELECT 1;     ",
	/* 61 */ "SELECT * FROM test.select_for_update_foo FOR UPDATE;  /* comment */ SELECT 1     ;",
	/* 62 */ "-- random_comment\012 SELECT * FROM test.select_for_update_foo FOR UPDATE; -- final_comment\012 SELECT 1;  -- final_comment\012  ",
	/* 63 */ "select 1.1",
	/* 64 */ "select 99.1929",
	/* 65 */ "select 1.1e9",
	/* 66 */ "select 1.1e+9",
	/* 67 */ "select 1.1e-9",
	/* 68 */ "select 1.1E9",
	/* 69 */ "select 1.1E+9",
	/* 70 */ "select 1.1E-9",
	/* 71 */ "select 0x100",
	/* 72 */ "select 1 +1",
	/* 73 */ "select 1+ 1",
	/* 74 */ "select 1- 1",
	/* 75 */ "select 1 -1",
	/* 76 */ "select 1* 1",
	/* 77 */ "select 1 *1",
	/* 78 */ "select 1/ 1",
	/* 79 */ "select 1 /1",
	/* 80 */ "select 1% 1",
	/* 81 */ "select 1 %1",
	/* 82 */ "select NOW()-1",
	/* 83 */ "select NOW() - 1",
	/* 84 */ "select 1+ 1, 1 -1, 1 * 1 , 1/1 , 100 % 3",
	/* 85 */ "select 1+ 1, 1 -1,NOW()+1,1 * 1 , 1/1 , 100 % 3, NOW() - 1",
	/* 86 */ "SELECT * FROM t t1, t t2 ,t t3,t t4 LIMIT 0",
	/* 87 */ "select 1+ 1,'1 -1', 1 * 1 , '1/1 ',100 % 3",
	/* 88 */ "select 1+ 1    ,'1 -1' ,1 * 1 , '1 '  , 100 % 3",
	/* 89 */ "select   1 + 1    , '1 - 1' , 1 * 1 , '1 '  , 100 % 3      ",
	/* 90 */ "select  + 1",
	/* 91 */ "select  + 1, - 2",
	/* 92 */ "select * from t where t = \"foo\"",
	/* 93 */ "select \"1+ 1, 1 -1, 1 * 1 , 1/1 , 100 % 3\"",
	/* 94 */ "SELECT N'string', _utf8'str\\'i\012ng'",
	/* 95 */ "create table test.1_null_digests (null_c1 TEXT, c2 TEXT, c3 TEXT)",
	/* 96 */ "select * from 1_value",
	/* 97 */ "select -\"1\"",
	/* 98 */ "select +\"1\",'foo'",
	/* 99 */ "select (-'89')",
	/* 100 */ "select 10,-'89'",
	/* 101 */ "select  10, -'89' ",
	/* 102 */ "select  '10', -'89' ",
	/* 103 */ "select  10, -'89 ',+'5'",
	/* 104 */ "select ''''''''",
	/* 105 */ "select '\\''",
	/* 106 */ "select '\\\\'",
	/* 107 */ "select '''\\\\''\\''''",
	/* 108 */ "select \"\"\"\"\"\"\"\"",
	/* 109 */ "select \"\\\"\"",
	/* 110 */ "select \"\\\\\"",
	/* 111 */ "select \"\"\"\\\\\"\"\\\"\"\"\"",
	/* 112 */ "select '', '\\'', 'foo''bar\\'', '\\\\str_\\'foo'''",
	/* 113 */ "select \"\", \"\\\"\", \"foo\"\"bar\\\"\", \"\\\\str_\\\"foo\"\"\"",
	/* 114 */ "select CONCAT( -'89'+'10')",
	/* 115 */ "select CONCAT(  -'89'   +  '10' )",
	/* 116 */ "select CONCAT(- '89')",
	/* 117 */ "select * fromt t",
	/* 118 */ "select NULL",
	/* 119 */ "select nUlL",
	/* 120 */ "SELECT * FROM nulltablenull WHERE null_id IN (NULL  ,2,3, 'NULL' ,5,NulL,null,NULL8,9,10)",
	/* 121 */ "SELECT * FROM table_NULL WHERE null_id IN (NULL  ,2,3, NULL ,5,6,7,NULL8,9,10)",
	/* 122 */ "create table test.null_digests_2 (null_c1 TEXT, c2 TEXT, c3 TEXT)",
	/* 123 */ "SELECT * FROM tablename WHERE id IN (1,2,3,4)",
	/* 124 */ "SELECT * FROM tablename WHERE id IN (1,2,3,4,5,6,7,8,9,10)",
	/* 125 */ "SELECT * tablename where id IN (1,2,3,4,5,6,7,8,  AND j in (1,2,3,4,5,6  and k=1",
	/* 126 */ "INSERT INTO db.table(col1) VALUES ('val')",
	/* 127 */ "INSERT INTO db.table (col1) VALUES ('val')",
	/* 128 */ "INSERT INTO db.table( col1) VALUES ( 'val' )",
	/* 129 */ "INSERT INTO db.table  ( col1 )  VALUES ( 'val' )",
	/* 130 */ "INSERT INTO db.table (col1, col2,col3,col4) VALUES ('val',2,3,'foo')",
	/* 131 */ "INSERT INTO db.table ( col1, col2,col3,col4 ) VALUES ('val',2,3,'foo')",
	/* 132 */ "INSERT INTO db.table_25 (col1, col2,col3,col4) VALUES ('val',2,3,'foo')",
	/* 133 */ "INSERT INTO db.table1_25 ( col_121,col2121  ,col12_3, col41203_   ) VALUES ( 'val', -2, 3, 'foo' )",
	/* 134 */ "INSERT INTO db.table ( col1, col2,col3,col4, col5 ) VALUES ('val',2,3,'foo', 5 + 10, 6 - 9)",
	/* 135 */ "INSERT INTO db.table ( col1, col2,col3,col4, col5 ) VALUES ('val',1, 2,3,'foo', 5 + 10, 6 - 9)",
	/* 136 */ "INSERT INTO db.table ( col1, col2,col3,col4, col5 ) VALUES ('val',1, 2,3,'foo', 5 + 10, 6 - 9, 12, 3, 4, 5, 4,5,6)",
	/* 137 */ "INSERT INTO db.table ( col1, col2,col3,col4, col5 ) VALUES ('val',1, 2,3,'foo'), ('val2', 2,3,4,'foo2')",
	/* 138 */ "INSERT INTO db.table (col1,col2,col3) VALUES (NULL, NULL, NULL, NULL)",
	/* 139 */ "INSERT INTO db.table (col1,col2,col3) VALUES ('foooo', 'bar', 'fooo')",
	/* 140 */ "INSERT INTO db.table (col1,col2,col3) VALUES (1.23234, 9.923, 8)",
	/* 141 */ "INSERT INTO db.table (col1,col2,col3) VALUES (1.23234, 9.92381, 8.00)",
	/* 142 */ "INSERT INTO db.table (col1,col2,col3) VALUES (1,2,3),(3,5,6),(7,8,9) ON DUPLICATE KEY UPDATE col1 = VALUES(col2)",
	/* 143 */ "INSERT INTO db.table (col1,col2,col3) VALUES (?,...),(1.23912939495912302020321, 2.23891282384852012203102301203120320031102, 20340122) ON D"
		"UPLICATE KEY UPDATE col1 = VALUES(col2)",
	/* 144 */ "INSERT INTO db.table (col1,col2,col3) VALUES (?,...),('1.23912939495912302020321', '2.23891282384852012203102301203120320031102', '20340122'"
		") ON DUPLICATE KEY UPDATE col1 = VALUES(col2)",
	/* 145 */ "INSERT INTO db.table (col1,col2,col3) VALUES (-19, +29,- 29,+ 10,- 20,+ 40,- 34,- 30,+ 40, + 11, - 23,- 40, + 60)",
	/* 146 */ "INSERT INTO db.table (col1,col2,col3) VALUES (122,222,332,442,551,662,777,888,999,100,111,122,234)",
	/* 147 */ "SELECT /* keep_comment */ 1",
	/* 148 */ "SELECT /* keep_comment */ +1",
	/* 149 */ "SELECT /* keep_comment */ 1.123",
	/* 150 */ "SELECT /* keep_comment */ 0x100",
	/* 151 */ "SELECT /* keep_comment */ 1.1E-9",
	/* 152 */ "SELECT /* keep_comment */ 1.1E+9",
	/* 153 */ "SELECT /* long_comment 00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000 */ 1",
	/* 154 */ "create /* foo_comment*/table table_10_utf8_4 (\012`pk` int primary key,\012`col_bigint_undef_signed` bigint ,\012`col_bigint_undef_unsigned`"
		" bigint unsigned ,\012`col_bigint_key_signed` bigint ,\012`col_bigint_key_unsigned` bigint unsigned ,\012`col_float_undef_signed` float ,"
		"\012`col_float_undef_unsigned` float unsigned ,\012`col_float_key_signed` float ,\012`col_float_key_unsigned` float unsigned ,\012`col_doubl"
		"e_undef_signed` double ,\012`col_double_undef_unsigned` double unsigned ,\012`col_double_key_signed` double ,\012`col_double_key_unsigned` d"
		"ouble unsigned ,\012`col_decimal(40, 20)_undef_signed` decimal(40, 20) ,\012`col_decimal(40, 20)_undef_unsigned` decimal(40, 20) unsigned ,"
		"\012`col_decimal(40, 20)_key_signed` decimal(40, 20)  ,\012`col_decimal(40, 20)_key_unsigned` decimal(40, 20) unsigned ,\012`col_char(20)_un"
		"def_signed` char(20)  ,\012`col_char(20)_key_signed` char(20) ,\012`col_varchar(20)_undef_signed` varchar(20)  ,\012`col_varchar(20)_key_sig"
		"ned` varchar(20) ,\012`col_enum_undef_signed` enum('a','b','c','d','e','f','g','h','i','j','k','l','m','n','o','p','q','r','s','t','u','v','"
		"w','x','y','z') ,\012`col_enum_key_signed` enum('a','b','c','d','e','f','g','h','i','j','k','l','m','n','o','p','q','r','s','t','u','v','w',"
		"'x','y','z') ,\012key (`col_bigint_key_signed`),\012key (`col_bigint_key_unsigned`),\012key (`col_float_key_signed`),\012key (`col_float_key"
		"_unsigned`),\012key (`col_double_key_signed`),\012key (`col_double_key_unsigned`),\012key (`col_decimal(40, 20)_key_signed`),\012key (`col_d"
		"ecimal(40, 20)_key_unsigned`),\012key (`col_char(20)_key_signed`),\012key (`col_varchar(20)_key_signed`),\012key (`col_enum_key_signed`)\012"
		") character set utf8 \012partition by hash(pk)\012partitions 4",
	/* 155 */ "create /* foo_comment*/table table_10_utf8_4 (`pk` int primary key,`col_bigint_undef_signed` bigint ,`col_bigint_undef_unsigned` bigint unsi"
		"gned ,`col_bigint_key_signed` bigint ,`col_bigint_key_unsigned` bigint unsigned ,`col_float_undef_signed` float ,`col_float_undef_unsigned` "
		"float unsigned ,`col_float_key_signed` float ,`col_float_key_unsigned` float unsigned ,`col_double_undef_signed` double ,`col_double_undef_u"
		"nsigned` double unsigned ,`col_double_key_signed` double ,`col_double_key_unsigned` double unsigned ,`col_decimal(40, 20)_undef_signed` deci"
		"mal(40, 20) ,`col_decimal(40, 20)_undef_unsigned` decimal(40, 20) unsigned ,`col_decimal(40, 20)_key_signed` decimal(40, 20)  ,`col_decimal("
		"40, 20)_key_unsigned` decimal(40, 20) unsigned ,`col_char(20)_undef_signed` char(20)  ,`col_char(20)_key_signed` char(20) ,`col_varchar(20)_"
		"undef_signed` varchar(20)  ,`col_varchar(20)_key_signed` varchar(20) ,`col_enum_undef_signed` enum('a','b','c','d','e','f','g','h','i','j','"
		"k','l','m','n','o','p','q','r','s','t','u','v','w','x','y','z') ,`col_enum_key_signed` enum('a','b','c','d','e','f','g','h','i','j','k','l',"
		"'m','n','o','p','q','r','s','t','u','v','w','x','y','z') ,key (`col_bigint_key_signed`),key (`col_bigint_key_unsigned`),key (`col_float_key_"
		"signed`),key (`col_float_key_unsigned`),key (`col_double_key_signed`),key (`col_double_key_unsigned`),key (`col_decimal(40, 20)_key_signed`)"
		",key (`col_decimal(40, 20)_key_unsigned`),key (`col_char(20)_key_signed`),key (`col_varchar(20)_key_signed`),key (`col_enum_key_signed`)) ch"
		"aracter set utf8 partition by hash(pk) partitions 4",
};

static const struct digest_vector digest_vectors[] = {
	{ 0, 1, 1, 1, 0x011C3789994A9B9D, /* digest_corner_cases_1#0 mz */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,...),..." },
	{ 0, 0, 3, 10, 0xC9EC96A2B9AC5710, /* digest_corner_cases_1#0 prod */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...),(?,?,NULL,?,?),(?,?,?,...),(?,?,NULL,?,?)" },
	{ 1, 0, 3, 10, 0x672344144DC3FA3F, /* digest_corner_cases_2#0 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,Null,?,?,nUll,?,?,?,?),(?,?,?,...),(?,?,Null,?,?,nuLl,nUlL,?,nuLL),(NUll,?,NuLl,nUll,?,?,?,?"
		",nULl),(?,?,?,...,nULl,?,?),(?,?,?,?,nUll,?,?,?,?),(?,?,?,...,NuLl),(?,?,nuLl,?,?,?,...),(Null,?,?,?,?,null,?,?,?) ON DUPLICATE KEY UPDATE c"
		"ol1 = VALUES(col2)" },
	{ 2, 0, 3, 10, 0xB65AD65CD3DDEBE7, /* digest_corner_cases_3#0 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,...),(?,?,?,...),(Null,?,?,?,...),(?,?,?,...),(?,nulL,?,nUlL,nuLL,?,?,?),(?,?,NuLl,nULL,"
		"?,?,NuLl,?),(?,?,?,nULl,?,?,?,?),(?,?,?,...,nUll,?,?),(NuLL,null,nuLl,?,?,?,...) ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 3, 1, 3, 7, 0x3FC58FC58815D921, /* digest_corner_cases_4#0 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),... ON DUPL"
		"ICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 3, 0, 3, 10, 0x3DE824B939C66F11, /* digest_corner_cases_4#0 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,NuLL,?,?,?,NULL,?,?),(?,?,?,...,null,?,?),(?,NUll,NuLL,?,?,?,...),(?,?,?,...,nuLL,nulL),(N"
		"ull,?,?,?,?,Null,?,?,?),(nuLL,?,?,?,?,NuLl,?,?,?),(?,?,?,...),(?,?,?,...),(?,?,NULl,?,?,?,...) ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 4, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 4, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 4, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 5, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 5, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 5, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 6, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 6, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 6, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 7, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 7, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 7, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 8, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 8, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 8, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 9, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 9, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 9, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 10, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 10, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 10, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 11, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 11, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 11, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 12, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 12, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 12, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 13, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 13, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 13, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 14, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 14, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 14, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 15, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 15, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 15, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 16, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 16, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 16, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 17, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 17, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 17, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 18, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 18, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 18, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 19, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 19, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 19, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 20, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 20, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 20, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 21, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s3 */
		"select ?" },
	{ 21, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 s4 */
		"select ?" },
	{ 21, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#0 prod */
		"select ?" },
	{ 22, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s3 */
		"SELECT ?" },
	{ 22, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s4 */
		"SELECT ?" },
	{ 22, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 prod */
		"SELECT ?" },
	{ 23, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s3 */
		"SELECT ?" },
	{ 23, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s4 */
		"SELECT ?" },
	{ 23, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 prod */
		"SELECT ?" },
	{ 24, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s3 */
		"SELECT ?" },
	{ 24, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s4 */
		"SELECT ?" },
	{ 24, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 prod */
		"SELECT ?" },
	{ 25, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s3 */
		"SELECT ?" },
	{ 25, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s4 */
		"SELECT ?" },
	{ 25, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 prod */
		"SELECT ?" },
	{ 26, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s3 */
		"SELECT ?" },
	{ 26, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s4 */
		"SELECT ?" },
	{ 26, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 prod */
		"SELECT ?" },
	{ 27, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s3 */
		"SELECT ?" },
	{ 27, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 s4 */
		"SELECT ?" },
	{ 27, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#1 prod */
		"SELECT ?" },
	{ 28, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 28, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 28, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 29, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 29, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 29, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 30, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 30, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 30, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 31, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 31, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 31, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 32, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 32, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 32, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 33, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 33, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 33, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 34, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s3 */
		"SELECT ?,?" },
	{ 34, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 s4 */
		"SELECT ?,?" },
	{ 34, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#2 prod */
		"SELECT ?,?" },
	{ 35, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s3 */
		"SELECT ?" },
	{ 35, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s4 */
		"SELECT ?" },
	{ 35, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 prod */
		"SELECT ?" },
	{ 36, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s3 */
		"SELECT ?" },
	{ 36, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s4 */
		"SELECT ?" },
	{ 36, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 prod */
		"SELECT ?" },
	{ 37, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s3 */
		"SELECT ?" },
	{ 37, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s4 */
		"SELECT ?" },
	{ 37, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 prod */
		"SELECT ?" },
	{ 38, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s3 */
		"SELECT ?" },
	{ 38, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s4 */
		"SELECT ?" },
	{ 38, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 prod */
		"SELECT ?" },
	{ 39, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s3 */
		"SELECT ?" },
	{ 39, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s4 */
		"SELECT ?" },
	{ 39, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 prod */
		"SELECT ?" },
	{ 40, 1, 3, 0, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s3 */
		"SELECT ?" },
	{ 40, 1, 3, 1, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 s4 */
		"SELECT ?" },
	{ 40, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#3 prod */
		"SELECT ?" },
	{ 41, 0, 3, 10, 0xAE7DA1340AAD1E6F, /* regular_tokenizer_digests#4 prod */
		"SELECT (?/?)" },
	{ 42, 0, 3, 10, 0xAE7DA1340AAD1E6F, /* regular_tokenizer_digests#5 prod */
		"SELECT (?/?)" },
	{ 42, 1, 3, 0, 0xAE7DA1340AAD1E6F, /* regular_tokenizer_digests#6 s3 */
		"SELECT (?/?)" },
	{ 42, 1, 3, 1, 0xAE7DA1340AAD1E6F, /* regular_tokenizer_digests#6 s4 */
		"SELECT (?/?)" },
	{ 41, 1, 3, 0, 0xAE7DA1340AAD1E6F, /* regular_tokenizer_digests#6 s3 */
		"SELECT (?/?)" },
	{ 41, 1, 3, 1, 0xAE7DA1340AAD1E6F, /* regular_tokenizer_digests#6 s4 */
		"SELECT (?/?)" },
	{ 43, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 43, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 43, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 44, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 44, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 44, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 45, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 45, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 45, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 46, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 46, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 46, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 47, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 47, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 47, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 48, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 48, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 48, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 49, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 49, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 49, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 50, 1, 3, 0, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s3 */
		"SELECT ?,?" },
	{ 50, 1, 3, 1, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 s4 */
		"SELECT ?,?" },
	{ 50, 0, 3, 10, 0xB4E6863D3FF3467C, /* regular_tokenizer_digests#7 prod */
		"SELECT ?,?" },
	{ 51, 1, 3, 0, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 51, 1, 3, 1, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 51, 0, 3, 10, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 52, 1, 3, 0, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 52, 1, 3, 1, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 52, 0, 3, 10, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 53, 1, 3, 0, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 53, 1, 3, 1, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 53, 0, 3, 10, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 54, 1, 3, 0, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 54, 1, 3, 1, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 54, 0, 3, 10, 0xBD838245EF317EF3, /* regular_tokenizer_digests#8 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE" },
	{ 55, 1, 3, 0, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 55, 1, 3, 1, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 55, 0, 3, 10, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 56, 1, 3, 0, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 56, 1, 3, 1, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 56, 0, 3, 10, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 57, 1, 3, 0, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 57, 1, 3, 1, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 57, 0, 3, 10, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 58, 1, 3, 0, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 58, 1, 3, 1, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 58, 0, 3, 10, 0x9290DF9A99078221, /* regular_tokenizer_digests#9 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE ; SELECT ?" },
	{ 59, 1, 3, 0, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 59, 1, 3, 1, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 59, 0, 3, 10, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 60, 1, 3, 0, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 60, 1, 3, 1, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 60, 0, 3, 10, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 61, 1, 3, 0, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 61, 1, 3, 1, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 61, 0, 3, 10, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 62, 1, 3, 0, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s3 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 62, 1, 3, 1, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 s4 */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 62, 0, 3, 10, 0x23FE4F837B99E33B, /* regular_tokenizer_digests#10 prod */
		"SELECT * FROM test.select_for_update_foo FOR UPDATE; SELECT ?" },
	{ 63, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 64, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 65, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 66, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 67, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 68, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 69, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 70, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 71, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#11 prod */
		"select ?" },
	{ 72, 1, 3, 0, 0xFFBE1466D069B623, /* regular_tokenizer_digests#12 s3 */
		"select ?+?" },
	{ 72, 1, 3, 1, 0xFFBE1466D069B623, /* regular_tokenizer_digests#12 s4 */
		"select ?+?" },
	{ 72, 0, 3, 10, 0xFFBE1466D069B623, /* regular_tokenizer_digests#12 prod */
		"select ?+?" },
	{ 73, 1, 3, 0, 0xFFBE1466D069B623, /* regular_tokenizer_digests#13 s3 */
		"select ?+?" },
	{ 73, 1, 3, 1, 0xFFBE1466D069B623, /* regular_tokenizer_digests#13 s4 */
		"select ?+?" },
	{ 73, 0, 3, 10, 0xFFBE1466D069B623, /* regular_tokenizer_digests#13 prod */
		"select ?+?" },
	{ 74, 1, 3, 0, 0xD1839FF345893590, /* regular_tokenizer_digests#14 s3 */
		"select ?-?" },
	{ 74, 1, 3, 1, 0xD1839FF345893590, /* regular_tokenizer_digests#14 s4 */
		"select ?-?" },
	{ 74, 0, 3, 10, 0xD1839FF345893590, /* regular_tokenizer_digests#14 prod */
		"select ?-?" },
	{ 75, 1, 3, 0, 0xD1839FF345893590, /* regular_tokenizer_digests#15 s3 */
		"select ?-?" },
	{ 75, 1, 3, 1, 0xD1839FF345893590, /* regular_tokenizer_digests#15 s4 */
		"select ?-?" },
	{ 75, 0, 3, 10, 0xD1839FF345893590, /* regular_tokenizer_digests#15 prod */
		"select ?-?" },
	{ 76, 1, 3, 0, 0x71D4A3D0A92D3143, /* regular_tokenizer_digests#16 s3 */
		"select ?*?" },
	{ 76, 1, 3, 1, 0x71D4A3D0A92D3143, /* regular_tokenizer_digests#16 s4 */
		"select ?*?" },
	{ 76, 0, 3, 10, 0x71D4A3D0A92D3143, /* regular_tokenizer_digests#16 prod */
		"select ?*?" },
	{ 77, 1, 3, 0, 0x71D4A3D0A92D3143, /* regular_tokenizer_digests#17 s3 */
		"select ?*?" },
	{ 77, 1, 3, 1, 0x71D4A3D0A92D3143, /* regular_tokenizer_digests#17 s4 */
		"select ?*?" },
	{ 77, 0, 3, 10, 0x71D4A3D0A92D3143, /* regular_tokenizer_digests#17 prod */
		"select ?*?" },
	{ 78, 1, 3, 0, 0xC6066AFEEEB21B8B, /* regular_tokenizer_digests#18 s3 */
		"select ?/?" },
	{ 78, 1, 3, 1, 0xC6066AFEEEB21B8B, /* regular_tokenizer_digests#18 s4 */
		"select ?/?" },
	{ 78, 0, 3, 10, 0xC6066AFEEEB21B8B, /* regular_tokenizer_digests#18 prod */
		"select ?/?" },
	{ 79, 1, 3, 0, 0xC6066AFEEEB21B8B, /* regular_tokenizer_digests#19 s3 */
		"select ?/?" },
	{ 79, 1, 3, 1, 0xC6066AFEEEB21B8B, /* regular_tokenizer_digests#19 s4 */
		"select ?/?" },
	{ 79, 0, 3, 10, 0xC6066AFEEEB21B8B, /* regular_tokenizer_digests#19 prod */
		"select ?/?" },
	{ 80, 1, 3, 0, 0xFB030134990E1D8D, /* regular_tokenizer_digests#20 s3 */
		"select ?%?" },
	{ 80, 1, 3, 1, 0xFB030134990E1D8D, /* regular_tokenizer_digests#20 s4 */
		"select ?%?" },
	{ 80, 0, 3, 10, 0xFB030134990E1D8D, /* regular_tokenizer_digests#20 prod */
		"select ?%?" },
	{ 81, 1, 3, 0, 0xFB030134990E1D8D, /* regular_tokenizer_digests#21 s3 */
		"select ?%?" },
	{ 81, 1, 3, 1, 0xFB030134990E1D8D, /* regular_tokenizer_digests#21 s4 */
		"select ?%?" },
	{ 81, 0, 3, 10, 0xFB030134990E1D8D, /* regular_tokenizer_digests#21 prod */
		"select ?%?" },
	{ 82, 1, 3, 0, 0x8BCE6CFBBFEAD8B8, /* regular_tokenizer_digests#22 s3 */
		"select NOW()-?" },
	{ 82, 1, 3, 1, 0x8BCE6CFBBFEAD8B8, /* regular_tokenizer_digests#22 s4 */
		"select NOW()-?" },
	{ 82, 0, 3, 10, 0x8BCE6CFBBFEAD8B8, /* regular_tokenizer_digests#22 prod */
		"select NOW()-?" },
	{ 83, 1, 3, 0, 0xA5916F7DCC697108, /* regular_tokenizer_digests#23 s3 */
		"select NOW() -?" },
	{ 83, 1, 3, 1, 0xA5916F7DCC697108, /* regular_tokenizer_digests#23 s4 */
		"select NOW() -?" },
	{ 83, 0, 3, 10, 0xA5916F7DCC697108, /* regular_tokenizer_digests#23 prod */
		"select NOW() -?" },
	{ 84, 1, 3, 0, 0xBB55D8100546BEA8, /* regular_tokenizer_digests#24 s3 */
		"select ?+?,?-?,?*?,?/?,?%?" },
	{ 84, 1, 3, 1, 0xBB55D8100546BEA8, /* regular_tokenizer_digests#24 s4 */
		"select ?+?,?-?,?*?,?/?,?%?" },
	{ 84, 0, 3, 10, 0xBB55D8100546BEA8, /* regular_tokenizer_digests#24 prod */
		"select ?+?,?-?,?*?,?/?,?%?" },
	{ 85, 1, 3, 0, 0x5C8C4A2D9010F896, /* regular_tokenizer_digests#25 s3 */
		"select ?+?,?-?,NOW()+?,?*?,?/?,?%?,NOW() -?" },
	{ 85, 1, 3, 1, 0x5C8C4A2D9010F896, /* regular_tokenizer_digests#25 s4 */
		"select ?+?,?-?,NOW()+?,?*?,?/?,?%?,NOW() -?" },
	{ 85, 0, 3, 10, 0x5C8C4A2D9010F896, /* regular_tokenizer_digests#25 prod */
		"select ?+?,?-?,NOW()+?,?*?,?/?,?%?,NOW() -?" },
	{ 86, 1, 3, 0, 0xE81D4494416907F8, /* regular_tokenizer_digests#26 s3 */
		"SELECT * FROM t t1,t t2,t t3,t t4 LIMIT ?" },
	{ 86, 1, 3, 1, 0xE81D4494416907F8, /* regular_tokenizer_digests#26 s4 */
		"SELECT * FROM t t1,t t2,t t3,t t4 LIMIT ?" },
	{ 86, 0, 3, 10, 0xE81D4494416907F8, /* regular_tokenizer_digests#26 prod */
		"SELECT * FROM t t1,t t2,t t3,t t4 LIMIT ?" },
	{ 87, 1, 3, 0, 0xD03713D8896AA648, /* regular_tokenizer_digests#27 s3 */
		"select ?+?,?,?*?,?,?%?" },
	{ 87, 1, 3, 1, 0xD03713D8896AA648, /* regular_tokenizer_digests#27 s4 */
		"select ?+?,?,?*?,?,?%?" },
	{ 87, 0, 3, 10, 0xD03713D8896AA648, /* regular_tokenizer_digests#27 prod */
		"select ?+?,?,?*?,?,?%?" },
	{ 88, 1, 3, 0, 0xD03713D8896AA648, /* regular_tokenizer_digests#28 s3 */
		"select ?+?,?,?*?,?,?%?" },
	{ 88, 1, 3, 1, 0xD03713D8896AA648, /* regular_tokenizer_digests#28 s4 */
		"select ?+?,?,?*?,?,?%?" },
	{ 88, 0, 3, 10, 0xD03713D8896AA648, /* regular_tokenizer_digests#28 prod */
		"select ?+?,?,?*?,?,?%?" },
	{ 89, 1, 3, 0, 0xD03713D8896AA648, /* regular_tokenizer_digests#29 s3 */
		"select ?+?,?,?*?,?,?%?" },
	{ 89, 1, 3, 1, 0xD03713D8896AA648, /* regular_tokenizer_digests#29 s4 */
		"select ?+?,?,?*?,?,?%?" },
	{ 89, 0, 3, 10, 0xD03713D8896AA648, /* regular_tokenizer_digests#29 prod */
		"select ?+?,?,?*?,?,?%?" },
	{ 90, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#30 s3 */
		"select ?" },
	{ 90, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#30 s4 */
		"select ?" },
	{ 90, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#30 prod */
		"select ?" },
	{ 91, 1, 3, 0, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#31 s3 */
		"select ?,?" },
	{ 91, 1, 3, 1, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#31 s4 */
		"select ?,?" },
	{ 91, 0, 3, 10, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#31 prod */
		"select ?,?" },
	{ 92, 1, 3, 0, 0x17BD4E28ABC06B5E, /* regular_tokenizer_digests#32 s3 */
		"select * from t where t = ?" },
	{ 92, 1, 3, 1, 0x17BD4E28ABC06B5E, /* regular_tokenizer_digests#32 s4 */
		"select * from t where t = ?" },
	{ 92, 0, 3, 10, 0x17BD4E28ABC06B5E, /* regular_tokenizer_digests#32 prod */
		"select * from t where t = ?" },
	{ 93, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#33 s3 */
		"select ?" },
	{ 93, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#33 s4 */
		"select ?" },
	{ 93, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#33 prod */
		"select ?" },
	{ 94, 1, 3, 0, 0x0BB0AD1B452965AD, /* regular_tokenizer_digests#34 s3 */
		"SELECT N?,_utf8?" },
	{ 94, 1, 3, 1, 0x0BB0AD1B452965AD, /* regular_tokenizer_digests#34 s4 */
		"SELECT N?,_utf8?" },
	{ 94, 0, 3, 10, 0x0BB0AD1B452965AD, /* regular_tokenizer_digests#34 prod */
		"SELECT N?,_utf8?" },
	{ 95, 1, 3, 0, 0x713325CF016F26ED, /* regular_tokenizer_digests#35 s3 */
		"create table test.1_null_digests (null_c1 TEXT,c2 TEXT,c3 TEXT)" },
	{ 95, 1, 3, 1, 0x713325CF016F26ED, /* regular_tokenizer_digests#35 s4 */
		"create table test.1_null_digests (null_c1 TEXT,c2 TEXT,c3 TEXT)" },
	{ 95, 0, 3, 10, 0x713325CF016F26ED, /* regular_tokenizer_digests#35 prod */
		"create table test.1_null_digests (null_c1 TEXT,c2 TEXT,c3 TEXT)" },
	{ 96, 1, 3, 0, 0xF48DB2DDDC4EC663, /* regular_tokenizer_digests#36 s3 */
		"select * from 1_value" },
	{ 96, 1, 3, 1, 0xF48DB2DDDC4EC663, /* regular_tokenizer_digests#36 s4 */
		"select * from 1_value" },
	{ 96, 0, 3, 10, 0xF48DB2DDDC4EC663, /* regular_tokenizer_digests#36 prod */
		"select * from 1_value" },
	{ 97, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#37 s3 */
		"select ?" },
	{ 97, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#37 s4 */
		"select ?" },
	{ 97, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#37 prod */
		"select ?" },
	{ 98, 1, 3, 0, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#38 s3 */
		"select ?,?" },
	{ 98, 1, 3, 1, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#38 s4 */
		"select ?,?" },
	{ 98, 0, 3, 10, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#38 prod */
		"select ?,?" },
	{ 99, 1, 3, 0, 0x49436FE660DCDD90, /* regular_tokenizer_digests#39 s3 */
		"select (?)" },
	{ 99, 1, 3, 1, 0x49436FE660DCDD90, /* regular_tokenizer_digests#39 s4 */
		"select (?)" },
	{ 99, 0, 3, 10, 0x49436FE660DCDD90, /* regular_tokenizer_digests#39 prod */
		"select (?)" },
	{ 100, 1, 3, 0, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#40 s3 */
		"select ?,?" },
	{ 100, 1, 3, 1, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#40 s4 */
		"select ?,?" },
	{ 100, 0, 3, 10, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#40 prod */
		"select ?,?" },
	{ 101, 1, 3, 0, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#41 s3 */
		"select ?,?" },
	{ 101, 1, 3, 1, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#41 s4 */
		"select ?,?" },
	{ 101, 0, 3, 10, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#41 prod */
		"select ?,?" },
	{ 102, 1, 3, 0, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#42 s3 */
		"select ?,?" },
	{ 102, 1, 3, 1, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#42 s4 */
		"select ?,?" },
	{ 102, 0, 3, 10, 0xF22FC84DB406C80F, /* regular_tokenizer_digests#42 prod */
		"select ?,?" },
	{ 103, 1, 3, 0, 0x5C5D628E3CD76615, /* regular_tokenizer_digests#43 s3 */
		"select ?,?,?" },
	{ 103, 1, 3, 1, 0x5C5D628E3CD76615, /* regular_tokenizer_digests#43 s4 */
		"select ?,?,?" },
	{ 103, 0, 3, 10, 0x5C5D628E3CD76615, /* regular_tokenizer_digests#43 prod */
		"select ?,?,?" },
	{ 104, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 104, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 105, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 105, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 106, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 106, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 107, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 107, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 108, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 108, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 109, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 109, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 110, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 110, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 111, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 s3 */
		"select ?" },
	{ 111, 0, 3, 10, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#44 prod */
		"select ?" },
	{ 112, 1, 3, 0, 0x1D0CAEA4B100E1C0, /* regular_tokenizer_digests#45 s3 */
		"select ?,?,?,?" },
	{ 112, 0, 3, 10, 0x1D0CAEA4B100E1C0, /* regular_tokenizer_digests#45 prod */
		"select ?,?,?,?" },
	{ 113, 1, 3, 0, 0x1D0CAEA4B100E1C0, /* regular_tokenizer_digests#45 s3 */
		"select ?,?,?,?" },
	{ 113, 0, 3, 10, 0x1D0CAEA4B100E1C0, /* regular_tokenizer_digests#45 prod */
		"select ?,?,?,?" },
	{ 114, 1, 3, 0, 0x759BD9B395A1292E, /* regular_tokenizer_digests#46 s3 */
		"select CONCAT(?+?)" },
	{ 114, 1, 3, 1, 0x759BD9B395A1292E, /* regular_tokenizer_digests#46 s4 */
		"select CONCAT(?+?)" },
	{ 114, 0, 3, 10, 0x759BD9B395A1292E, /* regular_tokenizer_digests#46 prod */
		"select CONCAT(?+?)" },
	{ 115, 1, 3, 0, 0x759BD9B395A1292E, /* regular_tokenizer_digests#48 s3 */
		"select CONCAT(?+?)" },
	{ 115, 1, 3, 1, 0x759BD9B395A1292E, /* regular_tokenizer_digests#48 s4 */
		"select CONCAT(?+?)" },
	{ 115, 0, 3, 10, 0x759BD9B395A1292E, /* regular_tokenizer_digests#48 prod */
		"select CONCAT(?+?)" },
	{ 116, 1, 3, 0, 0x6E7AD270CECEA09F, /* regular_tokenizer_digests#49 s3 */
		"select CONCAT(?)" },
	{ 116, 1, 3, 1, 0x6E7AD270CECEA09F, /* regular_tokenizer_digests#49 s4 */
		"select CONCAT(?)" },
	{ 116, 0, 3, 10, 0x6E7AD270CECEA09F, /* regular_tokenizer_digests#49 prod */
		"select CONCAT(?)" },
	{ 117, 1, 3, 0, 0xD860F5FCEC624C51, /* regular_tokenizer_digests#50 s3 */
		"select * fromt t" },
	{ 117, 1, 3, 1, 0xD860F5FCEC624C51, /* regular_tokenizer_digests#50 s4 */
		"select * fromt t" },
	{ 117, 0, 3, 10, 0xD860F5FCEC624C51, /* regular_tokenizer_digests#50 prod */
		"select * fromt t" },
	{ 118, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#51 s3 */
		"select ?" },
	{ 118, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#51 s4 */
		"select ?" },
	{ 118, 0, 3, 10, 0x3CA7B449EEC70294, /* regular_tokenizer_digests#51 prod */
		"select NULL" },
	{ 119, 1, 3, 0, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#52 s3 */
		"select ?" },
	{ 119, 1, 3, 1, 0x1E092DAEFFBBF262, /* regular_tokenizer_digests#52 s4 */
		"select ?" },
	{ 119, 0, 3, 10, 0x50C760F41C3EF028, /* regular_tokenizer_digests#52 prod */
		"select nUlL" },
	{ 120, 1, 3, 0, 0x99E1712FCAE3B0D3, /* regular_tokenizer_digests#53 s3 */
		"SELECT * FROM nulltablenull WHERE null_id IN (?,?,?,...,NULL8,?,?)" },
	{ 120, 1, 3, 1, 0x99E1712FCAE3B0D3, /* regular_tokenizer_digests#53 s4 */
		"SELECT * FROM nulltablenull WHERE null_id IN (?,?,?,...,NULL8,?,?)" },
	{ 120, 0, 3, 10, 0xD1EF054F7DC9324A, /* regular_tokenizer_digests#53 prod */
		"SELECT * FROM nulltablenull WHERE null_id IN (NULL,?,?,?,?,NulL,null,NULL8,?,?)" },
	{ 121, 1, 3, 0, 0x51FFCAE174EA1194, /* regular_tokenizer_digests#54 s3 */
		"SELECT * FROM table_NULL WHERE null_id IN (?,?,?,...,NULL8,?,?)" },
	{ 121, 1, 3, 1, 0x51FFCAE174EA1194, /* regular_tokenizer_digests#54 s4 */
		"SELECT * FROM table_NULL WHERE null_id IN (?,?,?,...,NULL8,?,?)" },
	{ 121, 0, 3, 10, 0x1324FA983C016ED8, /* regular_tokenizer_digests#54 prod */
		"SELECT * FROM table_NULL WHERE null_id IN (NULL,?,?,NULL,?,?,?,NULL8,?,?)" },
	{ 122, 1, 3, 0, 0xE68806F80B148469, /* regular_tokenizer_digests#55 s3 */
		"create table test.null_digests_2 (null_c1 TEXT,c2 TEXT,c3 TEXT)" },
	{ 122, 1, 3, 1, 0xE68806F80B148469, /* regular_tokenizer_digests#55 s4 */
		"create table test.null_digests_2 (null_c1 TEXT,c2 TEXT,c3 TEXT)" },
	{ 122, 0, 3, 10, 0xE68806F80B148469, /* regular_tokenizer_digests#55 prod */
		"create table test.null_digests_2 (null_c1 TEXT,c2 TEXT,c3 TEXT)" },
	{ 123, 1, 3, 0, 0x824E49143F95912F, /* regular_tokenizer_digests#56 s3 */
		"SELECT * FROM tablename WHERE id IN (?,?,?,?)" },
	{ 123, 1, 3, 1, 0x824E49143F95912F, /* regular_tokenizer_digests#56 s4 */
		"SELECT * FROM tablename WHERE id IN (?,?,?,?)" },
	{ 123, 0, 3, 10, 0x824E49143F95912F, /* regular_tokenizer_digests#56 prod */
		"SELECT * FROM tablename WHERE id IN (?,?,?,?)" },
	{ 124, 1, 3, 0, 0x1B2AC270C5E0D9FE, /* regular_tokenizer_digests#57 s3 */
		"SELECT * FROM tablename WHERE id IN (?,?,?,...)" },
	{ 124, 1, 3, 1, 0x1B2AC270C5E0D9FE, /* regular_tokenizer_digests#57 s4 */
		"SELECT * FROM tablename WHERE id IN (?,?,?,...)" },
	{ 124, 0, 3, 10, 0x1B2AC270C5E0D9FE, /* regular_tokenizer_digests#57 prod */
		"SELECT * FROM tablename WHERE id IN (?,?,?,...)" },
	{ 125, 1, 3, 0, 0xDF25B0DDAF0CAB14, /* regular_tokenizer_digests#58 s3 */
		"SELECT * tablename where id IN (?,?,?,...,AND j in (?,?,?,...,? and k=?" },
	{ 125, 1, 3, 1, 0xDF25B0DDAF0CAB14, /* regular_tokenizer_digests#58 s4 */
		"SELECT * tablename where id IN (?,?,?,...,AND j in (?,?,?,...,? and k=?" },
	{ 125, 0, 3, 10, 0xDF25B0DDAF0CAB14, /* regular_tokenizer_digests#58 prod */
		"SELECT * tablename where id IN (?,?,?,...,AND j in (?,?,?,...,? and k=?" },
	{ 126, 1, 3, 0, 0x7E8854C8E5CD5C46, /* regular_tokenizer_digests#59 s3 */
		"INSERT INTO db.table(col1) VALUES (?)" },
	{ 126, 1, 3, 1, 0x7E8854C8E5CD5C46, /* regular_tokenizer_digests#59 s4 */
		"INSERT INTO db.table(col1) VALUES (?)" },
	{ 126, 0, 3, 10, 0x7E8854C8E5CD5C46, /* regular_tokenizer_digests#59 prod */
		"INSERT INTO db.table(col1) VALUES (?)" },
	{ 127, 1, 3, 0, 0x0122483998B06CEE, /* regular_tokenizer_digests#60 s3 */
		"INSERT INTO db.table (col1) VALUES (?)" },
	{ 127, 1, 3, 1, 0x0122483998B06CEE, /* regular_tokenizer_digests#60 s4 */
		"INSERT INTO db.table (col1) VALUES (?)" },
	{ 127, 0, 3, 10, 0x0122483998B06CEE, /* regular_tokenizer_digests#60 prod */
		"INSERT INTO db.table (col1) VALUES (?)" },
	{ 128, 1, 3, 0, 0x7E8854C8E5CD5C46, /* regular_tokenizer_digests#61 s3 */
		"INSERT INTO db.table(col1) VALUES (?)" },
	{ 128, 1, 3, 1, 0x7E8854C8E5CD5C46, /* regular_tokenizer_digests#61 s4 */
		"INSERT INTO db.table(col1) VALUES (?)" },
	{ 128, 0, 3, 10, 0x7E8854C8E5CD5C46, /* regular_tokenizer_digests#61 prod */
		"INSERT INTO db.table(col1) VALUES (?)" },
	{ 129, 1, 3, 0, 0x0122483998B06CEE, /* regular_tokenizer_digests#63 s3 */
		"INSERT INTO db.table (col1) VALUES (?)" },
	{ 129, 1, 3, 1, 0x0122483998B06CEE, /* regular_tokenizer_digests#63 s4 */
		"INSERT INTO db.table (col1) VALUES (?)" },
	{ 129, 0, 3, 10, 0x0122483998B06CEE, /* regular_tokenizer_digests#63 prod */
		"INSERT INTO db.table (col1) VALUES (?)" },
	{ 130, 1, 3, 0, 0xF16556FFE973EBAE, /* regular_tokenizer_digests#64 s3 */
		"INSERT INTO db.table (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 130, 1, 3, 1, 0xF16556FFE973EBAE, /* regular_tokenizer_digests#64 s4 */
		"INSERT INTO db.table (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 130, 0, 3, 10, 0xF16556FFE973EBAE, /* regular_tokenizer_digests#64 prod */
		"INSERT INTO db.table (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 131, 1, 3, 0, 0xF16556FFE973EBAE, /* regular_tokenizer_digests#65 s3 */
		"INSERT INTO db.table (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 131, 1, 3, 1, 0xF16556FFE973EBAE, /* regular_tokenizer_digests#65 s4 */
		"INSERT INTO db.table (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 131, 0, 3, 10, 0xF16556FFE973EBAE, /* regular_tokenizer_digests#65 prod */
		"INSERT INTO db.table (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 132, 1, 3, 0, 0xDE748FF16AA21336, /* regular_tokenizer_digests#66 s3 */
		"INSERT INTO db.table_25 (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 132, 1, 3, 1, 0xDE748FF16AA21336, /* regular_tokenizer_digests#66 s4 */
		"INSERT INTO db.table_25 (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 132, 0, 3, 10, 0xDE748FF16AA21336, /* regular_tokenizer_digests#66 prod */
		"INSERT INTO db.table_25 (col1,col2,col3,col4) VALUES (?,?,?,?)" },
	{ 133, 1, 3, 0, 0x30554608DD3D4557, /* regular_tokenizer_digests#67 s3 */
		"INSERT INTO db.table1_25 (col_121,col2121,col12_3,col41203_) VALUES (?,?,?,?)" },
	{ 133, 1, 3, 1, 0x30554608DD3D4557, /* regular_tokenizer_digests#67 s4 */
		"INSERT INTO db.table1_25 (col_121,col2121,col12_3,col41203_) VALUES (?,?,?,?)" },
	{ 133, 0, 3, 10, 0x30554608DD3D4557, /* regular_tokenizer_digests#67 prod */
		"INSERT INTO db.table1_25 (col_121,col2121,col12_3,col41203_) VALUES (?,?,?,?)" },
	{ 134, 1, 3, 0, 0xAB46591E7697C021, /* regular_tokenizer_digests#68 s3 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,?,?+?,?-?)" },
	{ 134, 1, 3, 1, 0xAB46591E7697C021, /* regular_tokenizer_digests#68 s4 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,?,?+?,?-?)" },
	{ 134, 0, 3, 10, 0xAB46591E7697C021, /* regular_tokenizer_digests#68 prod */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,?,?+?,?-?)" },
	{ 135, 1, 3, 0, 0xB2B03172EEFCC598, /* regular_tokenizer_digests#69 s3 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...,?+?,?-?)" },
	{ 135, 1, 3, 1, 0xB2B03172EEFCC598, /* regular_tokenizer_digests#69 s4 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...,?+?,?-?)" },
	{ 135, 0, 3, 10, 0xB2B03172EEFCC598, /* regular_tokenizer_digests#69 prod */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...,?+?,?-?)" },
	{ 136, 1, 3, 0, 0xF53D2353F265DB90, /* regular_tokenizer_digests#70 s3 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...,?+?,?-?,?,?,?,...)" },
	{ 136, 0, 3, 10, 0xF53D2353F265DB90, /* regular_tokenizer_digests#70 prod */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...,?+?,?-?,?,?,?,...)" },
	{ 137, 1, 3, 0, 0x9F425763212BD5A7, /* regular_tokenizer_digests#71 s3 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...),(?,?,?,...)" },
	{ 137, 1, 3, 1, 0x3BE97FA3C6353B56, /* regular_tokenizer_digests#71 s4 */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...),..." },
	{ 137, 0, 3, 10, 0x9F425763212BD5A7, /* regular_tokenizer_digests#71 prod */
		"INSERT INTO db.table (col1,col2,col3,col4,col5) VALUES (?,?,?,...),(?,?,?,...)" },
	{ 138, 1, 1, 1, 0xD351E37F0D3FD7B1, /* regular_tokenizer_digests#72 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...)" },
	{ 138, 0, 3, 10, 0xB255769699502748, /* regular_tokenizer_digests#72 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (NULL,NULL,NULL,NULL)" },
	{ 139, 1, 1, 1, 0xD351E37F0D3FD7B1, /* regular_tokenizer_digests#72 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...)" },
	{ 139, 0, 3, 10, 0xE1904098F3F07646, /* regular_tokenizer_digests#72 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?)" },
	{ 140, 1, 1, 1, 0xD351E37F0D3FD7B1, /* regular_tokenizer_digests#72 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...)" },
	{ 140, 0, 3, 10, 0xE1904098F3F07646, /* regular_tokenizer_digests#72 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?)" },
	{ 141, 1, 1, 1, 0xD351E37F0D3FD7B1, /* regular_tokenizer_digests#74 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...)" },
	{ 141, 0, 3, 10, 0xE1904098F3F07646, /* regular_tokenizer_digests#74 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?)" },
	{ 142, 1, 1, 1, 0xF5DF1ECE9CFABB5C, /* regular_tokenizer_digests#76 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...),... ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 142, 0, 3, 10, 0xCE66E6EF006705EC, /* regular_tokenizer_digests#76 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?),(?,?,?),(?,?,?) ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 143, 1, 1, 1, 0xF5DF1ECE9CFABB5C, /* regular_tokenizer_digests#78 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...),... ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 143, 0, 3, 10, 0x94658DD70A573AB5, /* regular_tokenizer_digests#78 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...),(?,?,?) ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 144, 1, 1, 1, 0xF5DF1ECE9CFABB5C, /* regular_tokenizer_digests#79 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...),... ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 144, 0, 3, 10, 0x94658DD70A573AB5, /* regular_tokenizer_digests#79 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,...),(?,?,?) ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 145, 1, 11, 1, 0xD09EFF2CD15052DD, /* regular_tokenizer_digests#80 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,?,?,?,?,?,?,?,?,...)" },
	{ 145, 0, 3, 10, 0x7DFFEA71E8942667, /* regular_tokenizer_digests#80 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,...)" },
	{ 146, 0, 3, 10, 0x7DFFEA71E8942667, /* regular_tokenizer_digests#81 prod */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,...)" },
	{ 146, 1, 8, 1, 0xFC3C4F7CE12ED598, /* regular_tokenizer_digests#82 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,?,?,?,?,?,...)" },
	{ 147, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#84 prod */
		"SELECT ?" },
	{ 148, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#84 prod */
		"SELECT ?" },
	{ 149, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#84 prod */
		"SELECT ?" },
	{ 150, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#84 prod */
		"SELECT ?" },
	{ 151, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#84 prod */
		"SELECT ?" },
	{ 152, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#84 prod */
		"SELECT ?" },
	{ 153, 0, 3, 10, 0x1C46AE529DD5A40E, /* regular_tokenizer_digests#85 prod */
		"SELECT ?" },
	{ 154, 1, 0, 0, 0xDFE2BCDC2250D5F2, /* regular_tokenizer_digests#87 mz */
		"create table table_10_utf8_4 (`pk` int primary key,`col_bigint_undef_signed` bigint,`col_bigint_undef_unsigned` bigint unsigned,`col_bigint_"
		"key_signed` bigint,`col_bigint_key_unsigned` bigint unsigned,`col_float_undef_signed` float,`col_float_undef_unsigned` float unsigned,`col_f"
		"loat_key_signed` float,`col_float_key_unsigned` float unsigned,`col_double_undef_signed` double,`col_double_undef_unsigned` double unsigned,"
		"`col_double_key_signed` double,`col_double_key_unsigned` double unsigned,`col_decimal(?,?)_undef_signed` decimal(?,?),`col_decimal(?,?)_unde"
		"f_unsigned` decimal(?,?) unsigned,`col_decimal(?,?)_key_signed` decimal(?,?),`col_decimal(?,?)_key_unsigned` decimal(?,?) unsigned,`col_char"
		"(?)_undef_signed` char(?),`col_char(?)_key_signed` char(?),`col_varchar(?)_undef_signed` varchar(?),`col_varchar(?)_key_signed` varchar(?),`"
		"col_enum_undef_signed` enum(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?),`col_enum_key_signed` enum(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		"?,?,?,?,?,?,?,?,?,?),key (`col_bigint_key_signed`),key (`col_bigint_key_unsigned`),key (`col_float_key_signed`),key (`col_float_key_unsigned"
		"`),key (`col_double_key_signed`),key (`col_double_key_unsigned`),key (`col_decimal(?,?)_key_signed`),key (`col_decimal(?,?)_key_unsigned`),k"
		"ey (`col_char(?)_key_signed`),key (`col_varchar(?)_key_signed`),key (`col_enum_key_signed`)) character set utf8 partition by hash(pk) partit"
		"ions ?" },
	{ 154, 1, 1, 1, 0x1B988CBBE52C2B4A, /* regular_tokenizer_digests#87 mz */
		"create table table_10_utf8_4 (`pk` int primary key,`col_bigint_undef_signed` bigint,`col_bigint_undef_unsigned` bigint unsigned,`col_bigint_"
		"key_signed` bigint,`col_bigint_key_unsigned` bigint unsigned,`col_float_undef_signed` float,`col_float_undef_unsigned` float unsigned,`col_f"
		"loat_key_signed` float,`col_float_key_unsigned` float unsigned,`col_double_undef_signed` double,`col_double_undef_unsigned` double unsigned,"
		"`col_double_key_signed` double,`col_double_key_unsigned` double unsigned,`col_decimal(?,?)_undef_signed` decimal(?,?),`col_decimal(?,?)_unde"
		"f_unsigned` decimal(?,?) unsigned,`col_decimal(?,?)_key_signed` decimal(?,?),`col_decimal(?,?)_key_unsigned` decimal(?,?) unsigned,`col_char"
		"(?)_undef_signed` char(?),`col_char(?)_key_signed` char(?),`col_varchar(?)_undef_signed` varchar(?),`col_varchar(?)_key_signed` varchar(?),`"
		"col_enum_undef_signed` enum(?,...),`col_enum_key_signed` enum(?,...),key (`col_bigint_key_signed`),key (`col_bigint_key_unsigned`),key (`col"
		"_float_key_signed`),key (`col_float_key_unsigned`),key (`col_double_key_signed`),key (`col_double_key_unsigned`),key (`col_decimal(?,?)_key_"
		"signed`),key (`col_decimal(?,?)_key_unsigned`),key (`col_char(?)_key_signed`),key (`col_varchar(?)_key_signed`),key (`col_enum_key_signed`))"
		" character set utf8 partition by hash(pk) partitions ?" },
	{ 154, 0, 3, 10, 0xC3BFD4C1FAA94C65, /* regular_tokenizer_digests#87 prod */
		"create table table_10_utf8_4 (`pk` int primary key,`col_bigint_undef_signed` bigint,`col_bigint_undef_unsigned` bigint unsigned,`col_bigint_"
		"key_signed` bigint,`col_bigint_key_unsigned` bigint unsigned,`col_float_undef_signed` float,`col_float_undef_unsigned` float unsigned,`col_f"
		"loat_key_signed` float,`col_float_key_unsigned` float unsigned,`col_double_undef_signed` double,`col_double_undef_unsigned` double unsigned,"
		"`col_double_key_signed` double,`col_double_key_unsigned` double unsigned,`col_decimal(?,?)_undef_signed` decimal(?,?),`col_decimal(?,?)_unde"
		"f_unsigned` decimal(?,?) unsigned,`col_decimal(?,?)_key_signed` decimal(?,?),`col_decimal(?,?)_key_unsigned` decimal(?,?) unsigned,`col_char"
		"(?)_undef_signed` char(?),`col_char(?)_key_signed` char(?),`col_varchar(?)_undef_signed` varchar(?),`col_varchar(?)_key_signed` varchar(?),`"
		"col_enum_undef_signed` enum(?,?,?,...),`col_enum_key_signed` enum(?,?,?,...),key (`col_bigint_key_signed`),key (`col_bigint_key_unsigned`),k"
		"ey (`col_float_key_signed`),key (`col_float_key_unsigned`),key (`col_double_key_signed`),key (`col_double_key_unsigned`),key (`col_decimal(?"
		",?)_key_signed`),key (`col_decimal(?,?)_key_unsigned`),key (`col_char(?)_key_signed`),key (`col_varchar(?)_key_signed`),key (`col_enum_key_s"
		"igned`)) character set utf8 partition by hash(pk) partitions ?" },
	{ 155, 0, 3, 10, 0xC3BFD4C1FAA94C65, /* regular_tokenizer_digests#88 prod */
		"create table table_10_utf8_4 (`pk` int primary key,`col_bigint_undef_signed` bigint,`col_bigint_undef_unsigned` bigint unsigned,`col_bigint_"
		"key_signed` bigint,`col_bigint_key_unsigned` bigint unsigned,`col_float_undef_signed` float,`col_float_undef_unsigned` float unsigned,`col_f"
		"loat_key_signed` float,`col_float_key_unsigned` float unsigned,`col_double_undef_signed` double,`col_double_undef_unsigned` double unsigned,"
		"`col_double_key_signed` double,`col_double_key_unsigned` double unsigned,`col_decimal(?,?)_undef_signed` decimal(?,?),`col_decimal(?,?)_unde"
		"f_unsigned` decimal(?,?) unsigned,`col_decimal(?,?)_key_signed` decimal(?,?),`col_decimal(?,?)_key_unsigned` decimal(?,?) unsigned,`col_char"
		"(?)_undef_signed` char(?),`col_char(?)_key_signed` char(?),`col_varchar(?)_undef_signed` varchar(?),`col_varchar(?)_key_signed` varchar(?),`"
		"col_enum_undef_signed` enum(?,?,?,...),`col_enum_key_signed` enum(?,?,?,...),key (`col_bigint_key_signed`),key (`col_bigint_key_unsigned`),k"
		"ey (`col_float_key_signed`),key (`col_float_key_unsigned`),key (`col_double_key_signed`),key (`col_double_key_unsigned`),key (`col_decimal(?"
		",?)_key_signed`),key (`col_decimal(?,?)_key_unsigned`),key (`col_char(?)_key_signed`),key (`col_varchar(?)_key_signed`),key (`col_enum_key_s"
		"igned`)) character set utf8 partition by hash(pk) partitions ?" },
	{ 1, 1, 3, 3, 0x591A0B822BA332D2, /* regular_tokenizer_digests#90 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,...),(?,?,?,...),(?,?,?,...),... ON DUPLICATE KEY UPDATE col1 = VALUES(col2)" },
	{ 2, 1, 3, 7, 0x3FC58FC58815D921, /* regular_tokenizer_digests#91 mz */
		"INSERT INTO db.table (col1,col2,col3) VALUES (?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),(?,?,?,...),... ON DUPL"
		"ICATE KEY UPDATE col1 = VALUES(col2)" },
};

#endif
