#!/bin/sh
# Regenerate the generated suite litmus/gen/ (docs/gen.md "A suite of about 1,000 tests"),
# then record its expectations with both exact engines: run from the repository's root.
#   litmus/gen/regenerate.sh            # writes the tests (deterministic: same files each time)
#   pisa-mm promote -j 2 litmus/gen     # records X.litmus.expected (smt and explicit agree)
# The tests listed in EXCLUDED below are removed after generation (litmus/README.md says why).
set -eu
S=litmus/gen
pisa-mm gen all --orders weak,rlx,sync,sc --spaces global,shared,generic \
    --placements same-wg,diff-wg -o $S
pisa-mm gen MP SB LB IRIW WRC ISA2 R S --orders sync,sc --scopes wg,gpu,sys \
    --placements same-sg,same-wg,diff-wg,diff-gpu,host -o $S
pisa-mm gen MP SB LB R S 2+2W CoRR CoWW CoRW2 CoWR --orders rlx,rel-acq,acq_rel \
    --rmw xchg,add,cas -o $S
pisa-mm gen MP SB LB IRIW WRC ISA2 R S 2+2W RWC W+RWC Z6.0 Z6.3 \
    --fences sc,acq_rel,rel-acq,sg,sc.generic --scopes wg,gpu,sys --placements same-wg,diff-wg -o $S
pisa-mm gen --cycle "Rfe DpAddrdW Rfe DpAddrdW" --cycle "Rfe DpDatadW Rfe DpDatadW" \
    --cycle "Rfe DpCtrldW Rfe DpCtrldW" --cycle "PodWW Rfe DpAddrdR Fre" \
    --cycle "PodWW Rfe DpCtrldR Fre" --cycle "Rfe PodRW Rfe DpAddrdR Fre" \
    --orders rlx,sync --spaces global,shared --placements same-wg,diff-wg -o $S
EXCLUDED=""
for t in $EXCLUDED; do rm -f "$S/$t.litmus" "$S/$t.litmus.expected"; done
