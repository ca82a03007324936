# RAP beside TCP NewReno through a 4 Mbit/s drop-tail bottleneck (ns-2.35's Agent/RAP), the
# ns-2 side of crates/scenario/tests/rap.rs's scenario `rap-beside-tcp`:
#   ns rap-tcp.tcl <seed> <tcp window> <1: with TCP, 0: RAP alone> [<1: fine-grain adaptation>]
# prints, per flow (1 RAP, 2 TCP), the packets and bytes that left the bottleneck queue in the
# 60 s run, and its drops there. Starts are uniform in [0, 1) s from an RNG seeded seed + 1.
set ns [new Simulator]
set seed [lindex $argv 0]
set tcpwin [lindex $argv 1]
set withtcp [lindex $argv 2]
set finegrain [lindex $argv 3]
if {$finegrain == ""} { set finegrain 0 }
Agent/RAP set useFineGrain_ $finegrain
global defaultRNG
for {set i 0} {$i < $seed} {incr i} { $defaultRNG next-substream }
foreach n {s0 s1 r0 r1 d0 d1} { set $n [$ns node] }
$ns duplex-link $s0 $r0 100Mb 2ms DropTail
$ns duplex-link $s1 $r0 100Mb 2ms DropTail
$ns duplex-link $r0 $r1 4Mb 20ms DropTail
$ns duplex-link $r1 $d0 100Mb 2ms DropTail
$ns duplex-link $r1 $d1 100Mb 2ms DropTail
$ns queue-limit $r0 $r1 25
$ns queue-limit $r1 $r0 25
Agent/RAP set packetSize_ 1000
Agent/RAP set ipg_ 0.05
Agent/RAP set srtt_ 0.05
set rap [new Agent/RAP]
set rapsink [new Agent/RAP]
$ns attach-agent $s0 $rap
$ns attach-agent $d0 $rapsink
$ns connect $rap $rapsink
set tcp [new Agent/TCP/Newreno]
$tcp set packetSize_ 1000
$tcp set window_ $tcpwin
set sink [new Agent/TCPSink]
$ns attach-agent $s1 $tcp
$ns attach-agent $d1 $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
set rng [new RNG]
$rng seed [expr {$seed + 1}]
set u [new RandomVariable/Uniform]
$u use-rng $rng
$u set min_ 0
$u set max_ 1
$ns at [$u value] "$rap start"
if {$withtcp} { $ns at [$u value] "$ftp start" }
# count bytes arriving at the sinks via a flow monitor on the bottleneck
set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r0 $r1] $fmon
$rap set fid_ 1
$tcp set fid_ 2
proc finish {} {
    global fmon
    foreach f [$fmon flows] {
        puts "flow [$f set flowid_] departures [$f set pdepartures_] bytes [$f set bdepartures_] drops [$f set pdrops_] arrivals [$f set parrivals_]"
    }
    exit 0
}
$ns at 60.0 "finish"
$ns run
