# The analytics workload's data generator, run by tierbench with the
# virtualenv's python: DuckDB's tpch extension (dbgen, TPC-H's own
# generator compiled into the extension). It reads one JSON request on
# standard input:
#   {"mode": "check"}                       loads the extension
#   {"mode": "generate", "scale": "1", "dir": D, "tables": [...]}
#       writes D/<table>.tbl ('|'-separated CSV, the columns in the order
#       given) and D/rows.json, each table's row count
#   {"mode": "expect", "scale": "1", "dir": D, "queries": [...]}
#       runs the queries on the same data and writes D/expected.json:
#       each query's row count and first row, as text
# and prints the generator's version on standard output. Errors go to
# standard error with a non-zero exit.
import importlib.metadata
import importlib.util
import json
import os
import sys

import duckdb


def connect(path):
    spec = importlib.util.find_spec("duckdb_ext")
    if spec is None:
        sys.exit("the package duckdb-ext-tpch is not installed beside duckdb")
    ext = os.path.join(list(spec.submodule_search_locations)[0], "extensions")
    con = duckdb.connect(path, config={
        "extension_directory": ext,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    })
    con.execute("SET enable_progress_bar = false")
    con.execute("LOAD tpch")
    return con


def dbgen(directory, scale):
    # A database file rather than memory, so a large scale can spill.
    path = os.path.join(directory, "dbgen.duckdb")
    con = connect(path)
    con.execute("CALL dbgen(sf = %s)" % float(scale))
    return con, path


def generate(req):
    directory = req["dir"]
    con, path = dbgen(directory, req["scale"])
    rows = {}
    for t in req["tables"]:
        name, out = t["name"], os.path.join(directory, t["name"] + ".tbl")
        con.execute("COPY (SELECT %s FROM %s) TO '%s' (FORMAT csv, DELIMITER '|', HEADER false)"
                    % (t["columns"], name, out.replace("'", "''")))
        rows[name] = con.execute("SELECT COUNT(*) FROM " + name).fetchone()[0]
    con.close()
    os.remove(path)
    with open(os.path.join(directory, "rows.json"), "w") as f:
        json.dump(rows, f)


def expect(req):
    directory = req["dir"]
    con, path = dbgen(directory, req["scale"])
    answers = {}
    for q in req["queries"]:
        result = con.execute(q["sql"]).fetchall()
        first = [None if v is None else str(v) for v in result[0]] if result else []
        answers[q["name"]] = {"rows": len(result), "first": first}
    con.close()
    os.remove(path)
    with open(os.path.join(directory, "expected.json"), "w") as f:
        json.dump(answers, f)


def main():
    req = json.load(sys.stdin)
    mode = req["mode"]
    if mode == "check":
        connect(":memory:").close()
    elif mode == "generate":
        generate(req)
    elif mode == "expect":
        expect(req)
    else:
        sys.exit("unknown mode %r" % mode)
    print("duckdb %s, tpch extension %s" % (duckdb.__version__, importlib.metadata.version("duckdb-ext-tpch")))


main()
