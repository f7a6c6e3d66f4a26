/* Forwarding header: the cancellable sort lives in common/csort.h. */
#include "common/csort.h"
