/*
 * stmt.h: one statement text, read once, in one structure that every layer
 * takes (docs/architecture.md, "Reading a statement").
 *
 * A struct stmt is begun on a text and read in two parts, each on first
 * use and at most once:
 *   - the digest (stmt_digest): the tokenizer's ProxySQL-exact digest_text,
 *     digest, literals and first keyword (tokenizer.h), the cache key's
 *     shape. Its reading of comments is ProxySQL's, not the server's ("--"
 *     and a line break swallow the next line), so it keeps its own pass;
 *   - the reading (stmt_read): one pass of the lexer (lexer.h: comments
 *     skipped, executable comments read as code, one keyword enum) that
 *     notes, token by token, the facts (facts.h), the tables read and
 *     written with their aliases (tables.h), the statement boundaries of a
 *     multi-statement text with each statement's first words, the first
 *     tokens of a statement whose readers walk them (SET, USE, DROP,
 *     COMMIT, ROLLBACK, FLUSH, CREATE, SHOW, EXPLAIN), and the marks below
 *     (STMT_*).
 * The readers of what a statement does to the session (setuse.h), of KILL
 * and the monitors' texts (local.h) and of the cache SQL (cachesql.h) walk
 * its tokens through a cursor (sql_cursor): the kept tokens first, then the
 * lexer from where they end, so a short statement is never lexed twice.
 *
 * A cache hit reads none of this: the cache begins a stmt only on a miss,
 * and for a prepared statement once, at PREPARE (stmt_keep holds what its
 * executes need). Nothing is allocated here; references point into the
 * text, which must outlive the reading.
 */
#ifndef SHOAL_SQL_STMT_H
#define SHOAL_SQL_STMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sql/facts.h"
#include "sql/keywords.h"
#include "sql/lexer.h"
#include "sql/tables.h"
#include "sql/tokenizer.h"

/* The WHERE constraints per table (sql/where.h: for each table of a
 * SELECT, the conjunction of column = literal, IN and IS NULL its rows
 * must satisfy). */
struct sql_where;

/* stmt.have: the parts read */
#define STMT_HAVE_DIGEST 0x01
#define STMT_HAVE_READ   0x02

/* stmt.flags: what the reading marked */
#define STMT_DOUBT        0x001 /* an executable comment some servers skip and
				 * others run (its body was read as code) */
#define STMT_PRIVILEGES   0x002 /* a statement changes privileges or accounts
				 * (GRANT, REVOKE, CREATE / ALTER / DROP / RENAME
				 * USER or ROLE, SET PASSWORD, SET DEFAULT ROLE,
				 * FLUSH PRIVILEGES) */
#define STMT_SET_ROLE     0x004 /* a statement is SET ROLE */
#define STMT_FLUSH_TABLES 0x008 /* FLUSH [NO_WRITE_TO_BINLOG | LOCAL] TABLE(S) ...,
				 * or REPAIR: the server reopens tables */
#define STMT_ONESHOT_RU   0x010 /* SET TRANSACTION (no GLOBAL / SESSION) with READ
				 * UNCOMMITTED: the next transaction's level */
#define STMT_PARTS_MORE   0x020 /* more statements than parts[] holds (the marks
				 * above still count every one) */
#define STMT_TOKS_MORE    0x040 /* more tokens than toks[] holds (a cursor lexes
				 * the rest) */
#define STMT_READ_UNCOMMITTED 0x080 /* with STMT_ONESHOT_RU: its READ UNCOMMITTED */

/* Statements of a multi-statement text recorded, and tokens kept. */
#define STMT_PARTS_MAX 16
#define STMT_HEAD 4
#define STMT_TOKS_MAX 64

/* One statement of the text (one ';'-separated part). */
struct stmt_part {
	uint32_t off, len;            /* its text, from its first token up to its ';'
				       * (or the end of the text) */
	enum sql_kw head[STMT_HEAD];  /* its first words past '(' (KW_NONE: a
				       * token that is no keyword, or none); only the
				       * first when no mark can follow from the others */
	uint8_t nhead;
};

/* A kept token: the lexer's sql_tok (lexer.h) as offsets into the text. */
struct stmt_tok {
	uint32_t off, len;            /* sql_tok.p - q, sql_tok.len */
	uint32_t end;                 /* where the lexer stood after it */
	uint8_t kind;                 /* enum sql_tkind */
	uint8_t kw;                   /* enum sql_kw */
};

struct stmt {
	const char *q;
	size_t n;
	unsigned have;                /* STMT_HAVE_* */

	/* the digest (STMT_HAVE_DIGEST): tok.text is text[] */
	struct sql_tok_result tok;
	char text[SQL_TOK_MIN_TEXT_CAP];
	bool digest_failed;           /* sql_tokenize refused the text */

	/* the reading (STMT_HAVE_READ) */
	unsigned flags;               /* STMT_* */
	struct stmt_facts facts;      /* the leading keyword and the marks after it */
	struct sql_tables tables;     /* kind, tables read and written, aliases, routines */
	unsigned nparts;
	struct stmt_part parts[STMT_PARTS_MAX];
	unsigned ntoks;
	struct stmt_tok toks[STMT_TOKS_MAX];
	/* the per-table WHERE constraints: sql/where.c fills them; NULL
	 * while nothing has read them */
	const struct sql_where *where;
};

/* Begin a reading of q[0, n): nothing is read yet. */
void stmt_begin(struct stmt *st, const char *q, size_t n);
/* The digest (read on first use). NULL when the tokenizer refuses the
 * text (sql_tokenize's -1: a text of 4 GiB or more). */
const struct sql_tok_result *stmt_digest(struct stmt *st);
/* The reading (read on first use): facts, tables, parts, tokens, flags. */
void stmt_read(struct stmt *st);

/* The statement kind the tables reader gave (tables.h). */
static inline enum sql_stmt_kind stmt_kind(const struct stmt *st)
{
	return st->tables.kind;
}

/* Is the read statement a SET that names one of names (upper case, NULL
 * ended) anywhere, as a word or a `quoted` name? */
bool stmt_set_names(const struct stmt *st, const char *const *names);

/* What a prepared statement keeps of its reading, made at PREPARE
 * (stmt_keep, one allocation: the tables' references follow it) and given
 * back to each execute (stmt_unkeep). The references point into the
 * statement's text. */
struct stmt_kept {
	unsigned flags;               /* STMT_*, without the tokens' */
	struct stmt_facts facts;
	enum sql_stmt_kind kind;
	unsigned tflags;              /* SQL_TABLES_* */
	unsigned n, nroutines;
	struct sql_table_ref refs[];  /* n tables, then nroutines routines */
};

/* A copy of st's reading (st read), or NULL when out of memory. */
struct stmt_kept *stmt_keep(const struct stmt *st);
/* Begin st on q[0, n) (the text k was read from) with k's reading: no
 * digest, no tokens kept (a cursor lexes the text). */
void stmt_unkeep(struct stmt *st, const struct stmt_kept *k, const char *q, size_t n);

/* Does the text q[0, n) (raw: a client's, or the binlog's) change
 * privileges or accounts (STMT_PRIVILEGES), by its first words? */
bool sql_changes_privileges(const char *q, size_t n);

/* ---- the cursor ---------------------------------------------------------- */

struct sql_cursor {
	const struct stmt *st;        /* NULL: the lexer only */
	unsigned i;                   /* the next kept token */
	struct sql_lex lx;            /* the text after the kept tokens */
	size_t pos;                   /* just after the last token read */
};

/* A cursor over a read statement, from its first token. */
void stmt_cursor(struct sql_cursor *c, const struct stmt *st);
/* A cursor over a text read by no stmt (raw: comments skipped). */
void sql_cursor_text(struct sql_cursor *c, const char *q, size_t n);
void sql_cursor_next(struct sql_cursor *c, struct sql_tok *t);
void sql_cursor_peek(const struct sql_cursor *c, struct sql_tok *t);
/* The offset in the text just after the last token read. */
size_t sql_cursor_pos(const struct sql_cursor *c);
/* An executable comment some servers skip was passed (in the text read so
 * far, or anywhere in a stmt's). */
bool sql_cursor_doubt(const struct sql_cursor *c);

#endif
