// Every command's output: text and JSON, one header per command. The library only builds strings;
// the CLI prints. Include the one you need; this header gathers them for callers that print several.
#pragma once

#include "p2pcheck/explain/explanation.h"
#include "p2pcheck/report/check.h"
#include "p2pcheck/report/common.h"
#include "p2pcheck/report/compact_json.h"
#include "p2pcheck/report/explain.h"
#include "p2pcheck/report/paths.h"
#include "p2pcheck/report/topo.h"
#include "p2pcheck/report/topo_dot.h"
