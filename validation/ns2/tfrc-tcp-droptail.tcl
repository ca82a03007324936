# Scenario b, tfrc-tcp-droptail: TFRC and TCP NewReno through a 10 Mbps / 20 ms drop-tail
# bottleneck of 50 packets (ns-2 Queue/DropTail: an arrival is dropped when the packets waiting
# plus one reach limit_, i.e. 49 waiting + 1 in transmission). See tfrc-tcp-common.tcl.
#
# usage: ns tfrc-tcp-droptail.tcl <seed>
set bottleneck_queue DropTail
source [file join [file dirname [info script]] tfrc-tcp-common.tcl]
