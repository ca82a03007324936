# Shared instrumentation for the ns-2.35 TFRC reference scenarios (sourced by each scenario).
#
# Our lines go to stderr (unbuffered; ns-2's C++ printf's below go to stdout, and the two
# buffers would interleave mid-line on one stream); the driver (run.py) parses both:
#   RESULT <key> <value>      a snapshot value (keys carry the time: ..._t20, ..._t300)
#   SERIES <t> <k=v> ...      one line per second
#   PARAM <key> <value>       an effective parameter read back from ns-2
# and, from ns-2's own C++ printf's (printStatus_ on the sender, printLoss_ on the sink):
#   "time: T rate: R" / "time: T packetrate: P"  after each feedback report (tfrc.cc, recv())
#   "time: T loss_rate: P"                     for each report the sink sends (tfrc-sink.cc,
#                                              est_loss_WALI() -> print_loss())

# The measurement window [T0, T1]: the first 20 s (slow start and the first loss events) are
# left out; T1 is the end of the run.
set T0 20.0
set T1 300.0
set RATE_DT 0.01

proc seed_rng {seed} {
    # ns-2's default RNG (MRG32k3a, tools/rng.cc) drives the ErrorModel's and RED's draws
    # (Random::uniform()). Run k uses substream k of ns-2's default stream (substreams are
    # 2^76 draws apart; the stream ns-2 starts with has all six state words = 1).
    # Substream 0 is avoided on purpose: its first draw is 0.00034, so an unseeded ns-2 run
    # with an ErrorModel loses its very first packet (TFRC then waits 3.3 s at InitRate_ for
    # its second one). `$defaultRNG seed N` is avoided too: it sets all six state words to N,
    # and for a small N the first draws are again tiny.
    global defaultRNG
    for {set i 0} {$i < $seed} {incr i} {
        $defaultRNG next-substream
    }
}


proc result {key value} {
    puts stderr "RESULT $key $value"
}

# Instrument the TFRC sender/sink pair. printStatus_/printLoss_ only print; they change
# nothing in the protocol.
proc instrument_tfrc {tfrc sink} {
    $tfrc set printStatus_ 1
    $sink set printLoss_ 1
}

# Time average of the sender's bound rate_ (bytes/s of packetSize_, i.e. without the 32-byte
# header) over [T0, T1): sampled at T0 + k*RATE_DT, k = 0, 1, ... (call start_rate_sampler).
set rate_sum 0.0
set rate_n 0
proc sample_rate {tfrc k} {
    global ns T0 T1 RATE_DT rate_sum rate_n
    set rate_sum [expr {$rate_sum + [$tfrc set rate_]}]
    incr rate_n
    set next [expr {$T0 + ($k + 1) * $RATE_DT}]
    if {$next < $T1 - 1e-9} {
        $ns at $next "sample_rate $tfrc [expr {$k + 1}]"
    }
}
proc start_rate_sampler {tfrc} {
    global ns T0
    $ns at $T0 "sample_rate $tfrc 0"
}
proc report_rate {} {
    global rate_sum rate_n
    result tfrc_rate_Bps_mean [expr {$rate_sum / $rate_n}]
    result tfrc_rate_samples $rate_n
}
