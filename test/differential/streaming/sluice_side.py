"""Runs a case on Sluice: the query as a streaming table of `sluice sql`, one process per run.

The first process creates the Delta sources (CREATE TABLE), the static tables and
`CREATE STREAMING TABLE sink OUTPUT MODE <mode> AS <query>` (file sources become
`STREAM read_files(dir, format => ..., schema => ...)`). Each run step is a new process that
applies the inputs since the previous run (INSERT INTO / the case's SQL; files are written by the
harness before it starts), SETs the case's confs, runs `REFRESH STREAMING TABLE sink` and reads,
after marker rows, the sink's rows (update mode: the change data feed's inserts and
post-images, by commit), and the progress JSON of the new batches (streaming_progress).
A Kafka source is `STREAM read_kafka(bootstrapServers => ..., subscribe => <its topic>)` on the
real broker (kafka_peer.py); its records are produced before the run's process starts. A crash
step deletes the last commits/N of the table's checkpoint (<warehouse>/_checkpoints/sink).
"""

import json
import os
import re
import subprocess

import case_model
import files
import kafka_peer
import observations
import peers
import values

SINK = "sink"
MARK = "__step__"


def _script_rows(stdout):
    """{marker: [row objects after it]} of a script's JSON output."""
    out, current = {}, None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        obj = json.loads(line)
        if MARK in obj:
            current = obj[MARK]
            out[current] = []
        elif current is not None:
            out[current].append(obj)
    return out


def _sql(warehouse, statements, timeout):
    env = {**os.environ, "TZ": "UTC"}
    try:
        proc = subprocess.run([peers.sluice_bin(), "sql", "--warehouse", warehouse, "--format",
                               "json"], input="\n".join(statements) + "\n", text=True,
                              capture_output=True, timeout=timeout, env=env,
                              cwd=os.path.dirname(warehouse))
    except subprocess.TimeoutExpired:
        return None, {}, f"timed out after {timeout} s"
    # The statement's error is the line `Error (statement at line N): ...`; log lines (the
    # query's termination, with ids and paths) come before it.
    lines = proc.stderr.strip().splitlines()
    errors = [ln for ln in lines if ln.startswith("Error (statement at line")]
    err = " ".join(errors[-1:] or lines)
    err = re.sub(r"^Error \(statement at line \d+\): ", "", err)
    return proc.returncode, _script_rows(proc.stdout), err


def _error(code, err):
    """A clear refusal ("error") or a crash (an internal error, a signal, a timeout)."""
    clear = code == 1 and err and "INTERNAL" not in err.upper().split(":")[0]
    return {"error": err} if clear else {"crash": f"exit {code}: {err or 'no message'}"}


def _mark(name):
    return f"SELECT '{name}' AS {MARK};"


def run_case(case, work, timeout):
    base = os.path.join(work, "sluice", case.name)
    warehouse = os.path.join(base, "warehouse")
    os.makedirs(warehouse)
    dirs = {}
    create = []
    for name, src in case.sources.items():
        if src.format == "delta":
            create.append(case_model.create_table_sql(name, src) + ";")
        elif src.format != "kafka":
            dirs[name] = os.path.join(base, "files", name)
            os.makedirs(dirs[name])
    topics = kafka_peer.create_topics("sluice", case)
    kafka = (kafka_peer.servers(), topics) if topics else None
    for name, (cols, rows) in case.static.items():
        create.append(f"CREATE TABLE {name} ({case.static_ddl[name]});")
        if rows:
            create.append(f"INSERT INTO {name} VALUES {case_model.values_sql(cols, rows)};")
    create.append(_mark("create"))
    trigger = " TRIGGER ONCE" if case.trigger == "once" else ""  # REFRESH: AvailableNow
    create.append(f"CREATE STREAMING TABLE {SINK} OUTPUT MODE {case.mode.upper()}{trigger} AS\n"
                  f"{case.sluice_query(dirs, kafka)};")
    create.append(_mark("created"))
    code, rows, err = _sql(warehouse, create, timeout)
    if "create" not in rows:
        raise RuntimeError(f"{case.name}: creating the inputs failed on Sluice: {err}")
    if "created" not in rows:
        return [_error(code, err)]
    obs, pending, confs, file_count, last_batch = [], [], {}, {}, -1
    for step in case.steps:
        kind = step[0]
        if kind == "produce":
            kafka_peer.produce(topics[step[1]], step[2])
        elif kind == "partitions":
            kafka_peer.add_partitions(topics[step[1]], step[2])
        elif kind == "crash":
            last_batch = crash_before_commit(os.path.join(warehouse, "_checkpoints", SINK)) - 1
        elif kind == "append":
            src = case.sources[step[1]]
            if src.format == "delta":
                pending.append(f"INSERT INTO {src.name} VALUES "
                               f"{case_model.values_sql(src.cols, step[2])};")
            else:
                file_count[src.name] = file_count.get(src.name, 0) + 1
                files.write(dirs[src.name], file_count[src.name], src, step[2])
        elif kind == "sql":
            pending.append(step[2].format(t=step[1]) + ";")
        elif kind == "conf":
            confs[step[1]] = f"SET {case_model.CONFS[step[1]][1]} = '{step[2]}';"
        elif kind == "run":
            o = _run(warehouse, case, list(confs.values()) + pending, last_batch, timeout)
            pending = []
            obs.append(o)
            if "batches" not in o:
                break
            if o["batches"]:
                last_batch = o["batches"][-1]["id"]
    return obs


def crash_before_commit(checkpoint):
    """Deletes the last commits/N of the checkpoint; returns N."""
    commits = os.path.join(checkpoint, "commits")
    ids = [int(n) for n in os.listdir(commits) if n.isdigit()] if os.path.isdir(commits) else []
    if not ids:
        raise RuntimeError(f"crash step: {commits} holds no commit")
    os.remove(os.path.join(commits, str(max(ids))))
    return max(ids)


def _select_json(inner):
    return f"SELECT main.to_json(_q) AS j, main.typeof(_q) AS t FROM ({inner}) AS _q;"


def _run(warehouse, case, inputs, last_batch, timeout):
    script = inputs + [_mark("refresh"), f"REFRESH STREAMING TABLE {SINK};", _mark("sink")]
    if case.mode == "update":
        script.append(_select_json(
            f"SELECT * EXCLUDE (_change_type, _commit_version, _commit_timestamp), "
            f"_commit_version AS __version FROM table_changes('{SINK}', 0) "
            f"WHERE _change_type IN ('insert', 'update_postimage')"))
    else:
        script.append(_select_json(f"SELECT * FROM {SINK}"))
    script += [_mark("cols"), f"DESCRIBE {SINK};", _mark("progress"),
               f"SELECT progress FROM streaming_progress('{SINK}') WHERE batch_id > {last_batch} "
               f"ORDER BY batch_id;", _mark("end")]
    code, rows, err = _sql(warehouse, script, timeout)
    if "refresh" not in rows:
        raise RuntimeError(f"{case.name}: applying the inputs failed on Sluice: {err}")
    if "sink" not in rows:
        return _error(code, err)
    if "end" not in rows:
        return {"crash": f"reading the sink or the progress failed (exit {code}): {err}"}
    out = {"batches": [observations.batch_of(json.loads(r["progress"]))
                       for r in rows["progress"]]}
    sink_rows = [(values.sluice_row(r["j"], r["t"]), json.loads(r["j"])) for r in rows["sink"]]
    if case.mode == "update":
        by_version = {}
        for canon, obj in sink_rows:
            by_version.setdefault(canon[-1][1], []).append(canon[:-1])
        out["emitted"] = [by_version[v] for v in sorted(by_version)]
    else:
        out["rows"] = [canon for canon, _ in sink_rows]
    out["cols"] = []
    for r in rows["cols"]:
        name = r.get("col_name") or ""
        if not name or name.startswith("#"):
            break  # the partitioning section
        out["cols"].append(name.lower())
    return out
