"""The run cache: keys, entries checked whole before they are served, a corrupt or partial entry
computed again, pruning, and `fairstream cache info` / `prune`."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import fairstream
import pytest
from conftest import small_scenario
from fairstream import _core, cache, campaign, runfile, tomlio
from fairstream.cache import Build, RunCache, run_key
from fairstream.campaign import Chunk, Outcome, RunSpec, execute_chunk
from fairstream.cli import main
from fairstream.interrupt import ChunkInterrupted


def test_the_build_id_is_a_hash_of_the_extension_module() -> None:
    first = _core.build_id()
    assert re.fullmatch(r"[0-9a-f]{32}", first) and _core.build_id() == first
    assert cache.build() == Build(_core.__version__, first)


def test_a_run_is_keyed_by_its_resolved_scenario_seed_and_build() -> None:
    resolved = _core.validate(tomlio.dumps(small_scenario()), "s.toml")
    key = run_key(resolved)
    assert re.fullmatch(r"[0-9a-f]{64}", key) and run_key(resolved) == key
    spelled = small_scenario()
    spelled["flow"][0]["window"] = 20  # ns-2's default, written out: the same resolved scenario
    assert run_key(_core.validate(tomlio.dumps(spelled), "other-name.toml")) == key
    changed = small_scenario(udp_rate="0.5Mbps")
    assert run_key(_core.validate(tomlio.dumps(changed), "s.toml")) != key
    seeded = small_scenario()
    seeded["seed"] = 3
    three = run_key(_core.validate(tomlio.dumps(seeded), "s.toml"))
    assert three != key
    # The seed given apart (`--seed 3`, `seed=3`) is the seed in the file: one run, one key.
    apart = _core.Simulation(tomlio.dumps(small_scenario()), "s.toml", 3, None, None)
    assert run_key(apart.resolved_toml()) == three
    assert run_key(resolved, of=Build(_core.__version__, "another build")) != key


def test_a_seed_given_apart_finds_the_run_of_the_file_that_says_it(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    seeded = small_scenario(duration="1s")
    seeded["seed"] = 3
    fairstream.run(seeded, cache=store)
    fairstream.run(small_scenario(duration="1s"), seed=3, cache=store)  # `--seed 3`: the same run
    assert (store.stored, store.hits) == (1, 1)


def test_a_trace_file_that_changed_is_another_run(tmp_path: Path) -> None:
    trace = tmp_path / "clip.csv"
    trace.write_text("time,type,bytes\n0,I,1000\n0.1,P,500\n", encoding="utf-8")
    resolved = f'[[flow]]\ntrace = "{trace}"\n'
    first = run_key(resolved)
    assert cache.read_files(resolved) == {str(trace): cache.sha256_file(trace)}
    video = f'[[flow]]\ntrace = {{ video = "{trace}", frame_rate = 25 }}\n'  # the same file, as a video
    assert cache.read_files(video) == cache.read_files(resolved)
    time.sleep(0.01)
    trace.write_text("time,type,bytes\n0,I,1000\n0.1,P,501\n", encoding="utf-8")
    assert run_key(resolved) != first


def test_a_run_is_computed_once_then_served(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    first = fairstream.run(small_scenario(duration="2s"), cache=store)
    assert (store.hits, store.stored) == (0, 1)
    again = fairstream.run(small_scenario(duration="2s"), cache=store)
    assert store.hits == 1 and again._source is not None  # from the cache, not simulated
    for table in ("flow_summary", "flow_series", "link_series"):
        assert again.table(table).equals(first.table(table)), table
    assert again.summary == first.summary and again.resolved_toml == first.resolved_toml
    out = tmp_path / "out"
    fairstream.run(small_scenario(duration="2s"), output_dir=out, cache=store)
    assert store.hits == 2 and json.loads((out / "summary.json").read_text()) == first.summary
    assert fairstream.results.RunResult(out).flow_series.equals(first.flow_series)


def test_run_o_stores_the_files_it_wrote_and_serves_them_byte_for_byte(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    fairstream.run(small_scenario(duration="2s"), output_dir=tmp_path / "a", cache=store)
    fairstream.run(small_scenario(duration="2s"), output_dir=tmp_path / "b", cache=store)
    assert store.hits == 1
    for name in ("summary.json", "scenario.resolved.toml", "flow_series.parquet", "link_series.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_a_run_with_metrics_is_stored_compressed_holding_what_its_run_directory_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker stores a run that recorded metrics and losses from memory, with no run directory
    made on the way: its tables as zstd-compressed Arrow IPC streams holding what the run
    directory's Parquet files hold, and its packet trace as that very Parquet file."""
    import io
    import tempfile

    import polars as pl
    from fairstream.campaign import RunSpec, execute

    def no_directory(*args: object, **kwargs: object) -> str:
        raise AssertionError("a scratch run directory was made")

    doc = small_scenario(duration="2s")
    doc["record"] = {"interval": "100ms", "metrics": ["cwnd"], "packets": ["drop"]}
    text = tomlio.dumps(doc)
    store = RunCache(tmp_path / "cache")
    key = run_key(_core.validate(text, "s.toml"))
    with monkeypatch.context() as patch:
        patch.setattr(tempfile, "mkdtemp", no_directory)
        execute(RunSpec(text, "s.toml", key=key), store)
    entry = store.get(key)
    assert entry is not None
    members = entry.manifest["tables"]
    assert members["metrics"] == "metrics.arrows" and members["packets"] == "packets.parquet"
    assert not any((store.root / cache.TMP).iterdir())  # no scratch directory left, or made
    sim = _core.Simulation(text, "s.toml", None, None, None)
    assert sim.advance(sim.duration_s)
    run = tmp_path / "run"
    sim.write_results(str(run))
    assert entry.table_bytes("packets") == (run / "packets.parquet").read_bytes()
    for name in members:
        assert entry.table(name).equals(pl.read_parquet(run / f"{name}.parquet")), name
    small = sim.table_ipc("metrics")
    compressed = entry.table_bytes("metrics")
    assert compressed is not None and small is not None and len(compressed) < len(small)
    assert pl.read_ipc_stream(io.BytesIO(compressed)).equals(pl.read_ipc_stream(io.BytesIO(small)))


def _only_entry(store: RunCache) -> Path:
    (entry,) = list((store.root / cache.RUNS).rglob("*.run"))
    return entry


@pytest.mark.parametrize("damage", ["flip a byte", "cut short", "empty", "not one"])
def test_a_corrupt_or_partial_entry_is_computed_again_never_served(tmp_path: Path, damage: str) -> None:
    store = RunCache(tmp_path / "cache")
    first = fairstream.run(small_scenario(duration="2s"), cache=store)
    path = _only_entry(store)
    data = bytearray(path.read_bytes())
    if damage == "flip a byte":
        data[len(data) // 3] ^= 0x40  # inside a member: its CRC fails
    elif damage == "cut short":
        data = data[: len(data) // 2]  # a writer killed part-way, had it written in place
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"PK\x03\x04 something else entirely" * 10)
    path.write_bytes(bytes(data))
    again = fairstream.run(small_scenario(duration="2s"), cache=store)
    assert store.hits == 0 and store.discarded and str(path) in store.discarded[0]
    assert again._source is None and again.flow_series.equals(first.flow_series)  # simulated again
    assert _only_entry(store).read_bytes() != bytes(data)  # and stored whole again


def _specs(rates: list[str]) -> list[RunSpec]:
    """One-second runs of the small scenario at each UDP rate, keyed as the cache keys them."""
    specs = []
    for rate in rates:
        text = tomlio.dumps(small_scenario(duration="1s", udp_rate=rate))
        specs.append(
            RunSpec(text, "s.toml", run_key(_core.validate(text, "s.toml")), hand_back=("flow_series",))
        )
    return specs


def test_a_calls_small_runs_are_one_bundle_each_run_under_its_own_name(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    specs = _specs(["0.2Mbps", "0.4Mbps", "0.6Mbps"])
    outcomes = execute_chunk(Chunk(tuple(specs), store))
    paths = [store.path(s.key) for s in specs]  # type: ignore[arg-type]
    stats = [p.stat() for p in paths]
    assert len({st.st_ino for st in stats}) == 1 and stats[0].st_nlink == 3  # one file, three names
    assert store.stored == 3 and not list((store.root / cache.TMP).iterdir())  # no staging left
    for spec, outcome in zip(specs, outcomes, strict=True):
        entry = store.get(spec.key)  # type: ignore[arg-type]
        assert entry is not None and entry.summary_text() == outcome.summary_json
        assert entry.table_bytes("flow_series") == outcome.tables["flow_series"]
    info = store.info()["kinds"]["run"]
    assert info["entries"] == 3 and stats[0].st_size - 2 <= info["bytes"] <= stats[0].st_size
    # A run's own record damaged: that run is computed again, the bundle's others still served.
    data = bytearray(paths[1].read_bytes())
    at = data.index(b'"key":"' + specs[1].key.encode())  # type: ignore[union-attr]  # its manifest
    data[at - 200] ^= 0x40  # inside its record's members
    paths[0].write_bytes(bytes(data))  # through any of the names: they are one file
    assert store.get(specs[1].key) is None and str(paths[1]) in store.discarded[0]  # type: ignore[arg-type]
    assert not paths[1].exists() and paths[0].stat().st_nlink == 2
    assert store.get(specs[0].key) is not None and store.get(specs[2].key) is not None  # type: ignore[arg-type]
    (again,) = execute_chunk(Chunk((specs[1],), store))  # alone in its call: a file of its own
    assert again.tables == outcomes[1].tables and paths[1].stat().st_nlink == 1
    assert store.get(specs[1].key) is not None  # type: ignore[arg-type]
    # Its record's own manifest altered (no member's CRC covers it), the bundle's CRC of the
    # record finds it.
    data = bytearray(paths[2].read_bytes())
    at = data.index(b'"key":"' + specs[2].key.encode())  # type: ignore[union-attr]
    digit = data.index(b'"events":', at) + len(b'"events":')  # a count: still a number, same length
    data[digit] = ord("2") if data[digit] == ord("1") else ord("1")
    paths[2].write_bytes(bytes(data))
    assert store.get(specs[2].key) is None and not paths[2].exists()  # type: ignore[arg-type]
    # Cut short, the bundle serves none of its runs.
    paths[0].write_bytes(paths[0].read_bytes()[:-100])
    assert store.get(specs[0].key) is None and not paths[0].exists()  # type: ignore[arg-type]


def test_an_interrupted_call_stores_the_runs_it_finished_before_it_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunCache(tmp_path / "cache")
    specs = _specs(["0.2Mbps", "0.4Mbps", "0.6Mbps"])
    real = campaign.execute

    def third_interrupted(spec: RunSpec, cache_: RunCache | None) -> Outcome:
        if spec is specs[2]:
            raise KeyboardInterrupt
        return real(spec, cache_)

    monkeypatch.setattr(campaign, "execute", third_interrupted)
    with pytest.raises(ChunkInterrupted) as stop:
        execute_chunk(Chunk(tuple(specs), store))
    assert [o.key for o in stop.value.done] == [specs[0].key, specs[1].key]
    assert all(store.get(s.key) is not None for s in specs[:2]) and store.get(specs[2].key) is None  # type: ignore[arg-type]


def test_bundling_is_per_thread(tmp_path: Path) -> None:
    """A Dask worker runs calls in threads: a call's runs are stored when that call ends, not
    when another thread's bundling does."""
    import threading

    store = RunCache(tmp_path / "cache")
    record = cache.RunRecord('{"seed": 1}\n', "duration = 1\n", {}, 0.5, 10)
    a_stored, b_done = threading.Event(), threading.Event()

    def thread_a() -> None:
        with store.bundling():
            store.put("a" * 64, record)
            store.put("c" * 64, record)
            a_stored.set()
            b_done.wait(10)

    a = threading.Thread(target=thread_a)
    a.start()
    assert a_stored.wait(10)
    with store.bundling():
        store.put("b" * 64, record)
    assert store.get("b" * 64) is not None  # stored when this thread's bundling ended
    assert store.get("a" * 64) is None  # the other's, not yet
    b_done.set()
    a.join()
    assert store.get("a" * 64) is not None and store.get("c" * 64) is not None


def test_a_bundle_stored_over_entries_already_there_replaces_them(tmp_path: Path) -> None:
    """Runs stored again (``--no-cache``, or two workers racing to one run) take over their
    names: each is linked to the new bundle in place of the old entry, atomically."""
    store = RunCache(tmp_path / "cache")
    keys = ["a" * 64, "b" * 64]
    for seed in (1, 2):
        record = cache.RunRecord(f'{{"seed": {seed}}}\n', "duration = 1\n", {}, 0.5, 10)
        with store.bundling():
            for key in keys:
                store.put(key, record)
        stats = [store.path(k).stat() for k in keys]
        assert stats[0].st_ino == stats[1].st_ino and stats[0].st_nlink == 2  # one bundle, two names
        for key in keys:
            entry = store.get(key)
            assert entry is not None and entry.summary_text() == f'{{"seed": {seed}}}\n'
    assert store.stored == 4 and not list((store.root / cache.TMP).iterdir())  # no staging left


def test_runfile_refuses_what_is_not_whole(tmp_path: Path) -> None:
    path = tmp_path / "x.run"
    written = runfile.write(path, [("a", b"hello"), ("b", b"world!")], {"key": "k"})
    with open(path, "rb") as f:
        assert runfile.read_manifest(f) == written
        assert runfile.read_member(f, written, "b") == b"world!"
        assert runfile.verify(f, written) is None
        runfile.copy_member(f, written, "b", tmp_path / "b")
        assert (tmp_path / "b").read_bytes() == b"world!"
    whole = path.read_bytes()
    for cut in (1, 10, len(whole) - 1):
        path.write_bytes(whole[:cut])
        with open(path, "rb") as f, pytest.raises(runfile.CorruptEntry):
            runfile.read_manifest(f)
    path.write_bytes(whole.replace(b"hello", b"jello"))
    with open(path, "rb") as f:
        manifest = runfile.read_manifest(f)
        assert runfile.verify(f, manifest) == "a"
        with pytest.raises(runfile.CorruptEntry):
            runfile.copy_member(f, manifest, "a", tmp_path / "a")
        with pytest.raises(runfile.CorruptEntry):
            runfile.read_member(f, manifest, "a")
    # One bit of the manifest flipped (a member's name, "key"): never read as another manifest.
    for was, now in ((b'"b":', b'"c":'), (b'"key":"k"', b'"key":"j"')):
        assert was in whole
        path.write_bytes(whole.replace(was, now))
        with open(path, "rb") as f, pytest.raises(runfile.CorruptEntry, match="manifest fails its CRC"):
            runfile.read_manifest(f)


def test_a_run_entry_whose_manifest_is_altered_is_computed_again(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    first = fairstream.run(small_scenario(duration="1s"), cache=store)
    (entry,) = (store.root / cache.RUNS).rglob("*.run")
    data = entry.read_bytes()
    assert data.count(b'"flow_series"') == 1
    entry.write_bytes(data.replace(b'"flow_series"', b'"flow_sdries"'))
    again = fairstream.run(small_scenario(duration="1s"), cache=store)
    assert store.hits == 0 and store.stored == 2 and len(store.discarded) == 1
    assert again.flow_series.equals(first.flow_series)


def test_a_planned_reproduction_altered_by_one_byte_is_planned_again(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    plan = [['rate = "10Mbps"\n', "x.toml", "resolved", "k" * 64, 1.0e6]]
    store.put_json(cache.PLANS, "p" * 64, plan)
    assert store.get_json(cache.PLANS, "p" * 64) == plan
    path = store.json_path(cache.PLANS, "p" * 64)
    whole = path.read_bytes()
    path.write_bytes(whole.replace(b"10Mbps", b"11Mbps"))  # still JSON, still a plan
    assert store.get_json(cache.PLANS, "p" * 64) is None
    assert store.discarded and "SHA-256" in store.discarded[-1]
    assert store.get_json(cache.PLANS, "q" * 64) is None
    path.write_bytes(whole)
    assert store.get_json(cache.PLANS, "p" * 64) == plan
    assert store.info()["kinds"]["plan"]["usable"] == 1


def test_an_entry_of_the_wrong_kind_is_healed_and_pruned_and_the_user_told(
    tmp_path: Path, run_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    assert main(["run", str(scenario), "-o", str(tmp_path / "a"), "-q"]) == 0
    (entry,) = (run_cache / cache.RUNS).rglob("*.run")
    entry.unlink()
    entry.mkdir()  # a directory where the run file should be
    (entry / "x").write_text("x", encoding="utf-8")
    assert main(["run", str(scenario), "-o", str(tmp_path / "b"), "-q"]) == 0
    err = capsys.readouterr().err
    assert f"{entry}: a damaged run cache entry" in err and "Warning" not in err, err
    assert entry.is_file()  # healed: the run computed again and stored under its name
    assert main(["run", str(scenario), "-o", str(tmp_path / "c"), "-q"]) == 0
    assert "damaged" not in capsys.readouterr().err
    store = RunCache(run_cache)
    experiment = store.dir_path("e" * 64)
    experiment.parent.mkdir(parents=True)
    experiment.write_text("a file where a directory should be", encoding="utf-8")
    with pytest.warns(cache.DamagedEntryWarning):
        assert store.get_dir("e" * 64) is None
    store.put_dir("e" * 64, tmp_path / "a", ["summary.json"])
    assert store.get_dir("e" * 64) == experiment
    entry.unlink()
    entry.mkdir()
    assert store.prune(max_bytes=0)[0] == 2 and not entry.exists() and not experiment.exists()


def test_a_result_served_from_the_cache_reads_what_was_served_whatever_happens_to_the_cache(
    tmp_path: Path,
) -> None:
    store = RunCache(tmp_path / "cache")
    first = fairstream.run(small_scenario(duration="1s"), cache=store)
    served = fairstream.run(small_scenario(duration="1s"), cache=store)  # nothing read yet
    assert store.hits == 1
    again = RunCache(tmp_path / "cache", refresh=True)  # another command stores it anew
    fairstream.run(small_scenario(duration="1s"), cache=again)
    assert again.stored == 1
    RunCache(tmp_path / "cache").prune(max_bytes=0)  # and then the cache is emptied
    assert not list((tmp_path / "cache" / cache.RUNS).rglob("*.run"))
    assert served.flow_summary.equals(first.flow_summary)
    assert served.flow_series.equals(first.flow_series) and served.summary == first.summary


def test_a_new_build_computes_everything_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RunCache(tmp_path / "cache")
    fairstream.run(small_scenario(duration="1s"), cache=store)
    monkeypatch.setattr(cache, "_BUILD", Build(_core.__version__, "f" * 32))
    fairstream.run(small_scenario(duration="1s"), cache=store)
    assert (store.hits, store.stored) == (0, 2)
    info = store.info()
    assert info["kinds"]["run"]["entries"] == 2 and info["kinds"]["run"]["usable"] == 1
    assert store.prune(stale=True)[0] == 1  # the other build's entry
    assert store.info()["kinds"]["run"]["usable"] == 1


def test_prune_by_age_and_size_least_recently_used_first(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    for rate in ("0.2Mbps", "0.4Mbps", "0.6Mbps"):
        fairstream.run(small_scenario(duration="1s", udp_rate=rate), cache=store)
    entries = list((store.root / cache.RUNS).rglob("*.run"))
    sizes = [p.stat().st_size for p in entries]
    now = time.time()
    for age_days, path in zip((40, 20, 1), entries, strict=True):
        os.utime(path, (now - age_days * 86400, now - age_days * 86400))
    assert store.prune(older_than_s=30 * 86400) == (1, sizes[0])
    assert [p.exists() for p in entries] == [False, True, True]
    assert store.prune(max_bytes=sizes[2]) == (1, sizes[1])  # the least recently used goes first
    assert [p.exists() for p in entries] == [False, False, True]


def test_info_and_prune_count_a_file_experiment_entries_share_once(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    out = tmp_path / "out"
    for name, size in (("data/shared.parquet", 6000), ("own-a.json", 100), ("own-b.json", 300)):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(b"x" * size)
    store.put_dir("a" * 64, out, ["data/shared.parquet", "own-a.json"])
    store.put_dir("b" * 64, out, ["data/shared.parquet", "own-b.json"])  # links the same file
    on_disk = 6000 + 100 + 300 + sum(p.stat().st_size for p in store.root.rglob("manifest.json"))
    assert (out / "data/shared.parquet").stat().st_nlink == 3  # two entries and the output
    info = store.info()
    assert info["kinds"]["experiment"]["entries"] == 2
    assert info["bytes"] == info["kinds"]["experiment"]["bytes"] == on_disk
    assert store.prune(max_bytes=on_disk) == (0, 0)
    (first,) = (p for p in store.root.rglob("manifest.json") if (p.parent / "own-a.json").exists())
    # The least recently used entry goes; the file the other still names stays, and is not freed.
    os.utime(first, (time.time() - 60, time.time() - 60))
    own = 100 + first.stat().st_size
    assert store.prune(max_bytes=on_disk - 1) == (1, own)
    assert not first.exists() and store.info()["bytes"] == on_disk - own
    assert store.prune(max_bytes=6000) == (1, on_disk - own)  # the last name: all of it


def test_a_staging_file_of_a_dead_process_is_removed(tmp_path: Path) -> None:
    store = RunCache(tmp_path / "cache")
    tmp = store.root / cache.TMP
    tmp.mkdir(parents=True)
    dead = tmp / f"abc.run.999999999@{fairstream.output._host()}"
    live = tmp / f"abc.run.{os.getpid()}@{fairstream.output._host()}"
    other_host = tmp / "abc.run.1@some-other-host"
    for path in (dead, live, other_host):
        path.write_bytes(b"half an entry")
    assert cache.clear_staging(store.root) == [dead]
    assert live.exists() and other_host.exists()
    dead.write_bytes(b"half an entry")
    fairstream.run(small_scenario(duration="1s"), cache=store)  # the next writer clears it
    assert not dead.exists() and live.exists() and other_host.exists()


def test_cache_info_and_prune_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run_cache: Path
) -> None:
    fairstream.run(small_scenario(duration="1s"))  # into this test's cache (FAIRSTREAM_CACHE)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(run_cache) in out and "runs: 1 (" in out and "1 usable by this build" in out
    assert main(["cache", "prune", "--older-than", "1d"]) == 0
    assert "removed 0 entries" in capsys.readouterr().out
    assert main(["cache", "prune", "--all"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert main(["cache", "info"]) == 0 and "runs: none" in capsys.readouterr().out


def test_cache_info_says_when_the_cache_is_not_a_directory_yet_or_at_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIRSTREAM_CACHE", str(tmp_path / "new"))
    assert main(["cache", "info"]) == 0
    assert capsys.readouterr().out.startswith(f"run cache: {tmp_path / 'new'} (not made yet: ")
    assert not (tmp_path / "new").exists()  # looking makes nothing
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    monkeypatch.setenv("FAIRSTREAM_CACHE", str(tmp_path / "a-file"))
    assert main(["cache", "info"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"run cache: {tmp_path / 'a-file'} (not a directory: no run can be stored there; " + (
        "point FAIRSTREAM_CACHE at a directory)"
    )


def test_parse_age() -> None:
    assert cache.parse_age("30d") == 30 * 86400 and cache.parse_age("90min") == 5400
    assert cache.parse_age("1.5h") == 5400 and cache.parse_age("10s") == 10
    for bad in ("soon", "-1d", "3 parsecs", ""):
        with pytest.raises(ValueError):
            cache.parse_age(bad)


def test_the_run_command_takes_a_run_from_the_cache_unless_no_cache(
    tmp_path: Path, run_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(tomlio.dumps(small_scenario(duration="1s")), encoding="utf-8")
    assert main(["run", str(path), "-o", str(tmp_path / "a")]) == 0
    (entry,) = (run_cache / cache.RUNS).rglob("*.run")

    def created() -> float:
        with open(entry, "rb") as f:
            return runfile.read_manifest(f)["created"]

    stored = created()
    assert main(["run", str(path), "-o", str(tmp_path / "b")]) == 0
    assert "from the run cache" in capsys.readouterr().err
    assert (tmp_path / "a" / "summary.json").read_bytes() == (tmp_path / "b" / "summary.json").read_bytes()
    assert main(["run", str(path), "-o", str(tmp_path / "c"), "--no-cache"]) == 0
    assert "from the run cache" not in capsys.readouterr().err
    (again,) = (run_cache / cache.RUNS).rglob("*.run")
    assert again == entry and created() > stored  # computed again, and stored in its place


def test_a_sweep_whose_cache_cannot_store_says_so_once_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once, by the sweep before its workers start, not once per call nor once per worker, and as
    the message alone, not Python's format quoting fairstream's own source."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("FAIRSTREAM_CACHE", str(blocked / "cache"))
    path = tmp_path / "s.toml"
    path.write_text(tomlio.dumps(small_scenario(duration="200ms")), encoding="utf-8")
    seeds = "[" + ", ".join(str(i) for i in range(1, 13)) + "]"
    assert (
        main(["sweep", str(path), "--set", f"seed={seeds}", "-o", str(tmp_path / "out"), "-j", "2", "-q"])
        == 0
    )
    lines = [line for line in capfd.readouterr().err.splitlines() if line]
    said = f"the run cache ({blocked / 'cache'}) could not store runs"
    assert len(lines) == 1 and lines[0].startswith(said), lines


def test_a_sweep_with_a_cache_that_cannot_be_written_runs_and_warns(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    store = RunCache(blocked / "cache")
    with pytest.warns(cache.CacheWriteWarning, match="could not store"):
        result = fairstream.sweep(
            small_scenario(duration="1s"), {"seed": [1, 2]}, tmp_path / "out", jobs=1, cache=store
        )
    assert result.flows["point"].unique().to_list() == [0, 1]
    assert store.discarded == []  # no cache is no damaged entry
