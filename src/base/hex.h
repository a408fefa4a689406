/*
 * hex.h: owns hex_value(), the value of one hexadecimal digit (either
 * case), for the parsers that read hex (config.c's and http.c's
 * percent-decoding, the query rules' digests).
 */
#ifndef SHOAL_HEX_H
#define SHOAL_HEX_H

/* 0..15, or -1 if c is not a hex digit. */
static inline int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
