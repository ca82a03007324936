"""The ``fairstream`` command: run, validate, sweep, reproduce, report, bench.

Exit codes, the same for every command: 0 success; 1 the work ran but a result failed (a
reproduction's check, a benchmark's agreement with ns-3) or writing failed; 2 bad input (a bad
argument, a missing or unreadable file, a scenario that does not validate: the error names file,
line, field and the expected form, and nothing is written); 130 interrupted.

Start-up is kept light: each command imports what it needs when it runs (``run`` and
``validate`` never import polars, numpy or matplotlib; the core writes the Parquet tables and
the summary is printed from summary.json), and the version is looked up only for ``--version``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from .table import format_table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line `argv` (default: sys.argv[1:]); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from ._core import ScenarioError, ScenarioWarning

    _print_scenario_warnings_plainly(ScenarioWarning)
    try:
        return args.func(args, parser)
    except ScenarioError as err:
        print(err, file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError) as err:
        print(f"fairstream: {err}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as err:
        print(f"fairstream: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("fairstream: interrupted", file=sys.stderr)
        return 130


def _seed(text: str) -> int:
    """An argparse type: a seed from 0 to 2**63 - 1."""
    from .api import check_seed

    try:
        value = check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a seed is a whole number from 0 to 2**63 - 1, not {text!r}"
        ) from None
    assert value is not None
    return value


def _output_path(text: str) -> Path:
    """An argparse type: a non-empty path (`Path("")` would silently mean the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty path is no output directory; name one, such as `-o results`"
        )
    return Path(text)


def _memory_size(text: str) -> int:
    """An argparse type: bytes of a memory size such as 8GB, 512MiB or a number of bytes."""
    from ._core import parse_memory

    try:
        return parse_memory(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: Help of --max-memory, shared by run, sweep and reproduce.
_MAX_MEMORY_HELP = (
    "refuse, before it starts, a run estimated to need more memory than SIZE (e.g. 8GB, 512MiB; "
    "default: the memory available, shared among the runs going on at once)"
)


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return value


def _print_scenario_warnings_plainly(category: type[Warning]) -> None:
    """Shows scenario warnings as one line each, `FILE:LINE:COL: field ...: warning: ...`, like
    scenario errors, instead of Python's warning format; other warnings keep theirs."""
    import warnings

    shown = warnings.showwarning

    def show(message: Warning | str, cat: type[Warning], *rest: Any, **kw: Any) -> None:
        if issubclass(cat, category):
            print(message, file=sys.stderr)
        else:
            shown(message, cat, *rest, **kw)

    warnings.showwarning = show


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fairstream",
        description="A fast deterministic packet-level simulator for TCP-friendly streaming.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("run", help="run a scenario and write its results")
    p.add_argument("scenario", type=Path, help="scenario TOML file")
    p.add_argument(
        "-o", "--output", type=_output_path, required=True, help="output directory (created after the run)"
    )
    p.add_argument("--seed", type=_seed, help="override the scenario's seed")
    p.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MAX_MEMORY_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("validate", help="check scenario files")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument("--resolved", action="store_true", help="print each scenario with every default filled in")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("sweep", help="run a grid of overrides of a scenario in parallel")
    p.add_argument("scenario", type=Path, help="scenario TOML file")
    p.add_argument(
        "--set",
        action="append",
        required=True,
        metavar="PATH=V1,V2",
        help="dotted path and values, e.g. flow.0.rate=1Mbps,2Mbps (repeat for a grid)",
    )
    p.add_argument("-o", "--output", type=_output_path, required=True, help="output directory")
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: all cores)")
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (needs fairstream[dask])"
    )
    p.add_argument("--seed", type=_seed, help="override every run's seed")
    p.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MAX_MEMORY_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser("reproduce", help="reproduce published experiments and write a report")
    p.add_argument("ids", nargs="*", metavar="ID", help="experiment ids (default: all; see --list)")
    p.add_argument("-o", "--output", type=_output_path, help="output directory")
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: all cores)")
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (needs fairstream[dask])"
    )
    p.add_argument(
        "--quick", action="store_true", help="short runs and sweeps (for tests; not a reproduction)"
    )
    p.add_argument(
        "--replicas",
        type=int,
        metavar="N",
        help="phase replicas per experiment besides the canonical run: other seed, link delays perturbed "
        "by < 0.5 packet time (default: each experiment's own, 4, at most 1 with --quick; 0: canonical only)",
    )
    p.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MAX_MEMORY_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("report", help="write DIR/report.html from a reproduce output directory")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser(
        "bench",
        help="run the benchmarks B1-B3 in fairstream and ns-3 (fairstream[ns3]) on this machine",
        description="Runs B1-B3 in fairstream and, when ns-3 is installed (pip install 'fairstream[ns3]'), "
        "in ns-3: both simulators' results side by side with a verdict on agreement, and their "
        "in-process and whole-process times and peak memory. Exit code 1 when they disagree "
        "(full-length runs only).",
    )
    p.add_argument("ids", nargs="*", metavar="BENCH", help="benchmarks (default: all)")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds per benchmark, each process fresh; median and range shown (default 3)",
    )
    p.add_argument("--quick", action="store_true", help="2 s durations (a smoke test, not a measurement)")
    p.add_argument("--duration", metavar="D", help='simulate every benchmark for D (e.g. "20s") instead')
    p.add_argument("--no-ns3", action="store_true", help="fairstream only, even when ns-3 is installed")
    p.add_argument(
        "--scaling",
        action="store_true",
        help="instead: B2's shape with 8, 64, 256 and 1024 flows (fairstream; with --scaling-ns3 also ns-3)",
    )
    p.add_argument("--scaling-ns3", action="store_true", help="with --scaling: one ns-3 run per size too")
    p.add_argument(
        "--idle-wait",
        type=float,
        default=120.0,
        metavar="S",
        help="wait up to S seconds for a 1-min load below 0.5 before measuring (default 120)",
    )
    p.add_argument("--no-wait", action="store_true", help="measure at once (still warns when not idle)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also save the results as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_cmd_bench)
    return parser


def _cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .api import run

    result = run(
        args.scenario,
        output_dir=args.output,
        seed=args.seed,
        progress=not args.quiet,
        max_memory=args.max_memory,
    )
    # summary.json through `json` only: reading no table keeps polars out of this process.
    print(_flow_table(result.summary["flows"]))
    print(f"results: {result.output_dir}")
    return 0


def _cmd_validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ._core import ScenarioError
    from .api import validate

    failed = 0
    for path in args.files:
        try:
            resolved = validate(path)
        except (ScenarioError, ValueError) as err:
            print(err, file=sys.stderr)
            failed += 1
            continue
        except OSError as err:
            print(f"{path}: {err.strerror or err}", file=sys.stderr)
            failed += 1
            continue
        print(f"{path}: ok")
        if args.resolved:
            print(resolved)
    return 2 if failed else 0  # bad input, as for every other command


def _cmd_sweep(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .sweeps import parse_assignment, sweep

    grid: dict[str, list[Any]] = {}
    for assignment in args.set:
        try:
            path, values = parse_assignment(assignment)
        except ValueError as err:
            parser.error(str(err))
        if path in grid:
            parser.error(f"--set {path} given twice")
        grid[path] = values
    result = sweep(
        args.scenario,
        grid,
        args.output,
        jobs=args.jobs,
        scheduler=args.scheduler,
        seed=args.seed,
        quiet=args.quiet,
        max_memory=args.max_memory,
    )
    print(f"{len(result.points)} runs: {result.output_dir} (flows.parquet, sweep.json, runs/)")
    return 0


def _cmd_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .reproduce import EXPERIMENTS

    if args.list:
        print(
            format_table(
                ["id", "paper", "title"],
                [[e.id, f"{e.paper} {e.figure}", e.title] for e in EXPERIMENTS.values()],
            )
        )
        return 0
    if args.output is None:
        parser.error("reproduce needs -o DIR")
    if args.replicas is not None and args.replicas < 0:
        parser.error("--replicas must be 0 or more")
    unknown = [i for i in args.ids if i not in EXPERIMENTS]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; known: {', '.join(EXPERIMENTS)}")
    from .report import write_report
    from .reproduce.runner import reproduce

    results = reproduce(
        args.ids,
        args.output,
        jobs=args.jobs,
        quick=args.quick,
        quiet=args.quiet,
        scheduler=args.scheduler,
        replicas=args.replicas,
        max_memory=args.max_memory,
    )
    report = write_report(args.output)
    # The verdict is the canonical run's; the replicas' disagreements are counted beside it.
    print(
        format_table(
            ["experiment", "checks passed", "reported", "replicas", "phase-sensitive", "result"],
            [
                [
                    r["id"],
                    f"{r['passed']}/{r['total']}",
                    r.get("reported", 0),
                    r["phase"]["count"],
                    r["phase_sensitive"],
                    ("pass" if r["total"] else "reported") if r["passed"] == r["total"] else "FAIL",
                ]
                for r in results
            ],
        )
    )
    print(f"report: {report}")
    return 0 if all(r["passed"] == r["total"] for r in results) else 1


def _cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .report import write_report

    print(f"report: {write_report(args.dir)}")
    return 0


def _cmd_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .bench import BENCHMARKS, measure, write_json
    from .bench_format import format_report, format_scaling

    ids = [i.upper() for i in args.ids] or list(BENCHMARKS)
    unknown = [i for i in ids if i not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.scaling and args.ids:
        parser.error("--scaling runs B2's shape only; give no benchmarks with it")
    if args.scaling_ns3 and not args.scaling:
        parser.error("--scaling-ns3 needs --scaling")

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    # In the benchmarks ns-3 runs when installed (None) unless --no-ns3; in --scaling only on request.
    ns3 = args.scaling_ns3 if args.scaling else (False if args.no_ns3 else None)
    rows, meta = measure(
        ids,
        repeat=args.repeat,
        quick=args.quick,
        duration=args.duration,
        ns3=ns3,
        scaling=args.scaling,
        idle_wait_s=0.0 if args.no_wait else args.idle_wait,
        progress=progress,
    )
    print(format_scaling(rows, meta) if args.scaling else format_report(rows, meta))
    if args.json:
        write_json(args.json, rows, meta)
    disagree = [r["benchmark"] for r in rows if r.get("agreement") and not r["agreement"]["agree"]]
    return 1 if disagree and not meta["duration"] else 0


def _flow_table(flows: list[dict[str, Any]]) -> str:
    return format_table(
        [
            "flow",
            "protocol",
            "path",
            "throughput Mbit/s",
            "goodput Mbit/s",
            "loss %",
            "retransmits",
            "mean RTT ms",
        ],
        [
            [
                f["name"],
                f["protocol"],
                f"{f['src']}->{f['dst']}",
                f["throughput_bps"] / 1e6,
                f["goodput_bps"] / 1e6,
                100 * f["loss_rate"],
                f["retransmits"],
                f["mean_rtt_s"] * 1000 if f.get("mean_rtt_s") is not None else None,
            ]
            for f in flows
        ],
    )


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, sized to the terminal without importing `shutil` (and with it bz2,
    lzma and zlib), which argparse's own does for every formatter, one per `add_argument`."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        kwargs.setdefault("width", _terminal_columns() - 2)  # argparse leaves two columns free
        super().__init__(prog, **kwargs)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser (for the command and every sub-command) using `_HelpFormatter`."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(**kwargs)


def _terminal_columns() -> int:
    """As `shutil.get_terminal_size().columns`: $COLUMNS, else stdout's terminal width, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _VersionAction(argparse.Action):
    """``--version``: like argparse's "version" action, but the version (an `importlib.metadata`
    look-up, which scans the installed distributions) is found only when the option is given."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None
    ) -> None:
        print(f"{parser.prog} {_version()}")
        parser.exit()


def _version() -> str:
    from . import __version__

    return __version__
