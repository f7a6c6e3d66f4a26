#!/usr/bin/env python3
"""Generates the kernel knowledge base's C tables from its source files.

usage: gen_kb_tables.py OUTPUT.c INPUT.json...

The knowledge base is kept human-editable in data/kernels/<family>.json (format in
server/src/explain/kb.h). At build time this script validates every file
(JSON, required keys, exactly one matcher per pattern, unique ids, well-formed
suggestions with their preconditions) and writes one static const
nsys_kb_pattern per pattern, so the binary parses no JSON at run time: a
broken file fails the build, naming the file and the pattern. kb.c copies the
table once and compiles its regular expressions (POSIX ERE, checked there).
"""
import json
import os
import sys

MATCHERS = ("exact", "prefix", "contains", "glob", "regex")
KINDS = {"exact": "NSYS_KB_EXACT", "prefix": "NSYS_KB_PREFIX", "contains": "NSYS_KB_CONTAINS",
         "glob": "NSYS_KB_GLOB", "regex": "NSYS_KB_REGEX"}
FIELDS = {"any": "NSYS_KB_FIELD_ANY", "short": "NSYS_KB_FIELD_SHORT", "full": "NSYS_KB_FIELD_FULL"}


class KbError(Exception):
    pass


def c_str(s):
    """A C string literal: printable ASCII kept, the rest as 3-digit octal
    escapes (no hex-escape run-on, no trigraphs)."""
    if s is None:
        return "NULL"
    out = ['"']
    for b in s.encode("utf-8"):
        c = chr(b)
        if c in '"\\?':
            out.append("\\" + c)
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            out.append("\\%03o" % b)
    out.append('"')
    return "".join(out)


def nonempty_str(v):
    return isinstance(v, str) and v != ""


def pattern_rows(path, doc, ids):
    """Validated patterns of one file, as dicts of C initializer values."""
    name = os.path.basename(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("patterns"), list):
        raise KbError(f"{name}: expected an object with a 'patterns' array")
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise KbError(f"{name}: 'defaults' must be an object")
    family = doc.get("family") if nonempty_str(doc.get("family")) else name
    rows = []
    for i, p in enumerate(doc["patterns"]):
        if not isinstance(p, dict):
            raise KbError(f"{name}: patterns[{i}]: expected an object")
        pid = p.get("id")
        where = f"{name}: patterns[{i}] ({pid if isinstance(pid, str) else '?'})"
        if not nonempty_str(pid):
            raise KbError(f"{where}: missing 'id'")
        if pid in ids:
            raise KbError(f"{where}: duplicate id (also in {ids[pid]})")
        ids[pid] = name
        kinds = [k for k in MATCHERS if nonempty_str(p.get(k))]
        if len(kinds) != 1 or any(k in p and not nonempty_str(p[k]) for k in MATCHERS):
            raise KbError(f"{where}: exactly one non-empty matcher of {MATCHERS} is required")
        row = {"id": pid, "family": family, "kind": KINDS[kinds[0]], "match": p[kinds[0]]}
        for key in ("origin", "category", "bound", "description"):
            v = p.get(key, defaults.get(key))
            if not nonempty_str(v):
                raise KbError(f"{where}: missing '{key}'")
            row[key] = v
        title = p.get("title")
        if title is not None and not isinstance(title, str):
            raise KbError(f"{where}: 'title' must be a string")
        row["title"] = title or None
        field = p.get("field", "any")
        if field not in FIELDS:
            raise KbError(f"{where}: 'field' must be one of {tuple(FIELDS)}")
        row["field"] = FIELDS[field]
        if not isinstance(p.get("icase", False), bool):
            raise KbError(f"{where}: 'icase' must be true or false")
        row["icase"] = p.get("icase", False)
        prio = p.get("priority", 0)
        if not isinstance(prio, int) or isinstance(prio, bool):
            raise KbError(f"{where}: 'priority' must be an integer")
        row["priority"] = prio
        sugg = p.get("suggestions", defaults.get("suggestions", []))
        if not isinstance(sugg, list):
            raise KbError(f"{where}: 'suggestions' must be an array")
        texts, fws, mincc = [], [], []
        for j, s in enumerate(sugg):
            if isinstance(s, str):
                texts.append(s), fws.append(None), mincc.append(0)
                continue
            if not isinstance(s, dict) or not isinstance(s.get("text"), str):
                raise KbError(f"{where}: suggestions[{j}]: expected a string or an object with \"text\"")
            fw = s.get("frameworks")
            if fw is not None and (not isinstance(fw, list) or not fw or
                                   not all(nonempty_str(f) and "," not in f for f in fw)):
                raise KbError(f"{where}: suggestions[{j}].frameworks: expected a list of framework names")
            cc = s.get("minCc", 0)
            if not isinstance(cc, int) or isinstance(cc, bool) or (cc != 0 and not 30 <= cc <= 150):
                raise KbError(f"{where}: suggestions[{j}].minCc: expected a compute capability x10 (30..150)")
            texts.append(s["text"]), fws.append(",".join(fw) if fw else None), mincc.append(cc)
        row["suggestions"], row["frameworks"], row["mincc"] = texts, fws, mincc
        ex = p.get("examples")
        if not isinstance(ex, list) or not ex or not all(nonempty_str(e) for e in ex):
            raise KbError(f"{where}: at least one example name is required")
        row["examples"] = ex
        rows.append(row)
    return rows


def generate(inputs):
    inputs = sorted(inputs, key=os.path.basename)
    ids, rows = {}, []
    for path in inputs:
        try:
            doc = json.loads(open(path, "rb").read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise KbError(f"{os.path.basename(path)}: not valid JSON ({e})")
        rows.extend(pattern_rows(path, doc, ids))
    out = ["/* Generated by gen_kb_tables.py from data/kernels/<family>.json: do not edit. */",
           '#include "explain/kb.h"', ""]
    for n, r in enumerate(rows):
        out.append(f"static const char *const nsys__s{n}[] = {{{', '.join(c_str(s) for s in r['suggestions']) or 'NULL'}}};")
        out.append(f"static const char *const nsys__f{n}[] = {{{', '.join(c_str(s) for s in r['frameworks']) or 'NULL'}}};")
        out.append(f"static const int nsys__c{n}[] = {{{', '.join(str(c) for c in r['mincc']) or '0'}}};")
        out.append(f"static const char *const nsys__e{n}[] = {{{', '.join(c_str(s) for s in r['examples'])}}};")
    out.append("")
    out.append("const nsys_kb_pattern nsys_kb_table[] = {")
    for n, r in enumerate(rows):
        out.append(
            f"  {{.id = {c_str(r['id'])}, .family = {c_str(r['family'])}, .kind = {r['kind']}, "
            f".match = {c_str(r['match'])}, .match_len = {len(r['match'].encode('utf-8'))}, .field = {r['field']}, "
            f".icase = {'true' if r['icase'] else 'false'}, .priority = {r['priority']}, "
            f".origin = {c_str(r['origin'])}, .category = {c_str(r['category'])}, .bound = {c_str(r['bound'])}, "
            f".title = {c_str(r['title'])}, .description = {c_str(r['description'])}, "
            f".suggestions = nsys__s{n}, .suggestion_frameworks = nsys__f{n}, .suggestion_min_cc = nsys__c{n}, "
            f".n_suggestions = {len(r['suggestions'])}, .examples = nsys__e{n}, .n_examples = {len(r['examples'])}}},")
    out.append("};")
    out.append(f"const int nsys_kb_table_count = {len(rows)};")
    out.append("const char *const nsys_kb_table_files[] = {" +
               ", ".join(c_str(os.path.basename(p)) for p in inputs) + "};")
    out.append(f"const int nsys_kb_table_file_count = {len(inputs)};")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    try:
        text = generate(sys.argv[2:])
    except KbError as e:
        raise SystemExit(f"knowledge base: {e}")
    with open(sys.argv[1], "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
