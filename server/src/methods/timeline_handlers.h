/* The timeline module's handlers, one file each, listed in the table of
 * timeline_methods.c. */
#ifndef NSYS_METHODS_TIMELINE_HANDLERS_H
#define NSYS_METHODS_TIMELINE_HANDLERS_H

#include "rpc/call.h"

cJSON *nsys_method_timeline_range(nsys_call *call);  /* timeline_range.c */
cJSON *nsys_method_nvtx_tree(nsys_call *call);       /* nvtx_tree_methods.c */
cJSON *nsys_method_kernel_details(nsys_call *call);  /* kernel_details_methods.c */
cJSON *nsys_method_search(nsys_call *call);          /* search_methods.c */
cJSON *nsys_method_export_perfetto(nsys_call *call); /* perfetto_export_methods.c */

#endif
