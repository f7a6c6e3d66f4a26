/* JSON text helpers of the methods; see json_text.h. */
#include "methods/json_text.h"

#include <stdlib.h>

#include "rpc/json_write.h"

const char nsys_digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";

const char *nsys_escaped_name(nsys_escaped_names *n, uint32_t id) {
  if (id >= n->tab->count) return "\"\"";
  if (!n->esc) {
    n->esc = nsys_xcalloc(n->tab->count, sizeof(char *));
    n->len = nsys_xcalloc(n->tab->count, sizeof(uint32_t));
  }
  if (!n->esc[id]) {
    nsys_strbuf b;
    nsys_strbuf_init(&b);
    nsys_json_escape(&b, nsys_strtab_get(n->tab, id));
    n->len[id] = (uint32_t)b.len;
    n->esc[id] = nsys_strbuf_steal(&b);
  }
  return n->esc[id];
}

void nsys_escaped_names_free(nsys_escaped_names *n) {
  if (n->esc)
    for (uint32_t i = 0; i < n->tab->count; i++) free(n->esc[i]);
  free(n->esc);
  free(n->len);
}

/* The written JSON text becomes the Raw item's text without a copy (a whole
 * profile's tree is ~150 MB): cJSON's hooks are the default malloc/free (no
 * cJSON_InitHooks anywhere), which is what nsys_strbuf allocates with. */
cJSON *nsys_json_raw_take(nsys_strbuf *b) {
  cJSON *r = cJSON_CreateRaw("");
  if (!r) return NULL;
  cJSON_free(r->valuestring);
  r->valuestring = nsys_strbuf_steal(b);
  return r;
}
