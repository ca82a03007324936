"""The ``fairstream`` command: run, validate, sweep, reproduce, report, bench, cache.

Exit codes, the same for every command (`EXIT_CODES`, shown by ``--help`` and in docs/cli.md): 0
success; 1 the work ran and failed (a reproduction's check, a benchmark's agreement with ns-3,
writing the results, or an internal error); 2 bad input, found before any work (a bad argument,
an unknown id, a path that cannot be used, a scenario that does not validate: the error names
file, line, field and the expected form, and nothing is written); 130 interrupted (Ctrl-C, the
results so far kept and marked incomplete).

One error style: every error is one line (or a few) on stderr, ``fairstream COMMAND: error: ...``
as argparse writes usage errors (which add the usage line), or, for a scenario,
``FILE:LINE:COL: ...`` (the field named, and the expected form). No traceback reaches the user:
an unexpected exception is reported as an internal error (exit 1), its traceback shown only with
FAIRSTREAM_TRACEBACK=1.

Start-up is kept light: each command imports what it needs when it runs (``run`` and
``validate`` never import polars, numpy or matplotlib; the core writes the Parquet tables and
the summary is printed from summary.json), and the version is looked up only for ``--version``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .table import format_table

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any


#: Exit codes, as the help's epilogue and docs/cli.md show them.
OK, FAILED, BAD_INPUT, INTERRUPTED, OUTPUT_CLOSED = 0, 1, 2, 130, 141

EXIT_CODES = """\
exit codes (every command):
  0    success
  1    the work ran and failed: a reproduction's check failed by the verdict rule
       (`fairstream reproduce --help`), a benchmark's agreement with ns-3 failed,
       the results could not be written (e.g. disk full), or an internal error
  2    bad input, found before any work: a bad argument or option, an unknown id, a
       path that cannot be used (missing, unreadable, not writable, a file where a
       directory belongs or the other way round), a scenario that does not validate
       or read (not UTF-8, not TOML), a Dask scheduler that cannot be reached;
       nothing is written
  130  interrupted (Ctrl-C): stopped within a fraction of a second; the results so
       far are kept, marked incomplete (an INCOMPLETE file, "complete": false)
  141  what read the output stopped reading (`| head`): the command stops quietly, as
       one ended by SIGPIPE"""


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line `argv` (default: sys.argv[1:]); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    name = f"{parser.prog} {args.command}"
    from ._core import ScenarioError
    from .plainwarnings import fairstreams, show_plainly

    show_plainly(fairstreams())
    try:
        return args.func(args, args.command_parser)
    except KeyboardInterrupt as err:  # fairstream.Interrupted says where the results so far are
        _error(name, str(err) or "interrupted", "")
        return INTERRUPTED
    except ScenarioError as err:
        print(err, file=sys.stderr)
        return BAD_INPUT
    except (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        _error(name, _message(err))
        return BAD_INPUT
    except (RuntimeError, OSError) as err:
        if isinstance(err, BrokenPipeError) and _output_closed():
            raise  # `entry` ends quietly: nothing is wrong but that nobody reads on
        _error(name, _message(err))
        return FAILED
    except Exception as err:
        if os.environ.get("FAIRSTREAM_TRACEBACK"):
            raise
        _error(
            name,
            f"{type(err).__name__}: {err} (a bug in fairstream; please report it with the command "
            "line; FAIRSTREAM_TRACEBACK=1 shows the traceback)",
            "internal error: ",
        )
        return FAILED


def entry() -> None:
    """The ``fairstream`` program (the console script and ``python -m fairstream``): `main`, then
    exit with its code.

    After Ctrl-C the interpreter's teardown is skipped: with polars and matplotlib loaded it takes
    longer (0.1 to 0.2 s) than everything else an interrupt does. Exit handlers still run and the
    output is flushed. A second Ctrl-C while the first is handled ends the same way, quietly.

    When what reads the standard output stops reading (``fairstream cache info | head -1``), the
    command ends quietly with `OUTPUT_CLOSED`, as a command ended by SIGPIPE does, not with an
    error about a broken pipe.
    """
    try:
        try:
            code = main()
        finally:  # also after --help or a usage error (SystemExit)
            if sys.stdout is not None:  # None: started with its standard output closed
                sys.stdout.flush()  # here, where a reader gone is told apart from a failure
    except KeyboardInterrupt:  # a second Ctrl-C, while the first was being handled
        code = INTERRUPTED
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is left unwritten goes nowhere, quietly
        os.close(devnull)
        code = OUTPUT_CLOSED
    except OSError as err:  # the last of the output could not be written (a full disk)
        _error("fairstream", _message(err))
        code = FAILED
    if code != INTERRUPTED:
        sys.exit(code)
    import atexit
    import contextlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    atexit._run_exitfuncs()  # what a normal exit runs; only the teardown of modules is skipped
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _output_closed() -> bool:
    """Whether what reads this process's standard output has closed it (a pipe's reader gone)."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no such stream, or no poll here
        return False


def _error(command: str, message: str, kind: str = "error: ") -> None:
    """Prints one error the one way: ``fairstream COMMAND: error: MESSAGE``."""
    print(f"{command}: {kind}{message}", file=sys.stderr)


def _message(err: BaseException) -> str:
    """An exception's message; an OSError's as `FILE: reason`."""
    if isinstance(err, OSError) and err.strerror:
        return f"{err.filename}: {err.strerror}" if err.filename else err.strerror
    return str(err)


def _input_file(path: Path, what: str = "scenario file") -> Path:
    """`path` if it names a readable file; a ValueError saying what is wrong with it otherwise."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a {what}")
    if not os.access(path, os.R_OK):
        raise ValueError(f"{path}: cannot be read (permission denied)")
    return path


def unknown_names(what: str, unknown: Sequence[str], known: Iterable[str]) -> str:
    """The error for ids on the command line that name no `what` among `known`: each with the
    one it probably misspells, as a scenario's errors suggest it (`_core.closest_name`), then
    every known id."""
    from . import _core

    known = list(known)
    named = []
    for name in unknown:
        meant = _core.closest_name(name, known)
        named.append(name if meant is None else f"{name} (did you mean {meant}?)")
    return f"unknown {what}(s) {', '.join(named)}; known: {', '.join(known)}"


def _output_target(path: Path, kind: str = "directory") -> Path:
    """`path` if results can be written there (an existing `kind`, or a new name in a directory
    that can be written); a ValueError saying why not otherwise, before any work is done."""
    if path.is_symlink() and not path.exists():
        raise ValueError(f"{path}: is a symbolic link to nowhere; point it at a {kind} or remove it")
    if path.exists():
        if kind == "directory" and not path.is_dir():
            raise ValueError(f"{path}: is a file, not a directory; results are a directory of files")
        if kind == "file" and path.is_dir():
            raise ValueError(f"{path}: is a directory, not a file")
        if kind == "file":  # replaced in place: the file itself must be writable
            if not os.access(path, os.W_OK):
                raise ValueError(f"{path}: cannot be written (permission denied or read-only)")
            return path
        here = path
    else:
        here = path.absolute().parent
        while not here.exists() and here != here.parent:
            here = here.parent
        if not here.is_dir():
            raise ValueError(f"{path}: {here} is a file, not a directory")
    if not os.access(here, os.W_OK | os.X_OK):
        raise ValueError(f"{path}: cannot write in {here} (permission denied or read-only)")
    return path


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
    "default: the memory available; each run is held to it, not to a share of it)"
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


#: --no-cache and --keep-runs, shared by run, sweep and reproduce (fairstream.cache, fairstream.dataset).
_NO_CACHE_HELP = (
    "compute every run again instead of taking it from the run cache (the new results replace "
    "the cached ones; see `fairstream cache info`)"
)
_KEEP_RUNS_HELP = (
    "also keep a run directory per run (every table, packet traces and pcaps) beside the dataset"
)


def _cache_of(args: argparse.Namespace) -> Any:
    """The run cache a command uses: the default one, refreshed with --no-cache."""
    from .cache import RunCache

    return RunCache(refresh=bool(getattr(args, "no_cache", False)))


#: --force of every command that writes a directory (the rules: fairstream.output, docs/results.md).
_FORCE_HELP = (
    "replace the output directory whole even if it holds files fairstream did not write "
    "(without it such a directory is refused; an earlier result of the same command is always replaced)"
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fairstream",
        description="A fast deterministic packet-level simulator for TCP-friendly streaming.",
        epilog="Output layout, exit codes and limits: docs/cli.md.",
    )
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("run", help="run a scenario and write its results")
    p.add_argument("scenario", type=Path, help="scenario TOML file")
    p.add_argument(
        "-o",
        "--output",
        type=_output_path,
        required=True,
        help="output directory (appears when the run is done)",
    )
    p.add_argument("--seed", type=_seed, help="override the scenario's seed")
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MAX_MEMORY_HELP)
    p.add_argument("--no-cache", action="store_true", help=_NO_CACHE_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("validate", help="check scenario files")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument(
        "--resolved",
        action="store_true",
        help="print each scenario with every default filled in (on stdout; `FILE: ok` to stderr)",
    )
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("sweep", help="run a grid of overrides of a scenario in parallel")
    p.add_argument("scenario", type=Path, help="scenario TOML file")
    p.add_argument(
        "--set",
        action="append",
        required=True,
        metavar="PATH=VALUE",
        help="a dotted path and a TOML value, or a TOML array of values to sweep: flow.0.rate=1Mbps, "
        "'seed=[1, 2]', 'flow.0.rate=[\"1Mbps\", \"2Mbps\"]', 'name=\"a,b\"'; bare words are strings. "
        "Repeat the same path to add values, other paths for a grid (see docs/sweeps.md)",
    )
    p.add_argument("-o", "--output", type=_output_path, required=True, help="output directory")
    p.add_argument("-j", "--jobs", type=_positive_int, help="worker processes (default: all cores)")
    p.add_argument(
        "--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (needs fairstream[dask])"
    )
    p.add_argument("--seed", type=_seed, help="override every run's seed")
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MAX_MEMORY_HELP)
    p.add_argument("--no-cache", action="store_true", help=_NO_CACHE_HELP)
    p.add_argument("--keep-runs", action="store_true", help=_KEEP_RUNS_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_sweep)

    from .verdicts import RULE

    p = sub.add_parser(
        "reproduce",
        help="reproduce published experiments and write a report",
        description="Runs the experiments of the papers (and the validations) with their phase replicas, "
        "judges every check, writes DIR/report.html, and prints a verdict per experiment. " + RULE,
    )
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
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("--max-memory", type=_memory_size, metavar="SIZE", help=_MAX_MEMORY_HELP)
    p.add_argument("--no-cache", action="store_true", help=_NO_CACHE_HELP)
    p.add_argument(
        "--keep-runs",
        action="store_true",
        help="also keep every run's directory (metrics, packet traces, pcaps) beside each "
        "experiment's dataset",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("recv", help="receive one sender's flow over UDP and write its results")
    p.add_argument("--listen", required=True, metavar="ADDR:PORT", help="address and port to listen on")
    p.add_argument("-o", "--output", type=_output_path, required=True, help="output directory")
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no live line")
    p.set_defaults(func=_cmd_recv)

    p = sub.add_parser("send", help="send a flow over UDP to a `fairstream recv` and write its results")
    p.add_argument("--to", required=True, metavar="ADDR:PORT", help="the receiver")
    p.add_argument(
        "--protocol",
        required=True,
        help="a protocol the real-time driver runs (tfrc, vtp, ...; another name gets the list)",
    )
    p.add_argument("--duration", default="30s", help="how long to send (default 30s)")
    p.add_argument("--rate-cap", metavar="RATE", help="the most to send, e.g. 50Mbps")
    p.add_argument("-o", "--output", type=_output_path, required=True, help="output directory")
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no live line")
    p.set_defaults(func=_cmd_send)

    p = sub.add_parser(
        "emulate",
        help="run a scenario in real time through the emulator (real packets, Linux TCP); write its results",
    )
    p.add_argument("scenario", type=Path, help="scenario TOML file")
    p.add_argument("-o", "--output", type=_output_path, required=True, help="output directory")
    p.add_argument("--seed", type=_seed, help="override the scenario's seed")
    from ._core import emu_devices

    devices = emu_devices()
    p.add_argument(
        "--device",
        choices=devices,
        default=devices[0],
        help="the hosts' devices (default: %(default)s; veth pairs are read with AF_PACKET and "
        "kernel-stamped, TUN devices suit fast links: docs/emulator.md)",
    )
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("-q", "--quiet", action="store_true", help="no live line")
    p.set_defaults(func=_cmd_emulate)

    p = sub.add_parser("report", help="write DIR/report.html from a reproduce output directory")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.set_defaults(func=_cmd_report)

    p = sub.add_parser(
        "cache",
        help="what the run cache holds, and pruning it",
        description="The run cache keeps every run of run, sweep and reproduce, keyed by its resolved "
        "scenario, seed and fairstream build, and every evaluated experiment of reproduce (see "
        "docs/cache.md). It lives in $FAIRSTREAM_CACHE, else $XDG_CACHE_HOME/fairstream, else "
        "~/.cache/fairstream.",
    )
    cache_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=_Parser)
    q = cache_sub.add_parser(
        "info", help="where the cache is, what it holds and how much of it this build can use"
    )
    q.set_defaults(func=_cmd_cache_info)
    q = cache_sub.add_parser(
        "prune",
        help="remove entries by age of last use, by size (least recently used first), or of other builds",
    )
    q.add_argument(
        "--older-than", type=_age, metavar="AGE", help="entries not used for AGE (30d, 12h, 90min)"
    )
    q.add_argument("--max-size", type=_memory_size, metavar="SIZE", help="keep at most SIZE (e.g. 20GB)")
    q.add_argument(
        "--stale", action="store_true", help="entries of other fairstream builds (never used by this one)"
    )
    q.add_argument("--all", action="store_true", help="every entry")
    q.set_defaults(func=_cmd_cache_prune)
    for action in cache_sub.choices.values():
        action.set_defaults(command_parser=action)

    p = sub.add_parser(
        "bench",
        help="run the benchmarks B1-B7 in fairstream (B1-B3 also in ns-3, fairstream[ns3]) on this machine",
        description="Runs B1-B7 in fairstream and, for B1-B3, when ns-3 is installed "
        "(pip install 'fairstream[ns3]'), in ns-3: both simulators' results side by side with a "
        "verdict on agreement, and their in-process and whole-process times and peak memory. "
        "Exit code 1 when they disagree (full-length runs only).",
    )
    p.add_argument("ids", nargs="*", metavar="BENCH", help="benchmarks (default: all)")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds per benchmark (or of --sweep's whole measure), each process fresh; median and "
        "range shown (default 3)",
    )
    p.add_argument("--quick", action="store_true", help="2 s durations (a smoke test, not a measurement)")
    p.add_argument("--duration", metavar="D", help='simulate every benchmark for D (e.g. "20s") instead')
    p.add_argument("--no-ns3", action="store_true", help="fairstream only, even when ns-3 is installed")
    p.add_argument(
        "--scaling",
        action="store_true",
        help="instead: B2's shape with 8, 64, 256 and 1024 flows (fairstream; with --scaling-ns3 also ns-3)",
    )
    p.add_argument(
        "--scaling-flows",
        type=_flow_counts,
        metavar="N,N,...",
        help="with --scaling: these flow counts instead (ascending), or 'full' for 8, 64, 256, 1024, "
        "4096 and 10000 (about 0.5 GB and half a minute per round at 10000)",
    )
    p.add_argument("--scaling-ns3", action="store_true", help="with --scaling: one ns-3 run per size too")
    p.add_argument(
        "--sweep",
        nargs="?",
        type=_positive_int,
        const=1000,
        metavar="N",
        help="instead: a sweep of N one-second B3 runs (default 1000) with a cold run cache, and the "
        "overhead per point beside the simulations' own time",
    )
    p.add_argument(
        "--reproduce",
        action="store_true",
        help="instead: reproduce the experiments given as BENCH (default: every one that only "
        "simulates) with a cold run cache, then again unchanged: wall x cores over the simulations' "
        "own time, what is kept, and whether the second output is the first's (with --quick: short "
        "runs, a smoke test)",
    )
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
    for name, command in sub.choices.items():  # its usage errors then name the command
        if name != "cache":
            command.set_defaults(command_parser=command)
    return parser


def _cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .api import run

    _input_file(args.scenario)
    _output_target(args.output)
    result = run(
        args.scenario,
        output_dir=args.output,
        seed=args.seed,
        progress=not args.quiet,
        force=args.force,
        max_memory=args.max_memory,
        cache=_cache_of(args),
    )
    # summary.json through `json` only: reading no table keeps polars out of this process.
    print(_flow_table(result.summary["flows"]))
    print(f"results: {result.output_dir}")
    return 0


def _cmd_send(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .realnet import send

    _output_target(args.output)
    result = send(
        args.to,
        args.protocol,
        args.duration,
        args.rate_cap,
        output_dir=args.output,
        live=not args.quiet,
        force=args.force,
    )
    print(_flow_table(result.summary["flows"]))
    print(f"results: {result.output_dir}")
    return 0


def _cmd_recv(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .realnet import recv

    _output_target(args.output)
    result = recv(args.listen, output_dir=args.output, live=not args.quiet, force=args.force)
    print(_flow_table(result.summary["flows"]))
    print(f"results: {result.output_dir}")
    return 0


def _cmd_emulate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import signal

    from .emulation import EmulatorUnavailable, emulate

    _input_file(args.scenario)
    _output_target(args.output)

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the emulation as Ctrl-C does, keeping what ran

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        result = emulate(
            args.scenario,
            output_dir=args.output,
            seed=args.seed,
            live=not args.quiet,
            force=args.force,
            device=args.device,
        )
    except EmulatorUnavailable as err:
        _error(f"{parser.prog}", str(err))
        return BAD_INPUT
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(_flow_table(result.summary["flows"]))
    emu = result.emu or {}
    if not emu.get("accurate", True):
        print(
            f"warning: {emu.get('packets_forwarded_late')} packets were forwarded late and "
            f"{emu.get('device_drops', 0)} lost before the emulator read them (see emu.json); "
            "the machine was too busy for an accurate emulation",
            file=sys.stderr,
        )
    print(f"results: {result.output_dir}")
    return 0


def _cmd_validate(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ._core import ScenarioError
    from .api import validate

    failed = 0
    for path in args.files:
        try:
            resolved = validate(_input_file(path))
        except ScenarioError as err:
            print(err, file=sys.stderr)
            failed += 1
            continue
        except (ValueError, OSError) as err:
            _error(f"{parser.prog}", _message(err))
            failed += 1
            continue
        if args.resolved:  # the scenario alone on stdout: `> resolved.toml` gives a scenario file
            print(f"{path}: ok", file=sys.stderr)
            print(resolved)
        else:
            print(f"{path}: ok")
    return BAD_INPUT if failed else OK


def _cmd_sweep(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .sweeps import parse_assignment, sweep

    grid: dict[str, list[Any]] = {}
    for assignment in args.set:
        try:
            path, values = parse_assignment(assignment)
        except ValueError as err:
            parser.error(f"--set {err}")
        grid.setdefault(path, []).extend(values)  # --set p=1 --set p=2 sweeps p over 1 and 2
    _input_file(args.scenario)
    _output_target(args.output)
    result = sweep(
        args.scenario,
        grid,
        args.output,
        jobs=args.jobs,
        scheduler=args.scheduler,
        seed=args.seed,
        quiet=args.quiet,
        force=args.force,
        max_memory=args.max_memory,
        keep_runs=args.keep_runs,
        cache=_cache_of(args),
    )
    kept = ", runs/" if any(p["dir"].startswith("runs/") for p in result.points) else ""
    print(f"{len(result.points)} runs: {result.output_dir} (data/, sweep.json{kept})")
    return 0


def _cmd_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .reproduce import EXPERIMENTS
    from .reproduce.experiment import experiment_verdict, source
    from .verdicts import RULE, exit_code

    if args.list:
        print(
            format_table(
                ["id", "source", "title"],
                [[e.id, source(e.paper, e.figure), e.title] for e in EXPERIMENTS.values()],
            )
        )
        return 0
    if args.output is None:
        parser.error("reproduce needs -o DIR")
    if args.replicas is not None and args.replicas < 0:
        parser.error("--replicas must be 0 or more")
    unknown = [i for i in args.ids if i not in EXPERIMENTS]
    if unknown:
        parser.error(unknown_names("experiment", unknown, EXPERIMENTS))
    _output_target(args.output)
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
        force=args.force,
        max_memory=args.max_memory,
        keep_runs=args.keep_runs,
        cache=_cache_of(args),
    )
    report = write_report(args.output, rendered_sections=True)
    print(_reproduce_table(results))
    print(RULE)
    print(f"report: {report}")
    return exit_code([experiment_verdict(r) for r in results])


def _reproduce_table(results: Sequence[Mapping[str, Any]]) -> str:
    """One line per experiment: its checks by the verdict rule, its replicas and its verdict."""
    from .reproduce.experiment import experiment_verdict

    rows = []
    for r in results:
        v = r["verdicts"]
        word = experiment_verdict(r)
        rows.append(
            [
                r["id"],
                f"{v['pass']}/{v['pass'] + v['fail'] + v['phase-sensitive']}",
                v["phase-sensitive"],
                v["reported"],
                f"{v['self_checks_passed']}/{v['self_checks']}" if v["self_checks"] else "-",
                r["phase"]["count"],
                "FAIL" if word == "fail" else word,
            ]
        )
    return format_table(
        ["experiment", "checks pass", "phase-sensitive", "reported", "self-checks", "replicas", "result"],
        rows,
    )


def _cmd_report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .report import write_report

    if not args.dir.is_dir():
        raise FileNotFoundError(f"{args.dir}: no such directory; give an output directory of reproduce")
    _output_target(args.dir)
    print(f"report: {write_report(args.dir)}")
    return 0


def _age(text: str) -> float:
    """An argparse type: seconds of an age such as 30d, 12h or 90min."""
    from .cache import parse_age

    try:
        return parse_age(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _cmd_cache_info(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .cache import RunCache
    from .cache_info import format_info

    print(format_info(RunCache().info()))
    return 0


def _cmd_cache_prune(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .cache import RunCache
    from .cache_info import format_bytes

    if not (args.older_than is not None or args.max_size is not None or args.stale or args.all):
        parser.error("say what to prune: --older-than AGE, --max-size SIZE, --stale or --all")
    cache = RunCache()
    removed, freed = cache.prune(
        older_than_s=0.0 if args.all else args.older_than,
        max_bytes=args.max_size,
        stale=args.stale,
    )
    print(f"removed {removed} entries ({format_bytes(freed)}) from {cache.root}")
    return 0


def _cmd_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .bench import BENCHMARKS, BenchInterrupted, measure, write_json
    from .bench_format import format_report, format_scaling

    if args.sweep is not None:
        if args.ids or args.scaling or args.reproduce:
            parser.error(
                "--sweep runs one-second B3 runs only; give no benchmarks, --scaling or --reproduce with it"
            )
        from .bench_sweep import format_sweep, measure_sweep

        if args.repeat < 1:
            parser.error("--repeat must be at least 1")
        if args.json is not None:
            _output_target(args.json, "file")
        idle_wait = 0.0 if args.no_wait else args.idle_wait
        row = measure_sweep(args.sweep, repeat=args.repeat, idle_wait_s=idle_wait, quiet=args.quiet)
        print(format_sweep(row))
        if args.json:
            import json

            args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
        return 0
    if args.reproduce:
        return _bench_reproduce(args, parser)
    ids = [i.upper() for i in args.ids] or [b.id for b in BENCHMARKS.values() if b.default]
    unknown = [i for i in ids if i not in BENCHMARKS]
    if unknown:
        parser.error(unknown_names("benchmark", unknown, BENCHMARKS))
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.scaling and args.ids:
        parser.error("--scaling runs B2's shape only; give no benchmarks with it")
    if args.scaling_ns3 and not args.scaling:
        parser.error("--scaling-ns3 needs --scaling")
    if args.scaling_flows and not args.scaling:
        parser.error("--scaling-flows needs --scaling")
    if args.duration is not None:
        _check_duration(args.duration, ids, args.scaling, args.scaling_flows)
    if args.json is not None:
        _output_target(args.json, "file")

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    # In the benchmarks ns-3 runs when installed (None) unless --no-ns3; in --scaling only on request.
    ns3 = args.scaling_ns3 if args.scaling else (False if args.no_ns3 else None)
    try:
        rows, meta = measure(
            ids,
            repeat=args.repeat,
            quick=args.quick,
            duration=args.duration,
            ns3=ns3,
            scaling=args.scaling,
            idle_wait_s=0.0 if args.no_wait else args.idle_wait,
            progress=progress,
            **({"scaling_flows": args.scaling_flows} if args.scaling_flows else {}),
        )
    except BenchInterrupted as stop:  # keep the benchmarks measured whole, marked incomplete
        if stop.rows:
            table = format_scaling if args.scaling else format_report
            print(table(stop.rows, stop.meta))
        if args.json:
            write_json(args.json, stop.rows, stop.meta)
        raise
    print(format_scaling(rows, meta) if args.scaling else format_report(rows, meta))
    if args.json:
        write_json(args.json, rows, meta)
    disagree = [r["benchmark"] for r in rows if r.get("agreement") and not r["agreement"]["agree"]]
    return 1 if disagree and not meta["duration"] else 0


def _bench_reproduce(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``fairstream bench --reproduce [ID ...]``: the cost of a reproduction beyond its runs."""
    from .bench_reproduce import format_reproduce, measure_reproduce
    from .reproduce import EXPERIMENTS

    if args.scaling or args.scaling_flows or args.scaling_ns3 or args.duration is not None:
        parser.error("--reproduce measures a reproduction; give no --scaling options or --duration with it")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    unknown = [i for i in args.ids if i not in EXPERIMENTS]
    if unknown:
        parser.error(unknown_names("experiment", unknown, EXPERIMENTS))
    if args.json is not None:
        _output_target(args.json, "file")
    row = measure_reproduce(
        args.ids,
        quick=args.quick,
        repeat=args.repeat,
        idle_wait_s=0.0 if args.no_wait else args.idle_wait,
        quiet=args.quiet,
    )
    print(format_reproduce(row))
    if args.json:
        import json

        args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    return 0


def _flow_counts(text: str) -> tuple[int, ...]:
    """``--scaling-flows``: ``full`` or ascending positive flow counts separated by commas."""
    from .bench import SCALING_FLOWS_FULL

    if text.strip() == "full":
        return SCALING_FLOWS_FULL
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        counts = ()
    if not counts or any(n < 1 for n in counts) or list(counts) != sorted(set(counts)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not 'full' or ascending positive flow counts separated by commas (e.g. 8,64,1024)"
        )
    return counts


def _check_duration(
    text: str, ids: Sequence[str], scaling: bool, scaling_flows: Sequence[int] | None = None
) -> None:
    """A ValueError, naming the option, unless every benchmark to run validates with duration
    `text` (before any child process starts, not in each)."""
    from ._core import ScenarioError, validate
    from .bench import BENCHMARKS, SCALING_FLOWS, scaling_text, scenario_text

    if scaling:
        texts = [scaling_text(max(scaling_flows or SCALING_FLOWS), text)]
    else:
        texts = [scenario_text(BENCHMARKS[i], text) for i in ids]
    for scenario in texts:
        try:
            validate(scenario, "--duration")
        except ScenarioError as err:  # the location is in a generated text: only the field counts
            message = str(err).split("field `duration`: ", 1)[-1].removeprefix("--duration:")
            raise ValueError(f"--duration {text}: {message.lstrip('0123456789: ')}") from None


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

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Descriptions are re-wrapped as usual; a text laid out in lines (the exit-code table)
        is kept as it is."""
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser (for the command and every sub-command) using `_HelpFormatter`, whose
    help ends with the exit-code table (`EXIT_CODES`)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        kwargs["epilog"] = "\n\n".join(e for e in (kwargs.get("epilog"), EXIT_CODES) if e)
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
