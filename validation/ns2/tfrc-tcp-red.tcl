# Scenario c, tfrc-tcp-red: as tfrc-tcp-droptail with a RED bottleneck (both directions).
# ns-2.35 Queue/RED defaults except limit 50 (Queue limit_, set per link), thresh_ 5 and
# maxthresh_ 15. Left at the defaults, notably: queue_in_bytes_ true and bytes_ true with
# mean_pktsize_ 500, so thresholds and limit are in bytes: min 2500 B, max 7500 B, hard limit
# 50 * 500 = 25000 B (24 packets of 1040 B); q_weight_ -1 (automatic, set from the link);
# gentle_ true; linterm_ 10 (max_p 0.1); wait_ true; drop_tail_ true; no ECN.
# The effective values are read back and reported (PARAM red_*). See tfrc-tcp-common.tcl.
#
# usage: ns tfrc-tcp-red.tcl <seed>
Queue/RED set thresh_ 5
Queue/RED set maxthresh_ 15
set bottleneck_queue RED
source [file join [file dirname [info script]] tfrc-tcp-common.tcl]
