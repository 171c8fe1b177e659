//===- FlamiaOps.td - flamia operations --------------------*- tablegen -*-===//

#ifndef FLAMIA_OPS_TD
#define FLAMIA_OPS_TD

include "FlamiaDialect.td"

#endif // FLAMIA_OPS_TD
