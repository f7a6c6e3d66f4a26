/* The MCP tool table (mcp/mcp_tools.h): every tool names a method of the
 * table, one analysis_<name> per registered analysis with its params at the
 * top of the arguments, fixed params that arguments cannot override, and a
 * text rendering clipped on a character boundary. */
#include <stdlib.h>
#include <string.h>

#include "../common/nsys_check.h"
#include "analysis/analysis.h"
#include "mcp/mcp_tools.h"
#include "rpc/json_int.h"
#include "rpc/json_write.h"

static char *print(const cJSON *o) { return nsys_json_print(o, false); }
static cJSON *parse(const char *s) { return nsys_json_parse(s, strlen(s), NULL); }

static void test_table(void) {
  size_t n;
  const nsys_mcp_tool *t = nsys_mcp_tools(&n);
  size_t n_analysis = 0, n_registry = 0;
  for (const nsys_analysis *a = nsys_analyses; a->name; a++) n_registry++;
  for (size_t i = 0; i < n; i++) {
    CHECK(t[i].method && nsys_method_find(t[i].method->name) == t[i].method);
    CHECK(nsys_mcp_tool_find(t[i].name) == &t[i]);
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(t[i].def, "inputSchema");
    CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(in, "properties")));
    CHECK(!cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(in, "properties"), "workDoneToken"));
    CHECK(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t[i].def, "outputSchema")));
    if (t[i].analysis) {
      n_analysis++;
      CHECK(strncmp(t[i].name, "analysis_", 9) == 0 && strcmp(t[i].name + 9, t[i].analysis) == 0);
      CHECK(strcmp(t[i].method->name, "analysis/run") == 0);
    }
  }
  CHECK_EQ(n_analysis, n_registry);
  CHECK(nsys_mcp_tool_find("nope") == NULL && nsys_mcp_tool_find(NULL) == NULL);
  CHECK(!nsys_mcp_tool_find("profile_open")->agent && nsys_mcp_tool_find("report")->agent);
}

/* The method params of tool with arguments args (JSON), printed. */
static void check_params(const char *tool, const char *args, const char *want) {
  char err[128];
  cJSON *a = parse(args);
  cJSON *p = nsys_mcp_tool_params(nsys_mcp_tool_find(tool), a, err, sizeof err);
  char *s = print(p);
  CHECK_STR(s, want);
  free(s);
  cJSON_Delete(p);
  cJSON_Delete(a);
}

static void test_params(void) {
  /* an analysis's own params go under params; name is the tool's */
  check_params("analysis_top_kernels", "{\"profileId\":\"p1\",\"limit\":3,\"start\":1726751178667767434,\"name\":\"x\"}",
               "{\"name\":\"top_kernels\",\"params\":{\"limit\":3,\"start\":1726751178667767434},\"profileId\":\"p1\"}");
  /* fixed params win; defaults apply only when absent; workDoneToken is MCP's business */
  check_params("kernel_explain", "{\"name\":\"k\",\"llm\":true,\"workDoneToken\":1}", "{\"name\":\"k\",\"llm\":false}");
  check_params("timeline_summary", "{\"width\":5}", "{\"width\":5,\"maxEvents\":16,\"format\":\"objects\"}");
  char err[128];
  cJSON *arr = cJSON_CreateArray();
  CHECK(nsys_mcp_tool_params(nsys_mcp_tool_find("search"), arr, err, sizeof err) == NULL && strstr(err, "object"));
  cJSON_Delete(arr);
}

static void test_text(void) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "s", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"); /* {"s":"éééé"}: 16 bytes */
  char *t = nsys_mcp_result_text(nsys_mcp_tool_find("search"), r, 8);
  CHECK(strncmp(t, "{\"s\":\"\xc3\xa9", 8) == 0 && t[8] == '\n'); /* cut before the split character */
  CHECK(strstr(t, "8 of 16 bytes shown") != NULL);
  free(t);
  t = nsys_mcp_result_text(nsys_mcp_tool_find("search"), r, 100);
  CHECK_STR(t, "{\"s\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"}");
  free(t);
  cJSON_AddStringToObject(r, "rendered", "# md");
  t = nsys_mcp_result_text(nsys_mcp_tool_find("report"), r, 100);
  CHECK_STR(t, "# md");
  free(t);
  cJSON_Delete(r);
}

int main(void) {
  test_table();
  test_params();
  test_text();
  return nsys_check_done("test_mcp_tools");
}
