/* A small, robust Python line-structure scanner: physical lines, logical
 * lines (statements) with their indentation, kind and block structure.
 * It tokenizes just enough (strings incl. triple-quoted and f-strings with
 * nested expressions, comments, backslash continuations, brackets) to know
 * where statements start and end. Pure C, no JSON; never fails: arbitrary
 * bytes give some structure (possibly meaningless, never out of bounds). */
#ifndef NSYS_PYSCAN_H
#define NSYS_PYSCAN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct nsys_py_line {
  size_t off;       /* byte offset of the line's first byte */
  size_t len;       /* bytes of content, terminator excluded */
  size_t term;      /* terminator bytes: 0 (last line), 1 (\n or \r), 2 (\r\n) */
  bool in_string;   /* the line begins inside a string literal */
  bool blank;       /* whitespace only (and not inside a string) */
} nsys_py_line;

typedef enum {
  NSYS_PY_SIMPLE = 0, NSYS_PY_DEF, NSYS_PY_CLASS, NSYS_PY_DECORATOR,
  NSYS_PY_IF, NSYS_PY_ELIF, NSYS_PY_ELSE, NSYS_PY_FOR, NSYS_PY_WHILE,
  NSYS_PY_WITH, NSYS_PY_TRY, NSYS_PY_EXCEPT, NSYS_PY_FINALLY,
  NSYS_PY_MATCH, NSYS_PY_CASE,
  NSYS_PY_IMPORT, NSYS_PY_FROM, NSYS_PY_RETURN, NSYS_PY_PASS, NSYS_PY_BREAK,
  NSYS_PY_CONTINUE, NSYS_PY_GLOBAL, NSYS_PY_NONLOCAL, NSYS_PY_RAISE,
  NSYS_PY_STRING, /* an expression statement made of string literals only */
} nsys_py_kind;

typedef struct nsys_py_stmt {
  int first_line, last_line; /* physical lines, 0-based, inclusive */
  int indent_cols;           /* tabs to multiples of 8 */
  size_t indent_len;         /* bytes of leading whitespace on first_line */
  nsys_py_kind kind;
  bool opens_block;          /* compound header whose body follows on later lines */
  bool inline_body;          /* compound header with its body on the same line */
  bool has_call;             /* NAME/')'/']' followed by '(' somewhere */
  bool has_op;               /* arithmetic/matmul operator or subscript */
  bool header_call;          /* a call before the header's ':' */
  bool marker;               /* trailing comment is exactly "# nsys-ai" */
  char name[96];             /* def/class name; else the first called (dotted) name */
  char first_ident[64];      /* first identifier of the statement */
  int parent;                /* enclosing header statement, -1 at module level */
  int block_end;             /* last statement index of this statement's body (itself if none) */
} nsys_py_stmt;

typedef struct nsys_py_file {
  const char *src;
  size_t n;
  size_t bom;                /* 3 when the file starts with a UTF-8 BOM */
  nsys_py_line *lines; int n_lines;
  nsys_py_stmt *stmts; int n_stmts;
  bool uses_tabs;            /* some statement is indented with a tab */
  bool incomplete;           /* the text ends inside brackets, a string or a
                                backslash continuation: not valid Python */
} nsys_py_file;

void nsys_py_scan(nsys_py_file *f, const char *src, size_t n);
void nsys_py_free(nsys_py_file *f);

/* Index of the statement that starts on `line`, or -1. */
int nsys_py_stmt_at_line(const nsys_py_file *f, int line);
/* Last statement index of the syntactic unit starting at s: a decorated
 * def/class (from the first decorator), or a compound statement with its
 * elif/else/except/finally/case clauses and their bodies. */
int nsys_py_unit_end(const nsys_py_file *f, int s);
/* True for clause headers that cannot stand alone (elif, else, except, ...). */
bool nsys_py_is_clause(nsys_py_kind k);

#endif
