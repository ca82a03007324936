# Scenario a, tfrc-loss: one TFRC flow alone under independent (Bernoulli) packet loss.
#
#   a --(100 Mbps, 35 ms)--> r --(11 Mbps, 1 ms, Bernoulli loss)--> b
#   reverse path the same, without loss; drop-tail queues of 1000 packets in all 4 directions.
#   Agent/TFRC a -> Agent/TFRCSink b, started at 0.1 s, 300 s; ns-2 default TFRC parameters.
#
# usage: ns tfrc-loss.tcl <loss rate, e.g. 0.01> <seed>
source [file join [file dirname [info script]] lib.tcl]

set per [lindex $argv 0]
set seed [lindex $argv 1]

set ns [new Simulator]
seed_rng $seed

set a [$ns node]
set r [$ns node]
set b [$ns node]
$ns duplex-link $a $r 100Mb 35ms DropTail
$ns duplex-link $r $b 11Mb 1ms DropTail
$ns queue-limit $a $r 1000
$ns queue-limit $r $a 1000
$ns queue-limit $r $b 1000
$ns queue-limit $b $r 1000

# Bernoulli packet loss on r -> b. link-lossmodel puts the ErrorModel after the link
# (SimpleLink insert-linkloss): a lost packet has used the link's transmitter and propagation.
set em [new ErrorModel]
$em unit pkt
$em set rate_ $per
$ns link-lossmodel $em $r $b

set tfrc [new Agent/TFRC]
$tfrc set fid_ 1
set sink [new Agent/TFRCSink]
$ns attach-agent $a $tfrc
$ns attach-agent $b $sink
$ns connect $tfrc $sink
instrument_tfrc $tfrc $sink

$ns at 0.1 "$tfrc start"

proc snapshot {tag} {
    global tfrc sink
    result tfrc_sent_pkts_$tag [$tfrc set ndatapack_]
    result tfrc_sink_bytes_$tag [$sink set bytes_]
}

proc series {t} {
    global ns tfrc sink T1
    puts stderr "SERIES $t tfrc_sent_pkts=[$tfrc set ndatapack_] tfrc_sink_bytes=[$sink set bytes_] tfrc_rate_Bps=[$tfrc set rate_]"
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

result per $per
result seed $seed
$ns at 1 "series 1"
start_rate_sampler $tfrc
$ns at $T0 "snapshot t20"
$ns at $T1 "finish"
$ns run
