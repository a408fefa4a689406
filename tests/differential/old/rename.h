/*
 * rename.h: included before every file of the old readers (tests/differential/old/,
 * copied from git at 5a9fd58): their global functions get an old_ prefix, so that
 * they link into one program beside the node's own (src/sql/) of the same names.
 */
#ifndef SHOAL_DIFF_OLD_RENAME_H
#define SHOAL_DIFF_OLD_RENAME_H

#define spooky_hash128 old_spooky_hash128
#define spooky_hash64 old_spooky_hash64
#define sql_cte_list_follows old_sql_cte_list_follows
#define sql_digest_hex old_sql_digest_hex
#define sql_fn_at old_sql_fn_at
#define sql_fn_count old_sql_fn_count
#define sql_fn_lookup old_sql_fn_lookup
#define sql_keyword_name old_sql_keyword_name
#define sql_kw_lookup old_sql_kw_lookup
#define sql_lex_next old_sql_lex_next
#define sql_lex_peek old_sql_lex_peek
#define sql_name_is old_sql_name_is
#define sql_query_id old_sql_query_id
#define sql_skip_cte_list old_sql_skip_cte_list
#define sql_skip_parens old_sql_skip_parens
#define sql_stmt_kind_name old_sql_stmt_kind_name
#define sql_table_name_copy old_sql_table_name_copy
#define sql_tables old_sql_tables
#define sql_tables_facts old_sql_tables_facts
#define sql_tokenize old_sql_tokenize
#define sql_tokenize_opts old_sql_tokenize_opts
#define stmt_facts_begin old_stmt_facts_begin
#define stmt_facts_note old_stmt_facts_note
#define stmt_facts_read old_stmt_facts_read

/* the old readers' global functions (readers.c) */
#define kill_statement old_kill_statement
#define monitor_match old_monitor_match
#define cache_cmd_parse old_cache_cmd_parse
#define sv_classify old_sv_classify
#define sv_completion_releases old_sv_completion_releases
#define grants_text_changes_privileges old_grants_text_changes_privileges

#endif
