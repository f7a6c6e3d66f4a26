/* JSON of the capture module (methods/capture_methods.c), shared with the
 * CLI's capture commands (cli/cli_capture.c). */
#ifndef NSYS_METHODS_CAPTURE_JSON_H
#define NSYS_METHODS_CAPTURE_JSON_H

#include <cjson/cJSON.h>

#include "capture/doctor.h"
#include "capture/history.h"
#include "capture/nsys_capture.h"

/* A JSON array of strings as text (the history's command/flags/env columns). */
char *nsys_strv_json_text(const nsys_strv *s);
/* profile/doctor's result for a report (profileId NULL: omitted). */
cJSON *nsys_doctor_json(const nsys_doc_report *r, const char *profile_id);
/* The summary a run keeps of its doctor result: {verdict, rules}. */
char *nsys_doctor_summary_text(const cJSON *doctor);
/* A run as runs/list shows it (notes read from h). NULL after a failure on t. */
cJSON *nsys_run_json(nsys_history *h, const nsys_run *r, nsys_task *t);

#endif
