/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The settings table (roceval_settings.h) parsed, printed and explained:
 * one generic parser and one printer over the typed rows.
 */
#ifndef ROCEVAL_SETTINGS_API_H
#define ROCEVAL_SETTINGS_API_H

#include <stdio.h>
#include <linux/types.h>

#include "roceval.h"

/* Help text of the whole table, as command-line and as config-file assignments. */
#define SETTING_HELP_ARG_ROW(key, syntax, desc) "  " #key "=" syntax SETTING_BREAK desc "\n"
#define SETTING_HELP_CONF_ROW(key, syntax, desc) "  " #key " = " syntax SETTING_BREAK desc "\n"
#define SETTING_HELP_NUMBER(F, key, field, def, min, max, word, word_value, check, syntax, desc, expect) \
	F(key, syntax, desc)
#define SETTING_HELP_DURATION(F, key, field, unit, def, max, syntax, desc, expect) F(key, syntax, desc)
#define SETTING_HELP_WORDS(F, key, field, words, desc, expect) F(key, words, desc)
#define SETTING_HELP_SWITCH(F, key, field, def, desc, expect) F(key, "on|off", desc)
#define SETTING_HELP_LIST(F, key, field, cap, lo, hi, empty, hex, check, syntax, desc, expect) \
	F(key, syntax, desc)
#define SETTING_HELP_ARG_N(...) SETTING_HELP_NUMBER(SETTING_HELP_ARG_ROW, __VA_ARGS__)
#define SETTING_HELP_ARG_D(...) SETTING_HELP_DURATION(SETTING_HELP_ARG_ROW, __VA_ARGS__)
#define SETTING_HELP_ARG_W(...) SETTING_HELP_WORDS(SETTING_HELP_ARG_ROW, __VA_ARGS__)
#define SETTING_HELP_ARG_S(...) SETTING_HELP_SWITCH(SETTING_HELP_ARG_ROW, __VA_ARGS__)
#define SETTING_HELP_ARG_L(...) SETTING_HELP_LIST(SETTING_HELP_ARG_ROW, __VA_ARGS__)
#define SETTING_HELP_CONF_N(...) SETTING_HELP_NUMBER(SETTING_HELP_CONF_ROW, __VA_ARGS__)
#define SETTING_HELP_CONF_D(...) SETTING_HELP_DURATION(SETTING_HELP_CONF_ROW, __VA_ARGS__)
#define SETTING_HELP_CONF_W(...) SETTING_HELP_WORDS(SETTING_HELP_CONF_ROW, __VA_ARGS__)
#define SETTING_HELP_CONF_S(...) SETTING_HELP_SWITCH(SETTING_HELP_CONF_ROW, __VA_ARGS__)
#define SETTING_HELP_CONF_L(...) SETTING_HELP_LIST(SETTING_HELP_CONF_ROW, __VA_ARGS__)
/* The whole table's help, a string constant: "  key=syntax\n      help\n" a row */
#define SETTINGS_HELP_ARG                                                                   \
	ROCEVAL_SETTINGS(SETTING_HELP_ARG_N, SETTING_HELP_ARG_D, SETTING_HELP_ARG_W, SETTING_HELP_ARG_S, \
			 SETTING_HELP_ARG_L)
/* The same as the daemon's config file writes them: "  key = syntax" */
#define SETTINGS_HELP_CONF                                                                  \
	ROCEVAL_SETTINGS(SETTING_HELP_CONF_N, SETTING_HELP_CONF_D, SETTING_HELP_CONF_W, SETTING_HELP_CONF_S, \
			 SETTING_HELP_CONF_L)

void settings_defaults(struct roceval_settings *s);
/* What no user sets: the fields the program reads that follow from the settings (cc_on). */
void settings_derive(struct roceval_settings *s);
/* 0, or -EINVAL with the reason in err. */
int settings_set(struct roceval_settings *s, const char *key, const char *value, char *err,
		 size_t errlen);
/* "key=value" form of settings_set(). */
int settings_assign(struct roceval_settings *s, const char *assignment, char *err, size_t errlen);
/* Writes the value of `key` as settings_set() would accept it. */
int settings_format(const struct roceval_settings *s, const char *key, char *buf, size_t len);
void settings_print(FILE *f, const struct roceval_settings *s, const char *indent);
struct json_writer;
/* key: {every setting: its value as settings_format() writes it}. */
void settings_json(struct json_writer *w, const char *key, const struct roceval_settings *s);
/* The table's help (SETTINGS_HELP_ARG) to f. */
void settings_usage(FILE *f);
extern const char *const settings_keys[];

#endif
