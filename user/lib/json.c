// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "json.h"

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *p)
{
	int n;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2, cp = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		n = 3, cp = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = cp << 6 | (p[i] & 0x3F);
	}
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int n = utf8_len(p);

		if (!n) {
			fputs("\\ufffd", f);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p == '\n') {
			fputs("\\n", f);
			p++;
		} else if (*p == '\t') {
			fputs("\\t", f);
			p++;
		} else if (*p < 0x20 || *p == 0x7F) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}
