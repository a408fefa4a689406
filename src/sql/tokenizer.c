/*
 * tokenizer.c: Shoal's single-pass SQL tokenizer (see tokenizer.h).  Owns the
 * ProxySQL-compatible digest_text/digest, the literal spans and the flags.
 *
 * ProxySQL 2.x builds digest_text in four stages over a buffer:
 *   1. literals -> '?', comments dropped ('/ *!NNNNN x * /' keeps "x "),
 *      whitespace folded to one ' ';
 *   2. spaces dropped after '(', before ')', around ',' and between '?' and
 *      an arithmetic operator; unary '+'/'-' before a value dropped;
 *   3. "?,?,?,?,?" runs inside parentheses collapsed to "?,?,?,..."
 *      (grouping_limit);
 *   4. runs of collapsed groups "(?,?,?,...),(..)" cut to
 *      groups_grouping_limit groups followed by "..." ;
 *   and finally trailing ' ' and ';' are trimmed.
 * Here the same stages run as a chain of streaming filters fed by one pass
 * over the query: stage 1 reads the query, each later stage keeps only a
 * few characters of look-ahead plus counters for "?," runs, and stage 4
 * writes straight into the caller's buffer (which also serves as its
 * look-ahead store: a group run is written, then cut back when it
 * collapses).  Nothing is allocated.  This file holds stage 1 and the
 * driver; the state and stages 2 to 4 are tokenizer_stages.h, compiled
 * here.
 *
 * The stages reproduce ProxySQL's observable behaviour, including quirks
 * that operators will see in its stats (e.g. "a - b" -> "a  b", a number
 * followed directly by a normal character at the very end of the query
 * loses that character, "#"/"-- " comments do not insert a space).  Where
 * ProxySQL reads a byte it never wrote (a stale buffer slot after a "#"
 * comment glued to a token and followed by indentation) we use what its own
 * earlier writes left there when that is known, else ' '.
 *
 * Known divergences (none reachable from valid SQL outside identifiers):
 *   - stage 4 "(..)(..)" groups not separated by ',' among the first
 *     groups_grouping_limit groups are not collapsed;
 *   - stage 4's continuation check after a literal "),..." already present
 *     in the query text is not emulated;
 *   - queries over ProxySQL's 65000-byte query_digests_max_query_length are
 *     normalised in full instead of in 65000-byte refills.
 */
#include "sql/tokenizer.h"

#include <string.h>

#include "sql/spooky.h"
#include "sql/tokenizer_stages.h"

/* ---- stage 1: literals, comments, whitespace --------------------------- */

HOT void s1_emit(struct tk *t, unsigned char c, size_t src, int lit)
{
	if (c == ';')
		t->semi = true;
	else if (t->semi && c != ' ')
		t->multi = true;
	t->alen++;
	t->alast = c;
	s2_push(t, c, src < NOSRC ? (uint32_t)src : NOSRC, lit);
}

HOT void s1_copy(struct tk *t, unsigned char c, size_t src)
{
	if (is_sp(c))
		c = ' ';
	else if (t->lower)
		c = lower(c);
	s1_emit(t, c, src, -1);
}

/*
 * Fast path for q[from, to), identifier bytes following the identifier byte
 * stage 2 holds.  Every stage passes such bytes through unchanged, so all
 * but the last (which stage 2 keeps waiting for its successor) go straight
 * to the sink, and each stage's bookkeeping is updated as if they had been
 * pushed one by one.  Callers check that no stage is mid-pattern.
 */
static void s1_word_bulk(struct tk *t, size_t from, size_t to)
{
	const unsigned char *q = t->q;
	struct ops *s = &t->s2;
	struct vals *v = &t->s3;
	struct sink *k = &t->sink;
	size_t m = to - from;   /* bytes let through: the held one + all but last */
	unsigned char c = s->cur;

	for (size_t i = 0; i < m; i++) {
		if (k->len < k->cap)
			k->buf[k->len] = (char)c;
		k->len++;
		v->tail = v->tail << 8 | c;
		s->p2 = s->p1;
		s->p1 = c;
		c = t->lower ? lower(q[from + i]) : q[from + i];
	}
	k->trail = 0;
	s->out_last = s->p1;
	s->sign_wait = 0;
	v->prev = s->p1;
	v->wcount = v->wcount + m < 8 ? v->wcount + (unsigned)m : 8;
	s->cur = c;
	s->cur_src = (uint32_t)(to - 1);
	s->cur_lit = -1;
	t->alen += m;
	t->alast = c;
}

/* True when the identifier byte stage 2 holds would pass every stage as is. */
static bool word_passes(const struct tk *t)
{
	const struct vals *v = &t->s3;

	if (v->gl > 0 && (v->mode != V_SCAN || v->qn > 0 ||
			  (v->gc && v->wcount > 4 && v->tail == TAIL_PACK)))
		return false;
	return !t->s4.on || t->s4.mode == G_NORMAL;
}

/* A run of identifier bytes (copied as is by ProxySQL). */
static void s1_word(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t s = t->pos, e = s + 1;

	while (e < t->len && is_ident(q[e]))
		e++;
	s1_copy(t, q[s], s);
	if (e - s >= 2 && word_passes(t)) {
		s1_word_bulk(t, s + 1, e);  /* s1_copy saw q[s]: multi is up to date */
	} else {
		for (size_t i = s + 1; i < e; i++)
			s1_copy(t, q[i], i);
	}
	t->pc = q[e - 1];
	t->pos = e;
}

static int lit_add(struct tk *t, size_t off, size_t end, int kind, int flags)
{
	struct sql_tok_result *o = t->out;
	struct sql_lit *l;

	if (o->nlits >= SQL_TOK_MAX_LITERALS) {
		o->lits_overflow = true;
		return -1;
	}
	l = &o->lits[o->nlits];
	l->off = (uint32_t)off;
	l->len = (uint32_t)(end - off);
	l->kind = (uint8_t)kind;
	l->flags = (uint8_t)flags;
	return (int)o->nlits++;
}

/*
 * Byte in stage 1's buffer at slot p (== alen) that ProxySQL never wrote in
 * this pass for the output: either the ' ' placeholder its space folding
 * writes ahead, or a leftover character of a number it wrote out before
 * replacing it by '?'.  Unknown slots are taken as ' '.
 */
static unsigned char ghost_at(const struct tk *t, size_t p)
{
	if (t->ph_set && t->ph_pos == p)
		return ' ';
	for (unsigned i = 0; i < t->gh_n; i++) {
		const struct ghost *g = &t->gh[(t->gh_head + GHOSTS - i) % GHOSTS];

		if (p > g->s && p < g->s + g->m) {
			unsigned char c = t->q[g->qoff + (p - g->s)];

			return t->lower ? lower(c) : c;
		}
	}
	return ' ';
}

static void s1_fold_space(struct tk *t)
{
	if (!is_sp(t->alast))
		s1_emit(t, ghost_at(t, t->alen), NOSRC, -1);
	t->ph_pos = t->alen;
	t->ph_set = true;
	t->pc = ' ';
	t->pos++;
}

static void s1_plain(struct tk *t, unsigned char c)
{
	if (t->alen == 0 && is_sp(c)) {
		t->pos++;
		return;
	}
	if (is_sp(t->pc) && is_sp(c)) {
		s1_fold_space(t);
		return;
	}
	if (is_ident(c)) {
		s1_word(t);
		return;
	}
	s1_copy(t, c, t->pos);
	t->pc = c;
	t->pos++;
}

/*
 * '#' to end of line, newline included.  Like ProxySQL 2.7, a '#' found when
 * exactly two bytes follow it ends the comment early and those two bytes are
 * read as SQL again.
 */
static void s1_hash_comment(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t i = t->pos, n = t->len;

	t->flags |= SQL_TOK_HAS_COMMENT;
	for (;;) {
		if (q[i] == '#' && i + 2 <= n) {
			if (++i + 2 == n)
				break;
		}
		if (q[i] == '\n' || q[i] == '\r' || i + 1 == n) {
			t->pc = ' ';
			i++;
			break;
		}
		t->pc = q[i++];
		if (i >= n)
			break;
	}
	t->pos = i;
}

/*
 * "-- " to end of line, newline included.  Like ProxySQL 2.7, any
 * "--<space>" is skipped whole, even when the space is a newline (so "--\n"
 * swallows the next line, which the server would run: SQL_TOK_HIDDEN_SQL),
 * and one that leaves exactly four bytes ends the comment with those bytes
 * read as SQL again.
 */
static void s1_dash_comment(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t i = t->pos, n = t->len;

	t->flags |= SQL_TOK_HAS_COMMENT;
	for (;;) {
		if (i + 4 <= n && q[i] == '-' && q[i + 1] == '-' && is_sp(q[i + 2])) {
			i += 3;
			if (i + 4 == n)
				break;
			if ((q[i - 1] == '\n' || q[i - 1] == '\r') &&
			    q[i] != '\n' && q[i] != '\r')
				t->flags |= SQL_TOK_HIDDEN_SQL;  /* the server ends it there */
		}
		if (q[i] == '\n' || q[i] == '\r' || i + 1 == n) {
			t->pc = ' ';
			i++;
			break;
		}
		t->pc = q[i++];
		if (i >= n)
			break;
	}
	t->pos = i;
}

static bool is_annotation(unsigned char c)
{
	return c == '/' || c == '*' || c == '!' || c == ' ' || is_dig(c);
}

/* Body of a / *! comment: q[from..close] minus "* /", version and spaces. */
static void s1_cmd_text(struct tk *t, size_t from, size_t close)
{
	size_t n = close - from + 1, a = 0;

	if (n > CMD_COMMENT_MAX) {
		n = CMD_COMMENT_MAX;
		t->flags |= SQL_TOK_HIDDEN_SQL; /* the digest keeps only a part */
	}
	if (n >= 2)
		n -= 2;
	while (a < n && is_annotation(t->q[from + a]))
		a++;
	if (a == n)
		return;
	for (size_t i = a; i < n; i++)
		s1_emit(t, t->q[from + i], from + i, -1);
	if (t->alast != ' ')
		s1_emit(t, ' ', NOSRC, -1);
}

static void s1_block_comment(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t n = t->len, from = t->pos;
	bool cmd = false;

	t->flags |= SQL_TOK_HAS_COMMENT;
	for (;;) {
		if (t->pos + 1 < n && q[t->pos] == '/' && q[t->pos + 1] == '*') {
			if (t->pos + 2 < n && q[t->pos + 2] == '!')
				cmd = true;
			/* MariaDB runs the body of / *M! as code, and ProxySQL's
			 * digest drops it: the digest hides SQL */
			else if (t->pos + 3 < n && q[t->pos + 2] == 'M' && q[t->pos + 3] == '!')
				t->flags |= SQL_TOK_HIDDEN_SQL;
			t->pos += 2 + cmd;
			if (t->pos + 1 >= n) {  /* too short: given up */
				t->flags |= SQL_TOK_UNTERMINATED_COMMENT;
				return;
			}
			from = t->pos;
		}
		if (t->pc == '*' && q[t->pos] == '/') {
			if (cmd)
				s1_cmd_text(t, from, t->pos);
			if (t->alen > 0 && t->alast != ' ')
				s1_emit(t, ' ', NOSRC, -1);
			t->pc = ' ';
			t->pos++;
			return;
		}
		t->pc = q[t->pos++];
		if (t->pos >= n) {
			t->flags |= SQL_TOK_UNTERMINATED_COMMENT;
			return;
		}
	}
}

/* Span of a string literal, widened over an adjacent N/X/B/_charset. */
static void s1_string_lit(struct tk *t, size_t start, size_t end)
{
	size_t b = start;
	int kind = SQL_LIT_STRING, flags = 0;

	while (b > 0 && is_ident(t->q[b - 1]))
		b--;
	if (start - b == 1 && strchr("nNxXbB", t->q[b])) {
		unsigned char c = lower(t->q[b]);

		kind = c == 'x' ? SQL_LIT_HEX : c == 'b' ? SQL_LIT_BIT : kind;
		flags = SQL_LIT_INTRODUCER;
	} else if (start - b >= 2 && t->q[b] == '_') {
		flags = SQL_LIT_INTRODUCER;
	} else {
		b = start;
	}
	s1_emit(t, '?', start, lit_add(t, b, end, kind, flags));
}

static void s1_string(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t start = t->pos, n = t->len;
	unsigned char d = q[start];

	t->pc = d;
	t->pos++;
	while (t->pos < n) {
		unsigned char c = q[t->pos];

		if (t->pos > start + 1 &&
		    ((t->pc == '\\' && (c == '\\' || c == d)) ||
		     (t->pc == d && c == d))) {
			if (t->pc == '\\')
				t->flags |= SQL_TOK_BACKSLASH_ESCAPE;
			t->pc = 'X';    /* escape pair: neither half pairs again */
			t->pos++;
			continue;
		}
		if (c == d && (t->pos + 1 == n || q[t->pos + 1] != d)) {
			s1_string_lit(t, start, t->pos + 1);
			t->pc = t->pos + 1 == n ? d : 0;
			t->pos++;
			return;
		}
		t->pc = c;
		t->pos++;
	}
	t->flags |= SQL_TOK_UNTERMINATED_STRING;
}

/* ProxySQL's number test: digits, '.', 'e', e+/e-, or 0x + hex digits. */
static bool is_number(const unsigned char *s, size_t m)
{
	bool hex = false;

	for (size_t k = 0; k < m; k++) {
		unsigned char c = s[k];
		bool fl = c == '.' || (c | 0x20) == 'e' ||
			  (k > 0 && (s[k - 1] | 0x20) == 'e' && (c == '+' || c == '-'));

		if (k == 1 && s[0] == '0' && (c | 0x20) == 'x')
			hex = true;
		else if (!hex && !is_dig(c) && !fl)
			return false;
		else if (hex && !is_hexd(c))
			return false;
	}
	return true;
}

/* Remembers the characters a replaced number left behind '?'. */
static void s1_ghost(struct tk *t, size_t s, size_t m, size_t qoff)
{
	t->gh_head = (t->gh_head + 1) % GHOSTS;
	t->gh[t->gh_head] = (struct ghost){ s, m, qoff };
	if (t->gh_n < GHOSTS)
		t->gh_n++;
}

/*
 * Finishes the number token q[start, i) at q[i] (ProxySQL's rules): if it is
 * a number it becomes '?', else it is copied.  At the very end of the query
 * q[i] itself is not checked, and when it is a normal character it is lost.
 * Returns the position to continue from.
 */
static size_t s1_number_end(struct tk *t, size_t start, size_t i)
{
	const unsigned char *q = t->q;
	bool dropped = i + 1 == t->len && is_ident(q[i]);
	size_t end = dropped ? i + 1 : i;
	bool hex;
	int lit;

	if (i > start && !is_number(q + start, i - start)) {
		for (size_t k = start; k < i; k++)
			s1_copy(t, q[k], k);
		return i;
	}
	hex = i - start >= 2 && (q[start + 1] | 0x20) == 'x';
	lit = lit_add(t, start, end, hex ? SQL_LIT_HEX : SQL_LIT_NUMBER, 0);
	if (i - start >= 2)
		s1_ghost(t, t->alen, i - start, start);
	s1_emit(t, '?', start, lit);
	t->pc = '?';
	return end;
}

static void s1_number(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t start = t->pos, i = start;

	for (;;) {
		unsigned char c = q[i];
		bool fl = c == '.' || ((t->pc | 0x20) == 'e' && (c == '+' || c == '-'));

		if ((!is_ident(c) && !fl) || i + 1 == t->len) {
			t->pos = s1_number_end(t, start, i);
			return;
		}
		t->pc = c;
		i++;
	}
}

static void s1_null(struct tk *t)
{
	const unsigned char *q = t->q + t->pos;
	size_t rem = t->len - t->pos;
	bool found = rem >= 4 && lower(q[0]) == 'n' && lower(q[1]) == 'u' &&
		     lower(q[2]) == 'l' && lower(q[3]) == 'l' &&
		     (rem == 4 || !is_ident(q[4]));

	if (!found) {
		s1_copy(t, q[0], t->pos);
		t->pc = q[0];
		t->pos++;
		return;
	}
	s1_emit(t, '?', t->pos, lit_add(t, t->pos, t->pos + 4, SQL_LIT_NULL, 0));
	t->pc = '?';
	t->pos += 4;
}

/* Comment, string, number or NULL starting at q[p]; false if none. */
static bool s1_special(struct tk *t, size_t p, unsigned char c)
{
	const unsigned char *q = t->q;
	size_t n = t->len;

	if (c == '/' && p + 1 < n && q[p + 1] == '*')
		s1_block_comment(t);
	else if (c == '#')
		s1_hash_comment(t);
	else if (c == '-' && p + 2 < n && q[p + 1] == '-' && is_sp(q[p + 2]))
		return (t->pc != '-' || p == 0) ? (s1_dash_comment(t), true) : false;
	else if (c == '\'' || c == '"')
		s1_string(t);
	else if (!is_ident(t->pc) && is_dig(c))
		s1_number(t);
	else if (!is_ident(t->pc) && (c | 0x20) == 'n' && t->rnull)
		s1_null(t);
	else
		return false;
	return true;
}

static void s1_run(struct tk *t)
{
	while (t->pos < t->len) {
		size_t p = t->pos;
		unsigned char c = t->q[p];

		if ((cclass[c] & (C_MARK | C_DIGIT) || (c | 0x20) == 'n') &&
		    s1_special(t, p, c))
			continue;
		s1_plain(t, c);
	}
}

/* ---- driver ----------------------------------------------------------- */

static void tk_init(struct tk *t, const char *q, size_t len,
		    const struct sql_tok_opts *o, struct sql_tok_result *out)
{
	int gl = o->grouping_limit, ggl = o->groups_grouping_limit;

	gl = gl < 0 ? 0 : gl > SQL_TOK_MAX_GROUPING ? SQL_TOK_MAX_GROUPING : gl;
	ggl = ggl < 0 ? 0 : ggl > SQL_TOK_MAX_GROUPING ? SQL_TOK_MAX_GROUPING : ggl;
	memset(t, 0, sizeof(*t));
	t->q = (const unsigned char *)q;
	t->len = len;
	t->lower = o->lowercase;
	t->rnull = o->replace_null;
	t->out = out;
	t->s2.p1 = t->s2.p2 = t->s2.out_last = '0';   /* ProxySQL's "none" */
	t->s3.gl = (unsigned)gl;
	t->s4.on = gl > 0 && ggl > 0;
	t->s4.gl = (unsigned)gl;
	t->s4.ggl = (unsigned)ggl;
	t->s4.gsize = 2 * (size_t)gl + 6;
	t->sink.buf = out->text;
	t->sink.cap = out->text_cap - 1;
}

/* The first word of digest_text past '(' and ' ', by its keyword id (a
 * SELECT, the commonest, without the lookup). */
static enum sql_kw first_keyword(const char *s, size_t n)
{
	size_t i = 0, m = 0;

	while (i < n && (s[i] == '(' || s[i] == ' '))
		i++;
	while (i + m < n && is_ident((unsigned char)s[i + m]))
		m++;
	if (m == 6 && (s[i] | 0x20) == 's' && (s[i + 1] | 0x20) == 'e' && (s[i + 2] | 0x20) == 'l' &&
	    (s[i + 3] | 0x20) == 'e' && (s[i + 4] | 0x20) == 'c' && (s[i + 5] | 0x20) == 't')
		return KW_SELECT;
	return sql_kw_lookup(s + i, m);
}

static void tk_finish(struct tk *t)
{
	struct sql_tok_result *o = t->out;
	struct sink *k = &t->sink;
	size_t len, vis;

	if (t->s2.have)
		s2_step(t, '\0');
	s3_finish(t);
	/* trailing ' ' and ';' go, but never the first character */
	len = k->len - k->trail;
	if (len == 0 && k->len > 0)
		len = 1;
	vis = len < k->cap ? len : k->cap;
	k->buf[vis] = '\0';
	o->text_len = strlen(k->buf);
	o->digest = spooky_hash64(k->buf, o->text_len < SQL_DIGEST_HASH_MAX ?
				  o->text_len : SQL_DIGEST_HASH_MAX, 0);
	o->keyword = first_keyword(k->buf, o->text_len);
	o->flags = t->flags;
	if (len > k->cap)
		o->flags |= SQL_TOK_TEXT_TRUNCATED;
	if (t->multi)
		o->flags |= SQL_TOK_MULTI_STATEMENT;
	o->ok = !(t->flags & (SQL_TOK_UNTERMINATED_STRING |
			      SQL_TOK_UNTERMINATED_COMMENT));
}

int sql_tokenize_opts(const char *q, size_t len, const struct sql_tok_opts *opts,
		      struct sql_tok_result *out)
{
	static const struct sql_tok_opts defaults = SQL_TOK_OPTS_DEFAULT;
	struct tk t;

	if (!out)
		return -1;
	out->text_len = 0;
	out->digest = 0;
	out->nlits = 0;
	out->lits_overflow = false;
	out->keyword = KW_NONE;
	out->flags = 0;
	out->ok = false;
	if (!out->text || out->text_cap < SQL_TOK_MIN_TEXT_CAP ||
	    (!q && len > 0) || len >= (size_t)UINT32_MAX)
		return -1;
	tk_init(&t, q, len, opts ? opts : &defaults, out);
	s1_run(&t);
	tk_finish(&t);
	return 0;
}

int sql_tokenize(const char *q, size_t len, struct sql_tok_result *out)
{
	return sql_tokenize_opts(q, len, NULL, out);
}

static void hex16(uint64_t v, char *dst, const char *digits)
{
	for (int i = 15; i >= 0; i--) {
		dst[i] = digits[v & 0xf];
		v >>= 4;
	}
}

void sql_query_id(uint64_t digest, char out[19])
{
	out[0] = 'q';
	out[1] = '_';
	hex16(digest, out + 2, "0123456789abcdef");
	out[18] = '\0';
}

void sql_digest_hex(uint64_t digest, char out[19])
{
	out[0] = '0';
	out[1] = 'x';
	hex16(digest, out + 2, "0123456789ABCDEF");
	out[18] = '\0';
}
