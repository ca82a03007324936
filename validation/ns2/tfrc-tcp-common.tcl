# Scenarios b and c: one TFRC flow and one TCP NewReno flow through a dumbbell.
# Sourced by tfrc-tcp-droptail.tcl and tfrc-tcp-red.tcl, which set `bottleneck_queue`
# (DropTail or RED) and configure the queue class first.
#
#   s_tfrc --(100 Mbps, 5 ms)---+                              +--(100 Mbps, 5 ms)---> d_tfrc
#                               r1 ==(10 Mbps, 20 ms, Q)==> r2
#   s_tcp  --(100 Mbps, 5.3 ms)-+                              +--(100 Mbps, 5.3 ms)-> d_tcp
#
# All links duplex with the same parameters both ways. Bottleneck queue Q (both directions):
# limit 50 packets. Access links: DropTail, ns-2's default limit 50 (never fills).
# TCP: Agent/TCP/Newreno + Agent/TCPSink (an ACK per packet), FTP, packetSize_ 1000
# (1040 B on the wire), window_ 1000, started at 0.1 s. TFRC: ns-2 defaults, started at
# 0.37 s. 300 s.
#
# usage: ns tfrc-tcp-<queue>.tcl <seed>
source [file join [file dirname [info script]] lib.tcl]

set seed [lindex $argv 0]

set ns [new Simulator]
seed_rng $seed

set s_tfrc [$ns node]
set s_tcp  [$ns node]
set r1     [$ns node]
set r2     [$ns node]
set d_tfrc [$ns node]
set d_tcp  [$ns node]

$ns duplex-link $s_tfrc $r1 100Mb 5ms DropTail
$ns duplex-link $s_tcp  $r1 100Mb 5.3ms DropTail
$ns duplex-link $r1 $r2 10Mb 20ms $bottleneck_queue
$ns duplex-link $r2 $d_tfrc 100Mb 5ms DropTail
$ns duplex-link $r2 $d_tcp  100Mb 5.3ms DropTail
$ns queue-limit $r1 $r2 50
$ns queue-limit $r2 $r1 50

# TFRC, fid 1
set tfrc [new Agent/TFRC]
$tfrc set fid_ 1
set tfrc_sink [new Agent/TFRCSink]
$ns attach-agent $s_tfrc $tfrc
$ns attach-agent $d_tfrc $tfrc_sink
$ns connect $tfrc $tfrc_sink
instrument_tfrc $tfrc $tfrc_sink

# TCP NewReno, fid 2
set tcp [new Agent/TCP/Newreno]
$tcp set fid_ 2
$tcp set window_ 1000
$tcp set packetSize_ 1000
set tcp_sink [new Agent/TCPSink]
$ns attach-agent $s_tcp $tcp
$ns attach-agent $d_tcp $tcp_sink
$ns connect $tcp $tcp_sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp

# Delivered bytes: a flow monitor on each flow's last hop (r2 -> d_*), which carries that
# flow's data packets only; departures from that link's queue, in bytes on the wire (hdr_cmn
# size: TFRC 1032, TCP 1040). Nothing is lost after r2 (100 Mbps, never queues), so these are
# the bytes the receiver gets, 5 ms (5.3 ms) and one 100 Mbps transmission time later.
set fm_tfrc [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r2 $d_tfrc] $fm_tfrc
set fm_tcp [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r2 $d_tcp] $fm_tcp
# Bottleneck drops by flow: a flow monitor on r1 -> r2 (RED early and forced drops alike).
set fm_bn [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r1 $r2] $fm_bn

proc bn_flow {fid var} {
    global fm_bn
    set f [[$fm_bn classifier] lookup auto 0 0 $fid]
    if {$f == ""} { return 0 }
    return [$f set $var]
}

proc snapshot {tag} {
    global tfrc tfrc_sink tcp fm_tfrc fm_tcp
    result tfrc_sent_pkts_$tag [$tfrc set ndatapack_]
    result tfrc_sink_bytes_$tag [$tfrc_sink set bytes_]
    result tfrc_delivered_bytes_$tag [$fm_tfrc set bdepartures_]
    result tcp_delivered_bytes_$tag [$fm_tcp set bdepartures_]
    result tcp_ack_$tag [$tcp set ack_]
    result tcp_sent_pkts_$tag [$tcp set ndatapack_]
    result tcp_rexmit_pkts_$tag [$tcp set nrexmitpack_]
    result tfrc_bn_drops_$tag [bn_flow 1 pdrops_]
    result tcp_bn_drops_$tag [bn_flow 2 pdrops_]
    result tfrc_bn_arrivals_$tag [bn_flow 1 parrivals_]
    result tcp_bn_arrivals_$tag [bn_flow 2 parrivals_]
}

proc series {t} {
    global ns tfrc tfrc_sink fm_tcp tcp T1
    puts stderr "SERIES $t tfrc_sent_pkts=[$tfrc set ndatapack_] tfrc_sink_bytes=[$tfrc_sink set bytes_] tfrc_rate_Bps=[$tfrc set rate_] tcp_delivered_bytes=[$fm_tcp set bdepartures_] tcp_cwnd=[$tcp set cwnd_]"
    if {$t + 1 <= $T1} { $ns at [expr {$t + 1}] "series [expr {$t + 1}]" }
}

proc finish {} {
    global ns tfrc
    snapshot t300
    report_rate
    result tfrc_true_loss_rate [$tfrc set true_loss_rate_]
    result end_time [$ns now]
    exit 0
}

proc report_queue {} {
    global ns r1 r2
    set q [[$ns link $r1 $r2] queue]
    foreach v {limit_} { result bn_$v [$q set $v] }
    if {[$q info class] == "Queue/RED"} {
        foreach v {q_weight_ thresh_ maxthresh_ thresh_queue_ maxthresh_queue_ mean_pktsize_
                   queue_in_bytes_ bytes_ gentle_ linterm_ wait_ use_mark_p_ drop_tail_
                   setbit_ adaptive_} {
            result red_$v [$q set $v]
        }
    }
}

result seed $seed
$ns at 0.1 "$ftp start"
$ns at 0.37 "$tfrc start"
$ns at 0.5 "report_queue"
$ns at 1 "series 1"
start_rate_sampler $tfrc
$ns at $T0 "snapshot t20"
$ns at $T1 "finish"
$ns run
