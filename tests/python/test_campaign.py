"""Campaigns: every run computed once (shared between experiments, served by the cache), exactly
the affected runs computed again after a change, everything again on a new build, and a campaign
stopped halfway (an exception, Ctrl-C, ``kill -9``, on a Dask cluster too) resumed into the same
result as one never stopped."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fairstream
import fairstream.campaign
import numpy as np
import polars as pl
import pytest
from conftest import small_scenario
from fairstream import cache, tomlio
from fairstream.cache import Build, RunCache
from fairstream.interrupt import Interrupted
from fairstream.reproduce import EXPERIMENTS
from fairstream.reproduce.campaign import Campaign
from fairstream.reproduce.experiment import Check, Evaluation, Experiment, Figure, Point
from fairstream.results import RunResult
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reproduce import _FAKE_SCENARIO

#: test_reproduce's one-CBR-flow scenario, its rate made a field the test changes.
_SCENARIO = _FAKE_SCENARIO.replace('rate = "100kbps"', 'rate = "{rate}"')

#: The points of `Rates`: two set the CBR rate themselves, two take the scenario file's.
RATES = ("50kbps", "100kbps", None, None)


@dataclass(frozen=True)
class Rates(Experiment):
    """One CBR flow per point; the bytes it sent are its number."""

    def scenario_path(self) -> Path:
        return Path(self.scenario_file)

    def points(self, quick: bool) -> list[Point]:
        points = []
        for i, rate in enumerate(RATES):
            doc = copy.deepcopy(self.base_scenario())
            doc["seed"] = 1 + i
            if rate is not None:
                doc["flow"][0]["rate"] = rate
            points.append(Point(f"p{i}", {"rate": rate or "the file's", "seed": 1 + i}, doc))
        return points

    def evaluate(self, runs: Sequence[tuple[Point, RunResult]], quick: bool) -> Evaluation:
        rows = [{"point": p.key, "bytes": int(run.flow_summary["bytes_sent"][0])} for p, run in runs]
        return Evaluation(
            rows, [{"quantity": "points", "ours": len(rows), "published": 4}], [Check("ran", 1, 1, True)]
        )

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        return []


def fake(exp_id: str, scenario: Path) -> Rates:
    return Rates(
        id=exp_id,
        title=exp_id,
        paper="test",
        figure="—",
        scenario_file=str(scenario),
        what_runs="one CBR flow",
        must_hold="-",
        explanation="-",
        published=(),
    )


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "fake.toml"
    path.write_text(_SCENARIO.replace("{rate}", "200kbps"), encoding="utf-8")
    return path


REAL_EXECUTE = fairstream.campaign.execute


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The labels of the runs actually simulated (in this process: jobs=1)."""
    labels: list[str] = []

    def counting(spec: Any, store: Any) -> Any:
        labels.append(spec.label)
        return REAL_EXECUTE(spec, store)

    monkeypatch.setattr(fairstream.campaign, "execute", counting)
    return labels


def reproduce(exps: list[Experiment], out: Path, store: RunCache, replicas: int = 1, **kw: Any) -> Campaign:
    campaign = Campaign(exps, replicas=replicas, cache=store)
    campaign.run(out, jobs=1, quiet=True, **kw)
    return campaign


def without_timing(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "wall_time_s"}


def test_a_run_two_experiments_need_runs_once(tmp_path: Path, scenario: Path, executed: list[str]) -> None:
    store = RunCache(tmp_path / "cache")
    a, b = fake("fake-a", scenario), fake("fake-b", scenario)
    campaign = reproduce([a, b], tmp_path / "out", store, replicas=0)
    assert len(executed) == 4 and campaign.stats["runs"] == 4  # not 8: b's runs are a's
    a_rows, b_rows = (
        json.loads((tmp_path / "out" / e / "result.json").read_text())["points"] for e in ("fake-a", "fake-b")
    )
    assert a_rows == b_rows and a_rows[0]["bytes"] < a_rows[1]["bytes"]  # 50 and 100 kbit/s


def test_a_run_over_the_memory_limit_is_refused_unless_the_cache_holds_it(
    tmp_path: Path, scenario: Path, executed: list[str]
) -> None:
    store = RunCache(tmp_path / "cache")
    exp = fake("fake-a", scenario)
    refusal = r"fake\.toml \[fake-a p0\].*more than the 1\.0 kB limit"
    with pytest.raises(fairstream.ScenarioError, match=refusal):
        reproduce([exp], tmp_path / "refused", store, replicas=0, max_memory=1000)
    assert not executed and not (tmp_path / "refused").exists()  # refused before anything ran
    reproduce([exp], tmp_path / "out", store, replicas=0)
    executed.clear()
    reproduce([exp], tmp_path / "again", store, replicas=0, max_memory=1000)  # from the cache: no refusal
    assert not executed


@dataclass(frozen=True)
class OneBadRate(Rates):
    """`Rates` with a rate that does not parse at point p2."""

    def points(self, quick: bool) -> list[Point]:
        points = super().points(quick)
        bad = copy.deepcopy(points[2].scenario)
        bad["flow"][0]["rate"] = "fast"
        return [*points[:2], Point("p2", points[2].params, bad), *points[3:]]


def test_planning_on_the_workers_plans_what_planning_here_plans(
    tmp_path: Path, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold reproduction writes and resolves its scenarios on the workers the runs will use
    (here one call per scenario, so that both workers plan): the same keys, texts and estimates as
    planning in this process, the same first refusal, and nothing written when one is refused."""
    monkeypatch.setattr(fairstream.campaign, "PLAN_CHUNK", 1)
    exp = fake("fake-a", scenario)
    here = Campaign([exp], replicas=1, cache=RunCache(tmp_path / "here"))
    here.run(tmp_path / "out-here", jobs=1, quiet=True)
    there = Campaign([exp], replicas=1, cache=RunCache(tmp_path / "there"))
    there.run(tmp_path / "out-there", jobs=2, quiet=True)
    assert [j.key for j in here.plans[0].jobs] == [j.key for j in there.plans[0].jobs]
    assert here.plans[0].jobs == there.plans[0].jobs  # texts, filenames, resolved, memory too
    bad = OneBadRate(**{**exp.__dict__, "id": "fake-bad"})
    refusals = []
    for jobs in (1, 2):
        with pytest.raises(fairstream.ScenarioError) as refused:
            Campaign([bad], replicas=1, cache=RunCache(tmp_path / f"bad{jobs}")).run(
                tmp_path / f"refused{jobs}", jobs=jobs, quiet=True
            )
        refusals.append(str(refused.value))
        assert not (tmp_path / f"refused{jobs}").exists()
    assert refusals[0] == refusals[1] and "fake.toml [fake-bad p2]" in refusals[0], refusals


def test_a_scenario_two_experiments_plan_in_one_directory_is_resolved_once(
    tmp_path: Path, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The h2h-* experiments plan the same clip runs: each scenario is written and resolved once,
    and every experiment's jobs get its text, key and estimate under their own file name. The
    same scenario from a file in another directory (relative traces resolve from there) is
    resolved apart."""
    resolved: list[str] = []
    real = fairstream.campaign.resolve_scenarios

    def counting(chunk: Any) -> Any:
        resolved.extend(chunk.files)
        return real(chunk)

    monkeypatch.setattr(fairstream.campaign, "resolve_scenarios", counting)
    elsewhere = tmp_path / "elsewhere" / scenario.name
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(scenario.read_bytes())
    exps = [fake("fake-a", scenario), fake("fake-b", scenario), fake("fake-c", elsewhere)]
    campaign = Campaign(exps, replicas=1, cache=RunCache(tmp_path / "cache"))
    campaign.run(tmp_path / "out", jobs=1, quiet=True)
    assert len(resolved) == 16, resolved  # 4 points and 4 replicas, in two directories
    assert all("[fake-b " not in f for f in resolved)
    a, b, c = (plan.jobs for plan in campaign.plans)
    planned = [[(j.text, j.resolved, j.key, j.memory) for j in jobs] for jobs in (a, b)]
    assert planned[0] == planned[1]
    assert [j.key for j in a] == [j.key for j in c]  # the same runs: no trace is read
    assert [j.filename for j in b] == [j.filename.replace("fake-a", "fake-b") for j in a]
    assert all(str(elsewhere) in j.filename for j in c)
    # the same plans as resolving every scenario apart
    monkeypatch.setattr(fairstream.campaign, "PLAN_CHUNK", 1)
    apart = Campaign(exps[1:2], replicas=1, cache=RunCache(tmp_path / "apart"))
    apart.run(tmp_path / "out-apart", jobs=1, quiet=True)
    assert apart.plans[0].jobs == b


@dataclass(frozen=True)
class StoppedWhileDrawing(Rates):
    """`Rates` whose figures meet Ctrl-C."""

    def figures(self, result: Mapping[str, Any], exp_dir: Path, fig_dir: Path) -> list[Figure]:
        raise KeyboardInterrupt


def test_an_evaluation_stopped_part_way_leaves_no_result_and_the_whole_ones_count(
    tmp_path: Path, scenario: Path
) -> None:
    """Two experiments that share their runs are evaluated by one call; Ctrl-C in the second's
    figures stops the call. The first's evaluation is whole: its result stands (in the report
    too) and it is not marked. The second has no result.json, only its mark, as the report reads
    it: a result.json is written last."""
    from fairstream.reproduce.runner import load_results

    a = fake("fake-a", scenario)
    b = StoppedWhileDrawing(**{**a.__dict__, "id": "fake-b"})
    out = tmp_path / "out"
    with pytest.raises(Interrupted):
        Campaign([a, b], replicas=0, cache=RunCache(tmp_path / "cache")).run(out, jobs=1, quiet=True)
    assert (out / "fake-a" / "result.json").is_file() and not (out / "fake-a" / "INCOMPLETE").exists()
    assert not (out / "fake-b" / "result.json").exists()
    assert (
        "fake-b: 4 of 4 runs finished (kept in the run cache); not evaluated"
        in (out / "fake-b" / "INCOMPLETE").read_text()
    )
    assert "evaluated: fake-a." in (out / "INCOMPLETE").read_text()
    assert [r["id"] for r in load_results(out)] == ["fake-a"]


def test_a_cold_reproduction_starts_its_workers_after_its_first_draft_and_a_warm_one_never(
    tmp_path: Path, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers import while the parent drafts the other experiments: on a cold cache they are
    started once the first experiment is drafted (it has scenarios to plan), not after the last;
    run again unchanged, every plan is remembered and no worker starts."""
    from fairstream import parallel
    from fairstream.reproduce import campaign as reproduce_campaign

    drafted: list[str] = []
    warmed: list[int] = []
    real_draft, real_warm_up = reproduce_campaign.Campaign._draft, parallel.Batch.warm_up

    def draft(self: Any, exp: Any, store: Any) -> Any:
        drafted.append(exp.id)
        return real_draft(self, exp, store)

    def warm_up(self: Any) -> None:
        warmed.append(len(drafted))
        real_warm_up(self)

    monkeypatch.setattr(reproduce_campaign.Campaign, "_draft", draft)
    monkeypatch.setattr(parallel.Batch, "warm_up", warm_up)
    exps = [fake(f"fake-{x}", scenario) for x in "abc"]
    store = RunCache(tmp_path / "cache")
    Campaign(exps, replicas=0, cache=store).run(tmp_path / "cold", jobs=2, quiet=True)
    assert drafted == ["fake-a", "fake-b", "fake-c"] and warmed[:1] == [1], warmed
    drafted.clear()
    warmed.clear()
    Campaign(exps, replicas=0, cache=store).run(tmp_path / "warm", jobs=2, quiet=True)
    assert len(drafted) == 3 and not warmed


def test_runs_two_experiments_share_are_kept_in_both_also_uncached(
    tmp_path: Path, scenario: Path, executed: list[str]
) -> None:
    # --keep-runs --no-cache: a run two experiments need is made once, and each experiment's
    # directory holds it (a full reproduction's h2h-* experiments failed on this).
    store = RunCache(tmp_path / "cache", refresh=True)
    a, b = fake("fake-a", scenario), fake("fake-b", scenario)
    Campaign([a, b], replicas=0, cache=store, keep_runs=True).run(tmp_path / "out", jobs=1, quiet=True)
    assert len(executed) == 4
    for exp in ("fake-a", "fake-b"):
        for i in range(4):
            assert (tmp_path / "out" / exp / "runs" / f"p{i}" / "summary.json").is_file(), (exp, i)


def test_changing_one_field_reruns_exactly_the_runs_it_changes(
    tmp_path: Path, scenario: Path, executed: list[str]
) -> None:
    other_file = tmp_path / "other.toml"
    other_file.write_text(_SCENARIO.replace("{rate}", "300kbps"), encoding="utf-8")
    mine, other = fake("mine", scenario), fake("other", other_file)
    store, out = RunCache(tmp_path / "cache"), tmp_path / "out"
    first = reproduce([mine, other], out, store)
    before = json.loads((out / "mine" / "result.json").read_text())["points"]
    # 2 experiments x 4 points x (canonical + 1 replica), less p0 and p1 (and their replicas), which
    # set their own rate and so are the same runs in both
    assert len(executed) == 12 and first.stats["evaluated"] == 2
    executed.clear()
    unchanged = reproduce([mine, other], out, store)
    assert executed == [] and unchanged.stats == {**unchanged.stats, "evaluated": 0, "restored": 2}
    scenario.write_text(_SCENARIO.replace("{rate}", "250kbps"), encoding="utf-8")  # one field of one file
    executed.clear()
    changed = reproduce([mine, other], out, store)
    # p2 and p3 take the file's rate, canonical and replica; p0 and p1 set their own: unchanged runs
    assert sorted(executed) == ["mine/p2", "mine/p3", "mine/r1/p2", "mine/r1/p3"]
    assert changed.stats["evaluated"] == 1 and changed.stats["restored"] == 1
    after = json.loads((out / "mine" / "result.json").read_text())["points"]
    assert after[:2] == before[:2] and after[2]["bytes"] > before[2]["bytes"]  # 250 kbit/s now, not 200


def test_a_trace_changed_since_the_last_reproduction_reruns_the_runs_that_read_it(
    tmp_path: Path, executed: list[str]
) -> None:
    """A run's plan is remembered with its key, but a trace it reads is looked at again each time:
    changed, its runs run again (those that read it only); the first reproduction keys them as
    its workers found them."""
    clip = tmp_path / "clip.csv"

    def clip_of(size: int) -> str:
        return "time,type,bytes\n" + "".join(f"{i / 25},{'IPPP'[i % 4]},{size}\n" for i in range(5))

    clip.write_text(clip_of(1000), encoding="utf-8")
    traced = tmp_path / "traced.toml"
    flow = '\n[[flow]]\nprotocol = "mpegapp"\nfrom = "n0"\nto = "n1"\ntrace = "clip.csv"\n'
    traced.write_text(_SCENARIO.replace("{rate}", "200kbps") + flow, encoding="utf-8")
    exp = fake("traced", traced)
    store = RunCache(tmp_path / "cache")
    first = reproduce([exp], tmp_path / "first", store, replicas=0)
    assert len(executed) == 4
    keys = [j.key for j in first.plans[0].jobs]
    assert keys == [cache.run_key(j.resolved) for j in first.plans[0].jobs]
    executed.clear()
    assert [j.key for j in reproduce([exp], tmp_path / "same", store, replicas=0).plans[0].jobs] == keys
    assert executed == []
    clip.write_text(clip_of(1200), encoding="utf-8")
    changed = reproduce([exp], tmp_path / "changed", store, replicas=0)
    assert sorted(executed) == [f"traced/p{i}" for i in range(4)]
    assert all(a != b for a, b in zip(keys, (j.key for j in changed.plans[0].jobs), strict=True))


def test_restored_outputs_share_the_entrys_files_and_one_changed_is_never_served(
    tmp_path: Path, scenario: Path, executed: list[str]
) -> None:
    store, exp = RunCache(tmp_path / "cache"), fake("fake-a", scenario)
    reproduce([exp], tmp_path / "first", store, replicas=0)
    good = (tmp_path / "first" / "fake-a" / "result.json").read_bytes()
    again = reproduce([exp], tmp_path / "out", store, replicas=0)
    assert again.stats["restored"] == 1
    result = tmp_path / "out" / "fake-a" / "result.json"
    # the same file system: the restored result is the cache entry's file, not a copy of it
    assert result.stat().st_nlink >= 2 and result.read_bytes() == good
    with result.open("r+b") as f:  # changed in place, as an editor keeping links would
        f.write(b"{ ")
    executed.clear()
    third = reproduce([exp], tmp_path / "third", store, replicas=0)
    # the entry's file changed with it: found corrupt, evaluated again from the cached runs
    assert third.stats["evaluated"] == 1 and third.stats["restored"] == 0 and executed == []
    assert without_timing(json.loads((tmp_path / "third" / "fake-a" / "result.json").read_text())) == (
        without_timing(json.loads(good))
    )


def test_link_or_copy_never_writes_through_a_link(tmp_path: Path) -> None:
    from fairstream.output import link_or_copy

    (tmp_path / "entry").write_text("cached")
    (tmp_path / "new").write_text("new")
    link_or_copy(tmp_path / "entry", tmp_path / "out")
    link_or_copy(tmp_path / "new", tmp_path / "out")  # replaces the link, leaves the entry alone
    assert (tmp_path / "entry").read_text() == "cached" and (tmp_path / "out").read_text() == "new"


def test_a_new_build_reruns_everything(
    tmp_path: Path, scenario: Path, executed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, out = RunCache(tmp_path / "cache"), tmp_path / "out"
    reproduce([fake("mine", scenario)], out, store, replicas=0)
    monkeypatch.setattr(cache, "_BUILD", Build(cache.build().version, "0" * 32))
    executed.clear()
    again = reproduce([fake("mine", scenario)], out, store, replicas=0)
    assert len(executed) == 4 and again.stats["evaluated"] == 1


def test_no_cache_computes_again(tmp_path: Path, scenario: Path, executed: list[str]) -> None:
    store, out = RunCache(tmp_path / "cache"), tmp_path / "out"
    reproduce([fake("mine", scenario)], out, store, replicas=0)
    executed.clear()
    reproduce([fake("mine", scenario)], out, RunCache(store.root, refresh=True), replicas=0)
    assert len(executed) == 4


def dataset_frames(directory: Path) -> dict[str, pl.DataFrame]:
    """A dataset's tables, without what depends on when and how the runs were made (wall times,
    whether a run came from the cache)."""
    frames = {}
    for path in sorted(directory.glob("*.parquet")):
        frame = pl.read_parquet(path)
        if path.stem == "runs":
            summaries = [json.loads(s) for s in frame["summary"]]
            for s in summaries:
                s.pop("wall_time_s"), s.pop("events_per_s")
            frame = frame.drop("cached", "wall_time_s").with_columns(
                summary=pl.Series([json.dumps(s, sort_keys=True) for s in summaries])
            )
        frames[path.stem] = frame
    return frames


def test_a_reproduction_stopped_halfway_resumes_into_the_same_result(
    tmp_path: Path, scenario: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exps = [fake("mine", scenario)]
    whole = tmp_path / "whole"
    reproduce(exps, whole, RunCache(tmp_path / "whole-cache"))
    ran: list[str] = []

    def stopping(spec: Any, store: Any) -> Any:
        if len(ran) == 3:  # the fourth run: Ctrl-C, as the core raises it
            raise Interrupted("interrupted at 0.1 s of 0.3 s simulated")
        ran.append(spec.label)
        return REAL_EXECUTE(spec, store)

    monkeypatch.setattr(fairstream.campaign, "execute", stopping)
    store, out = RunCache(tmp_path / "cache"), tmp_path / "out"
    with pytest.raises(Interrupted, match="3 of 8 runs finished; no experiment was evaluated"):
        Campaign(exps, replicas=1, cache=store).run(out, jobs=1, quiet=True)
    assert "mine: 3 of 8 runs finished" in (out / "mine" / "INCOMPLETE").read_text()
    done = list(ran)
    ran.clear()

    def counting(spec: Any, store: Any) -> Any:
        ran.append(spec.label)
        return REAL_EXECUTE(spec, store)

    monkeypatch.setattr(fairstream.campaign, "execute", counting)
    reproduce(exps, out, store)
    assert len(ran) == 5 and not set(ran) & set(done)  # only the missing runs
    assert not (out / "INCOMPLETE").exists() and not (out / "mine" / "INCOMPLETE").exists()
    ours = json.loads((out / "mine" / "result.json").read_text())
    theirs = json.loads((whole / "mine" / "result.json").read_text())
    assert without_timing(ours) == without_timing(theirs)
    a, b = dataset_frames(out / "mine" / "data"), dataset_frames(whole / "mine" / "data")
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].equals(b[name]), name


SWEEP_GRID = ["seed=[1, 2, 3, 4, 5, 6]"]


def _sweep_argv(scenario: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "fairstream",
        "sweep",
        str(scenario),
        "--set",
        *SWEEP_GRID,
        "-o",
        str(out),
        "-j",
        "1",
        "-q",
    ]


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_a_sweep_killed_halfway_resumes_into_the_same_result(tmp_path: Path) -> None:
    """``kill -9`` of the whole command halfway through; run again, only the missing points run,
    and the dataset is the same as an uninterrupted sweep's."""
    path = tmp_path / "s.toml"
    doc = small_scenario(duration="10000s")  # about 0.3 s a point: the kill lands with points to go
    doc["record"] = {"interval": "100s"}
    path.write_text(tomlio.dumps(doc), encoding="utf-8")
    env = {**os.environ, "FAIRSTREAM_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "sw"
    proc = subprocess.Popen(_sweep_argv(path, out), env=env, start_new_session=True)
    runs = tmp_path / "cache" / cache.RUNS
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(runs.rglob("*.run"))) < 2:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = len(list(runs.rglob("*.run")))
    assert 2 <= stored < 6 and not out.exists()
    subprocess.run(_sweep_argv(path, out), env=env, check=True)
    runs_table = pl.read_parquet(out / "data" / "runs.parquet")
    assert runs_table["cached"].sum() == stored  # only the others ran
    whole = tmp_path / "whole"
    subprocess.run(
        _sweep_argv(path, whole), env={**env, "FAIRSTREAM_CACHE": str(tmp_path / "c2")}, check=True
    )
    a, b = dataset_frames(out / "data"), dataset_frames(whole / "data")
    assert a.keys() == b.keys() and {"flow_summary", "flow_series", "link_series", "runs"} <= a.keys()
    for name in a:
        assert a[name].equals(b[name]), name


def test_a_sweep_on_a_dask_cluster_uses_the_cache_and_resumes(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    store = RunCache(tmp_path / "cache")
    scenario = small_scenario(duration="1s")
    fairstream.sweep(scenario, {"flow.1.rate": ["0.5Mbps", "1Mbps"]}, tmp_path / "half", jobs=1, cache=store)
    grid = {"flow.1.rate": ["0.5Mbps", "1Mbps", "1.5Mbps", "2Mbps"]}
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        result = fairstream.sweep(
            scenario, grid, tmp_path / "sw", scheduler=cluster.scheduler_address, cache=store
        )
        assert result.dataset.runs["cached"].to_list() == [True, True, False, False]
        again = fairstream.sweep(
            scenario, grid, tmp_path / "sw", scheduler=cluster.scheduler_address, cache=store
        )
        assert again.dataset.runs["cached"].to_list() == [True] * 4
    local = fairstream.sweep(scenario, grid, tmp_path / "local", jobs=1, cache=False)
    assert result.flows.equals(local.flows)


def test_a_reproduction_on_a_dask_cluster_evaluates_there_and_resumes(tmp_path: Path, scenario: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    store, out = RunCache(tmp_path / "cache"), tmp_path / "out"
    exps = [fake("mine", scenario)]
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster:
        first = Campaign(exps, replicas=0, cache=store)
        first.run(out, scheduler=cluster.scheduler_address, quiet=True)
        assert first.stats["computed"] == 4 and (out / "mine" / "result.json").is_file()
        (store.root / cache.EXPERIMENTS).rename(tmp_path / "gone")  # evaluate again, from the runs
        second = Campaign(exps, replicas=0, cache=store)
        second.run(out, scheduler=cluster.scheduler_address, quiet=True)
        assert second.stats["computed"] == 0 and second.stats["from_cache"] == 4
        assert second.stats["evaluated"] == 1


def test_a_dataset_point_reads_as_its_run_directory(tmp_path: Path) -> None:
    scenario = small_scenario(duration="2s")
    scenario["record"]["metrics"] = True
    grid = {"flow.1.rate": ["0.5Mbps", "1Mbps"], "seed": [1, 2]}
    kept = fairstream.sweep(scenario, grid, tmp_path / "kept", jobs=1, keep_runs=True)
    lean = fairstream.sweep(scenario, grid, tmp_path / "lean", jobs=1)
    assert not (tmp_path / "lean" / "runs").exists() and (tmp_path / "kept" / "runs" / "0003").is_dir()
    for i in range(4):
        a, b = kept.run(i), lean.run(i)
        assert b.output_dir == tmp_path / "lean" / "data" / f"{i:04d}"
        assert a.summary == b.summary and a.resolved_toml == b.resolved_toml
        for table in ("flow_summary", "flow_series", "link_series", "metrics", "link_summary"):
            assert a.table(table).equals(b.table(table)), (i, table)
    flows = lean.frame("flow_summary")
    assert flows.columns[:4] == ["point", "key", "flow.1.rate", "seed"] and flows.height == 8
    # Run directories written from the cache are marked as those computed are.
    again = fairstream.sweep(scenario, grid, tmp_path / "again", jobs=1, keep_runs=True)
    assert all(again.run(i).summary == kept.run(i).summary for i in range(4))
    for out in ("kept", "again"):
        for i in range(4):
            marker = fairstream.output.read_marker(tmp_path / out / "runs" / f"{i:04d}")
            assert marker is not None and marker["command"] == "run" and marker["complete"], (out, i)


def test_a_dataset_joins_its_points_tables_in_point_order_whatever_their_form(tmp_path: Path) -> None:
    """Tables handed over as IPC streams are read many at once (joined while their schemas
    agree); Parquet bytes, frames, empty tables and a change of columns on the way keep their
    place: the table is the points' own tables, in point order, each row led by its point."""
    import io

    from fairstream.dataset import Dataset, DatasetWriter

    def ipc(frame: pl.DataFrame) -> bytes:
        buf = io.BytesIO()
        frame.write_ipc_stream(buf)
        return buf.getvalue()

    def parquet(frame: pl.DataFrame) -> bytes:
        buf = io.BytesIO()
        frame.write_parquet(buf)
        return buf.getvalue()

    plain = [pl.DataFrame({"t": [float(i), i + 0.5], "x": [i, 10 * i]}) for i in range(8)]
    wider = plain[5].with_columns(y=pl.lit("extra"))
    tables: list[tuple[pl.DataFrame, pl.DataFrame | bytes]] = [
        (plain[0], ipc(plain[0])),
        (plain[1], ipc(plain[1])),
        (plain[2].clear(), ipc(plain[2].clear())),  # a run with no rows
        (plain[3], parquet(plain[3])),
        (plain[4], plain[4]),
        (wider, ipc(wider)),  # another schema: a stream of its own
        (plain[6], ipc(plain[6])),
        (plain[7], ipc(plain[7])),
    ]
    want = pl.concat(
        [
            frame.with_columns(point=pl.lit(i), key=pl.lit(f"k{i}"), p=pl.lit(i))
            for i, (frame, _) in enumerate(tables)
        ],
        how="diagonal_relaxed",
    )
    for fold in (1, 2, 3, 100):  # the first points are read while the rest are still running
        writer = DatasetWriter(tmp_path / f"ds{fold}", ["p"], tables=["flow_series"])
        writer.fold_points = fold
        for i in (3, 7, 0, 5, 1, 6, 2, 4):  # as they finish, not in order
            writer.add(i, f"k{i}", {"p": i}, {"seed": i}, {"flow_series": tables[i][1]})
        with pytest.raises(ValueError, match="point 1 .* added already"):
            writer.add(1, "k1", {"p": 1}, {"seed": 1}, {"flow_series": tables[1][1]})
        writer.close()
        got = Dataset(tmp_path / f"ds{fold}").table("flow_series")
        assert got.select(want.columns).equals(want), fold
        assert got["point"].to_list() == [0, 0, 1, 1, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
        assert got["y"].to_list() == [None] * 8 + ["extra"] * 2 + [None] * 4


def test_a_datasets_link_summary_from_summaries_and_frames_keeps_point_order(tmp_path: Path) -> None:
    """link_summary is made from the summaries' links, several points at once; a point that
    brings a link_summary frame of its own, or has no links, keeps its place among them."""
    from fairstream.dataset import Dataset, DatasetWriter

    def links(i: int) -> list[dict[str, object]]:
        return [
            {"name": f"l{j}", "packets": 10 * i + j, "loss": None if j else 0.5 * i} for j in range(i % 3)
        ]

    own = {4: pl.DataFrame({"name": ["own"], "packets": [99], "loss": [0.25]})}
    for mixed in (False, True):
        theirs = own if mixed else {}
        want = pl.concat(
            [
                (theirs[i] if i in theirs else pl.DataFrame(links(i))).with_columns(point=pl.lit(i))
                for i in range(9)
                if i in theirs or links(i)
            ],
            how="diagonal_relaxed",
        )
        for fold in (1, 2, 4, 100):
            writer = DatasetWriter(tmp_path / f"ds{fold}{mixed}", ["p"], tables=["link_summary"])
            writer.fold_points = fold
            for i in (3, 8, 0, 5, 1, 6, 2, 4, 7):
                writer.add(i, f"k{i}", {"p": i}, {"links": links(i)}, {"link_summary": theirs.get(i)})
            writer.close()
            got = Dataset(tmp_path / f"ds{fold}{mixed}").table("link_summary")
            assert got.select(want.columns).equals(want), (fold, mixed)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.integers(0, 2)), max_size=30),
    st.booleans(),
)
def test_a_dataset_splits_a_table_by_point_as_partition_by_does(
    keys: list[tuple[str | None, int]], grouped: bool
) -> None:
    """Slices where each point's rows are together (as a dataset writes them), partition_by's
    own where they are not: the same parts, in the same order, either way."""
    from fairstream.dataset import _split_by

    if grouped:
        keys = sorted(keys, key=lambda k: (k[1], str(k[0])))
    frame = pl.DataFrame(
        {"key": [k for k, _ in keys], "replica": [r for _, r in keys], "x": list(range(len(keys)))},
        schema={"key": pl.String, "replica": pl.Int64, "x": pl.Int64},
    )
    for by in (["key"], ["key", "replica"]):
        want = frame.partition_by(by, as_dict=True, maintain_order=True)
        got = _split_by(frame, by)
        assert list(got) == list(want) and all(got[a].equals(want[a]) for a in want)


def test_to_xarray_lays_a_grid_out_on_its_parameters(tmp_path: Path) -> None:
    pytest.importorskip("xarray")
    grid = {"flow.1.rate": ["0.5Mbps", "1Mbps"], "seed": [1, 2, 3]}
    result = fairstream.sweep(small_scenario(duration="1s"), grid, tmp_path / "sw", jobs=1)
    ds = result.to_xarray()
    assert dict(ds.sizes) == {"flow.1.rate": 2, "seed": 3, "name": 2}
    udp = ds["bytes_sent"].sel(name="udp")
    assert float(udp.sel({"flow.1.rate": "0.5Mbps", "seed": 2})) < float(
        udp.sel({"flow.1.rate": "1Mbps", "seed": 2})
    )
    series = result.to_xarray("flow_series", ["throughput_bps"])
    assert set(series.sizes) == {"flow.1.rate", "seed", "flow", "t_start"}


def test_parameters_named_as_columns_keep_their_own_values_and_every_point_its_cell(
    tmp_path: Path,
) -> None:
    """A reproduction's parameters named `seed` (a runs-table column) and `flow` (a series
    column): replica rows keep the parameter's value beside the run's own seed, `frame` and
    `to_xarray` read them without a clash, a point with no rows is a cell of NaN, and a table with
    many rows per cell (the packet trace) is refused by `to_xarray` rather than folded."""
    pytest.importorskip("xarray")
    from fairstream.dataset import Dataset, DatasetWriter

    writer = DatasetWriter(tmp_path / "ds", ["seed", "flow"], ["flow_series", "packets"], replicas=True)
    index = 0
    for seed in (1, 2):
        for flow in ("a", "b"):
            for replica in (0, 1):
                rows = 0 if (seed, flow) == (2, "b") else 2  # one point records no series
                series = pl.DataFrame(
                    {
                        "flow": ["tcp0"] * rows,
                        "t_start": [0.0, 1.0][:rows],
                        "throughput_bps": [float(seed)] * rows,
                    }
                )
                packets = pl.DataFrame({"t": [0.0, 0.5, 0.7], "seq": [1, 2, 3]})
                summary = {"seed": seed + 1000 * replica}
                writer.add(
                    index,
                    f"k{index}",
                    {"seed": seed, "flow": flow},
                    summary,
                    {"flow_series": series, "packets": packets},
                    replica=replica,
                )
            index += 1
    writer.close()
    ds = Dataset(tmp_path / "ds")
    assert ds.params == {"seed": "param.seed", "flow": "param.flow"}
    runs = ds.runs.sort("replica", "point")
    assert runs["param.seed"].to_list() == [1, 1, 2, 2] * 2
    assert runs["seed"].to_list() == [1, 1, 2, 2, 1001, 1001, 1002, 1002]
    tidy = ds.frame("flow_series")
    assert {"param.flow", "flow", "seed"} <= set(tidy.columns)
    assert tidy.filter(pl.col("replica") == 1)["seed"].unique().to_list() == [1, 2]
    xr_ds = ds.to_xarray("flow_series")
    assert dict(xr_ds.sizes) == {"seed": 2, "param.flow": 2, "replica": 2, "flow": 1, "t_start": 2}
    cell = xr_ds["throughput_bps"].sel({"seed": 2, "param.flow": "b", "replica": 1})
    assert np.isnan(cell.values).all()
    assert (
        float(
            xr_ds["throughput_bps"].sel(
                {"seed": 2, "param.flow": "a", "replica": 1, "t_start": 1.0, "flow": "tcp0"}
            )
        )
        == 2.0
    )
    with pytest.raises(ValueError, match="no array along them"):
        ds.to_xarray("packets")


def test_experiments_in_the_registry_have_stable_keys() -> None:
    """An experiment's key starts from its repr: no object address may creep into it (every
    reproduction would then evaluate every experiment again)."""
    for exp in EXPERIMENTS.values():
        assert " at 0x" not in repr(exp), exp.id


def test_warming_up_starts_the_workers_now_and_hands_back_only_the_callers_calls() -> None:
    from fairstream.parallel import Batch

    with Batch(2) as batch:
        batch.warm_up()
        assert batch._executor is not None  # the workers start while the caller plans
        batch.submit("mine", abs, -3)
        assert list(batch.results()) == [("mine", 3)]
        assert batch.finished == {"mine": 3}
        assert batch.map(abs, [-1, 2, -5, 4]) == [1, 2, 5, 4]  # in order, and not in `finished`
        assert batch.finished == {"mine": 3}


def _polars_threads(_: object) -> int:
    import polars as pl

    return pl.thread_pool_size()


@pytest.mark.parametrize(("env", "threads"), [(None, 1), ("2", 2)])
def test_a_batchs_workers_run_polars_on_one_thread_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, env: str | None, threads: int
) -> None:
    """The workers are one per core already: their polars runs on one thread, unless
    `POLARS_MAX_THREADS` is set."""
    from fairstream.parallel import Batch

    if env is None:
        monkeypatch.delenv("POLARS_MAX_THREADS", raising=False)
    else:
        monkeypatch.setenv("POLARS_MAX_THREADS", env)
    with Batch(2) as batch:
        assert batch.map(_polars_threads, [0, 1]) == [threads, threads]


class _LeftAtTeardown:
    """Writes `path` when it is collected: at a worker's teardown of modules, if that runs."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __del__(self) -> None:
        Path(self.path).write_text("torn down", encoding="utf-8")


def test_a_batchs_workers_collect_cycles_less_often() -> None:
    import gc

    from fairstream.parallel import WORKER_GC_THRESHOLDS, Batch

    with Batch(2) as batch:
        assert batch.map(_gc_thresholds, [0, 1]) == [WORKER_GC_THRESHOLDS] * 2
    assert gc.get_threshold() != WORKER_GC_THRESHOLDS  # this process is left as it was


def _gc_thresholds(_: object) -> tuple[int, ...]:
    import gc

    return gc.get_threshold()


def _leave_traces(tmp: str) -> int:
    import atexit
    import sys

    atexit.register(Path(tmp, "exit-handler").write_text, "ran", encoding="utf-8")
    sys.modules[__name__]._left = _LeftAtTeardown(str(Path(tmp, "teardown")))  # type: ignore[attr-defined]
    sys.stdout.write("unflushed")  # no newline: still in the buffer when the worker ends
    return os.getpid()


def test_a_batchs_workers_end_without_the_interpreters_teardown(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A worker ends as soon as its exit handlers have run and its output is flushed: the
    teardown of modules (0.25 s with polars and matplotlib loaded, every core idle while
    `Batch.close` waits) is skipped."""
    from fairstream.parallel import Batch

    with Batch(2) as batch:
        batch.map(_leave_traces, [str(tmp_path)] * 2)
    assert (tmp_path / "exit-handler").read_text(encoding="utf-8") == "ran"
    assert not (tmp_path / "teardown").exists()
    assert "unflushed" in capfd.readouterr().out


def test_ctrl_c_while_a_batch_maps_says_nothing_ran() -> None:
    """Ctrl-C while the workers do what a caller needs before it runs anything (a campaign's
    planning, `Batch.map`) raises `Interrupted` saying so, not a count of runs."""
    import _thread
    import threading

    from fairstream.interrupt import BatchInterrupted
    from fairstream.parallel import Batch

    with Batch(2) as batch:
        batch.warm_up()
        timer = threading.Timer(0.3, _thread.interrupt_main)  # the sleeps last 1.5 s: no race
        timer.start()
        with pytest.raises(Interrupted, match=r"^interrupted while sleeping; nothing ran$") as stop:
            batch.map(time.sleep, [1.5, 1.5, 1.5], "sleeping")
        timer.join()
        assert not isinstance(stop.value, BatchInterrupted) and batch.finished == {}


# --- how runs are cut into calls ------------------------------------------------------------------


def test_a_call_holds_runs_of_one_family_as_many_as_its_cost_allows() -> None:
    from fairstream.campaign import CALL_S, Chunker, Outcome, RunSpec

    specs = [RunSpec("", "x.toml", f"k{i}", family="cheap" if i < 300 else "dear") for i in range(310)]
    chunker = Chunker(specs, None)

    def answer(chunk: Any, cost_s: float) -> None:
        chunker.learn(chunk.specs, [Outcome(s.key, "{}", cost_s=cost_s) for s in chunk.specs])

    first = chunker.next()
    assert len(first.specs) == 1  # a family's cost is unknown until its first call answers
    answer(first, CALL_S / 40)
    calls = [chunker.next() for _ in range(8)]
    sizes = [len(c.specs) for c in calls]
    assert sizes[:7] == [40] * 7 and sizes[7] == 299 - 7 * 40  # the family's last runs, not the next's
    assert {s.family for c in calls for s in c.specs} == {"cheap"}
    dear = chunker.next()
    assert [s.family for s in dear.specs] == ["dear"]  # a new family: one run until it answers
    answer(dear, 3 * CALL_S)
    assert [len(c.specs) for c in iter(chunker.next, None)] == [1] * 9  # a long run goes alone


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see the workers")
def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """``kill -9`` of the parent alone (not its group): its workers, which no signal reaches,
    notice and end rather than wait forever for calls."""
    script = (
        "import os, sys, time\n"
        "from fairstream.parallel import Batch\n"
        "if __name__ == '__main__':\n"
        "    batch = Batch(2)\n"
        "    assert batch.map(abs, [-1, -2]) == [1, 2]\n"
        "    print(*batch._executor._processes, flush=True)\n"
        "    time.sleep(600)\n"
    )
    (tmp_path / "parent.py").write_text(script, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "parent.py"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    workers = [int(w) for w in proc.stdout.readline().split()]
    assert len(workers) == 2
    proc.kill()
    proc.wait()

    def running(pid: int) -> bool:  # an ended process its new parent has not reaped is a zombie
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(running(w) for w in workers):
        time.sleep(0.05)
    left = [w for w in workers if running(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, "workers outlived their parent"
