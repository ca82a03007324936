"""Type stubs for `fairstream._core`, the PyO3 extension built from crates/py/src/lib.rs.

Every name the module exports is here, with its signature; tests/python/test_core_stubs.py checks
that the stub and the built module name the same functions, classes and members, with the same
parameters. A change to crates/py/src/lib.rs changes this file too.
"""

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, final

__version__: Final[str]

class ScenarioError(ValueError):
    """A scenario that cannot be run; the message names file, line, field and the expected form."""

class ScenarioWarning(UserWarning):
    """A scenario that runs but is probably not what was meant; the message names file, line and field."""

def validate(text: str, filename: str, max_memory: int | None = None) -> str:
    """Checks a scenario and returns it with every default filled in, as TOML; with
    `max_memory`, also that its run's estimated memory fits (ScenarioError otherwise).

    Raises ScenarioError; issues ScenarioWarning for each warning.
    """

def resolve(text: str, filename: str) -> tuple[str, float]:
    """Checks a scenario (as `validate`) and returns it with every default filled in, as TOML,
    and its run's estimated memory in bytes: the run fits a `max_memory` when the estimate is at
    most that (`validate` with `max_memory` raises the refusal that names the field).

    Raises ScenarioError; issues ScenarioWarning for each warning.
    """

def build_id() -> str:
    """A hash of this extension module's file, as 32 hex digits: which build of fairstream runs
    (a rebuild of any of its crates gives another id). The run cache keys every run by it."""

def join_ipc_streams(streams: list[bytes]) -> list[tuple[bytes, list[int]]]:
    """Arrow IPC streams, in order, joined where consecutive ones share a schema: (one stream,
    the rows of each input it holds) per group. ValueError names an input that is no stream."""

def toml_dumps(doc: Mapping[str, Any]) -> str:
    """`doc` as TOML text that tomllib reads back into an equal dict (`fairstream.tomlio.dumps`).
    A value TOML cannot hold (None, a set, an object, an int beyond 64 bits) is a TypeError
    naming its key path."""

@final
class Simulation:
    """A simulation run, advanced from Python with `advance(until_s)`."""

    def __init__(
        self,
        text: str,
        filename: str,
        seed: int | None = None,
        max_memory: int | None = None,
        capture_dir: str | None = None,
    ) -> None:
        """Loads and checks the scenario (ScenarioError) and builds the network; `seed` overrides
        the scenario's (0 to 2**64 - 1). A run whose estimated memory exceeds `max_memory`
        (default: the memory available) is refused (ScenarioError). Captures are written as the
        run goes into `capture_dir` (made when a link is captured and it is missing; default: the
        temporary directory)."""

    @property
    def estimate(self) -> dict[str, Any]:
        """What the run was estimated to need before it started: `events`, `bytes` (in all) and
        `parts` (bytes of each part: nodes, links, flows, packets, series, trace, metrics)."""

    def table(self, name: str) -> ArrowTable | None:
        """Table `name` of the finished run (`flow_series`, `flow_summary`, `link_series`,
        `metrics`, `packets`) as Arrow data, written nowhere; None for a table not recorded."""

    @property
    def duration_s(self) -> float:
        """Simulated seconds the run lasts."""

    @property
    def now_s(self) -> float:
        """Simulated seconds reached so far."""

    @property
    def events(self) -> int:
        """Events processed so far."""

    @property
    def wall_time_s(self) -> float:
        """Wall-clock seconds spent simulating so far."""

    @property
    def name(self) -> str:
        """The scenario's name."""

    @property
    def complete(self) -> bool:
        """Whether the run went to its end: False after `stop` ended it early."""

    @property
    def stopped_at_s(self) -> float | None:
        """Simulated seconds at which `stop` ended the run, or None."""

    def stop(self) -> None:
        """Ends a run that has not finished where it got to, so its results so far can be written."""

    def advance(self, until_s: float) -> bool:
        """Runs up to `until_s` simulated seconds without holding the GIL; True once finished."""

    def resolved_toml(self) -> str:
        """The scenario with every default filled in, as TOML."""

    def summary(self) -> dict[str, Any]:
        """The run's summary (as in summary.json); RuntimeError until the run is finished."""

    def table_ipc(self, name: str, compressed: bool = False) -> bytes | None:
        """Table `name` of the finished run as an Arrow IPC stream, its buffers zstd-compressed
        with `compressed`, or None for a table not recorded (`polars.read_ipc_stream` reads it)."""

    def table_parquet(self, name: str) -> bytes | None:
        """Table `name` of the finished run as the bytes of the Parquet file `write_results`
        writes for it (written nowhere), or None for a table not recorded."""

    def summary_json(self) -> str:
        """The run's summary as the JSON text of summary.json; RuntimeError until the run is finished."""

    def write_results(self, out_dir: str | os.PathLike[str]) -> None:
        """Writes the result directory (Parquet tables, summary.json, resolved scenario, pcaps);
        RuntimeError until the run is finished, OSError when writing fails."""

def mpeg_policy_table(gop: str) -> list[str]:
    """The frames of `gop` each scale sends (paper 001's Table 2), scale 0 first: the pattern's
    letters, `.` for a frame not sent. ValueError for a bad pattern."""

def mpeg_scale_rates(
    gop: str, frame_rate: float, i_bytes: int, p_bytes: int, b_bytes: int, max_packet_bytes: int = 1500
) -> tuple[list[float], list[float]]:
    """The rate of each scale, bit/s, scale 0 first, of a synthetic MPEG-1 stream as MPEG_APP
    sends it: (encoded, wire), the frames alone and with the headers of the packets of at most
    `max_packet_bytes` they are split into."""

def import_video(path: str | os.PathLike[str]) -> list[tuple[float, str, int]]:
    """The frames of the first video stream of the file at `path`, read with `ffprobe` (FFmpeg):
    (time, type, bytes) per frame in presentation order, time in seconds from the first frame,
    type "I", "P" or "B", bytes the encoded frame's size. ValueError naming the file when ffprobe
    is not installed, fails on the file, or reports a frame that cannot be used."""

@final
class ArrowTable:
    """One table of a run as an Arrow record batch, handed over through the Arrow PyCapsule
    interface (`__arrow_c_stream__`): `polars.DataFrame(table)` imports it without a copy."""

    @property
    def column_names(self) -> list[str]:
        """Column names, in order."""

    @property
    def num_rows(self) -> int:
        """Rows."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The table as an Arrow C stream PyCapsule."""

def parse_memory(text: str) -> int:
    """Bytes of a memory size written as `"8GB"`, `"512MiB"` or a number of bytes; ValueError
    saying what was expected otherwise."""

def schema() -> dict[str, Any]:
    """What the run's tables declare beside their fixed columns, as each protocol and queue
    discipline declares it: `metrics` (every metric: name, unit, meaning, and the flow-summary
    column that summarises it, or None), `summary_columns` (those flow-summary columns: name,
    unit, meaning, kind), `queue_columns` (the link summary's queue parameters) and
    `queue_series` (each interval series a queue discipline declares: its name, and its declared
    columns after link_id, link, t_start and t_end)."""

def parse_quantity(text: str, kind: str) -> int:
    """The one parser of quantities written with a unit, as scenarios write them: `kind` "rate"
    ("11Mbps", "1.5 Mbit/s") gives bit/s, "duration" ("35ms") nanoseconds, "size" ("1500B",
    "64KiB") bytes; ValueError saying what was expected otherwise. Python reads every number a run
    knows from its tables; this is for what a person wrote."""

def available_memory() -> tuple[int, str]:
    """The memory a run may use when no limit is given: `(bytes, where the figure comes from)`."""

def closest_name(word: str, names: Sequence[str]) -> str | None:
    """The name among `names` that `word` probably misspells, if one stands out (as a scenario's
    errors suggest it: one edit away, or a third of the length for a longer name, and nearer than
    any other)."""

def jain(xs: Sequence[float]) -> float:
    """Jain's fairness index of `xs`."""

def max_min_rates(
    capacity: Sequence[float], paths: Sequence[Sequence[int]], demand: Sequence[float]
) -> list[float]:
    """The max-min fair rates of flows over links, by progressive filling."""

def mathis(mss_bytes: float, rtt_s: float, p: float, delayed_ack: bool = False) -> float:
    """Mathis et al. TCP throughput, bytes/s."""

def padhye(mss_bytes: float, rtt_s: float, p: float, rto_s: float, wmax_pkts: float, b: float = 1.0) -> float:
    """Full PFTK (Padhye et al.) TCP throughput, bytes/s."""

def padhye_approx(
    mss_bytes: float, rtt_s: float, p: float, rto_s: float, wmax_pkts: float, b: float = 1.0
) -> float:
    """Approximate PFTK TCP throughput (TFRC's equation with ns-2's cap), bytes/s."""

def tfrc_equation(s_bytes: float, rtt_s: float, p: float, t_rto_s: float) -> float:
    """TFRC's throughput equation (RFC 5348 §3.1, b = 1, no cap on the timeout term), bytes/s."""

def cubic_response(p: float, rtt_s: float, c: float, beta: float) -> float:
    """RFC 9438's average CUBIC window under a deterministic loss rate, packets."""

def cubic_response_under_bernoulli_loss(
    p: float, rtt_s: float, rounds: int, seed: int, c: float, beta: float
) -> float:
    """The mean CUBIC window of RFC 9438's rules under Bernoulli loss, by Monte Carlo, packets."""

@final
class RealRun:
    """One end of a finished real run (`real_send`, `real_recv`)."""

    @property
    def stop_reason(self) -> str:
        """Why the run stopped: `finished`, `interrupted`, or what tripped the circuit breaker."""

    @property
    def complete(self) -> bool:
        """Whether the run went to its end (not interrupted by Ctrl-C)."""

    def resolved_toml(self) -> str:
        """What the run was asked to do, as TOML."""

    def summary(self) -> dict[str, Any]:
        """The run's summary (as in `summary.json`)."""

    def rt_stats(self) -> dict[str, Any]:
        """What the real-time driver saw besides the tables (as in `rt.json`)."""

    def table(self, name: str) -> ArrowTable | None:
        """Table `name` as Arrow data; None for a table a real run does not record."""

    def write_results(self, out_dir: str | os.PathLike[str]) -> None:
        """Writes the result files and `rt.json` into `out_dir` (created when absent, refused
        unless empty)."""

def real_time_protocols() -> list[str]:
    """The protocols `real_send` runs, by name, in the protocol list's order."""

def real_send(
    to: str,
    protocol: str,
    duration: str = "30s",
    rate_cap: str | None = None,
    on_live: Callable[[float, float, float | None, float], object] | None = None,
) -> RealRun:
    """Sends a flow of `protocol` to the receiver at `to` (`host:port`) for `duration`, at most
    `rate_cap`; `on_live(t_s, rate_bps, rtt_s, loss)` is called about once a second. Ctrl-C
    stops the run and returns what it has (`complete` False)."""

def real_recv(
    listen: str,
    on_live: Callable[[float, float, float | None, float], object] | None = None,
    idle_timeout_s: float = 3.0,
    wait_s: float | None = None,
) -> RealRun:
    """Receives one sender's flow on `listen` (`host:port`) until the sender has been silent for
    `idle_timeout_s` (or Ctrl-C); `wait_s`: how long to wait for a sender at all (None: forever)."""

class EmulatorUnavailable(RuntimeError):
    """This machine cannot emulate; the message names what is missing."""

@final
class EmuRun:
    """A finished (or stopped) emulation (`emulate`)."""

    @property
    def complete(self) -> bool:
        """Whether the run went to its end (not stopped by Ctrl-C)."""

    def resolved_toml(self) -> str:
        """The scenario with every default filled in, as TOML."""

    def summary(self) -> dict[str, Any]:
        """The run's summary (as in `summary.json`)."""

    def emu_stats(self) -> dict[str, Any]:
        """What only an emulation has (as in `emu.json`)."""

    def table(self, name: str) -> ArrowTable | None:
        """Table `name` as Arrow data; None for a table an emulation does not record."""

    def write_results(self, out_dir: str | os.PathLike[str]) -> None:
        """Writes the result files and `emu.json` into `out_dir` (created when absent, refused
        unless empty)."""

def emulate(
    text: str,
    filename: str,
    seed: int | None = None,
    on_live: Callable[[float, float, int, int], object] | None = None,
    device: str | None = None,
) -> EmuRun:
    """Emulates the scenario `text` (read from `filename`) in real time, the hosts on
    `device`s (one of `emu_devices()`, the first when None); `on_live(t_s, delivered_bps, dropped, late)` is
    called about once a second. Ctrl-C stops the run and returns what it has (`complete`
    False)."""

def emulator_unavailable() -> str | None:
    """What this machine lacks to emulate, or None when it can."""

def emu_devices() -> list[str]:
    """The kinds of host device `emulate` takes, by name, the default first."""
