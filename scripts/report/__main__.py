"""The results pipeline, ``python -m scripts.report SUBCOMMAND``: the paper's tables and the
depth figure from a sweep's output folder (``tables``, ``depth``), its complete cells into the
committed records (``collect``), the records into the report in ``docs/results.md`` and its
figure (``render``); ``check`` writes nothing. How each works: ``docs/reproducing.md``."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from train.interrupts import startup

with startup():
    from data.files import write_atomic
    from scripts import cli
    from scripts.report import cells, figures, records, reproduction
    from scripts.report.cells import EXPECTED_RUNS
    from scripts.report.tables import make_tables
    from scripts.sweep import EXTRA_TABLES, TABLES, SweepError, check_extra, resolve
    from train.errors import ArgumentParser, UsageError, run_tool


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog="python -m scripts.report", description=__doc__.split("\n\n")[0],
                           epilog="Exit codes: 0 done, 1 a record refused, a difference found "
                                  "or a write failed, 2 bad input.")
    sub = p.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    t = sub.add_parser("tables", help="the paper's tables beside the published numbers",
                       epilog="Arguments after -- are those the sweep passed to every cell "
                              "(e.g. -- --epochs 2 for a smoke run's results); results run "
                              "with other arguments are shown as stale.")
    t.add_argument("--results", default=None,
                   help="the sweep's --out_root (default: out/reproduce in the project)")
    t.add_argument("--out", default=None,
                   help="folder for the .md and .csv files (default: tables in the project)")
    t.add_argument("--tables", default=",".join(TABLES),
                   help=f"comma-separated table names ({', '.join(TABLES)}; also "
                        f"{', '.join(EXTRA_TABLES)}) or table YAML files")
    t.add_argument("--published", default=str(cells.PUBLISHED), help="published numbers (YAML)")
    t.add_argument("--sbm_metric", default="acc", choices=("acc", "acc_release"),
                   help="SBM accuracy: balanced (acc) or the release's definition")
    d = sub.add_parser("depth", help="the depth figure: AutoGCN and GCN against the layers L")
    d.add_argument("--results", default=None,
                   help="the depth results folder (or the sweep's --out_root; default: "
                        "out/reproduce/depth in the project)")
    d.add_argument("--out", default="depth.png", help="image to write, ending in "
                   + ", ".join(cli.PLOT_SUFFIXES) + " (default depth.png)")
    c = sub.add_parser("collect", help="write the records of a sweep's complete cells")
    c.add_argument("--results", required=True, help="the sweep's --out_root")
    c.add_argument("--tables", default="node,heterophily,graph",
                   help=f"comma-separated table names ({', '.join(TABLES)})")
    c.add_argument("--commit", help="the commit the runs used (default: that of the project's "
                                    "git checkout)")
    c.add_argument("--machine", help="what the runs ran on, 'CPU: MODEL, N hardware threads' "
                                     "or 'GPU: MODEL' (default: this machine's CPU or GPU)")
    c.add_argument("--replace", action="store_true",
                   help="let a result with fewer seeds replace a record")
    r = sub.add_parser("render", help="rewrite the report in --doc and its figure")
    r.add_argument("--check", action="store_true", help="write nothing; exit 1 on a difference")
    k = sub.add_parser("check", help="check every record, the report and its figure")
    for s, what in ((t, "runs expected per cell"), (d, "runs expected per cell"),
                    (c, "seeds of the paper's protocol")):
        s.add_argument("--runs", type=cli.int_in(1, cli.MAX_RUNS), default=EXPECTED_RUNS,
                       help=f"{what}, 1 to {cli.MAX_RUNS} (default {EXPECTED_RUNS})")
    for s in (c, r, k):
        s.add_argument("--records", "--into", dest="records", default=str(records.RESULTS),
                       help="the records' folder (default: results in the project)")
    for s in (r, k):
        s.add_argument("--doc", default=str(reproduction.DOC),
                       help="the document holding the section")
        s.add_argument("--figure", default=str(reproduction.FIGURE), help="the figure (PNG)")
    return p


def tables(args, extra: list[str]) -> int:
    names = cells.load_tables([t.strip() for t in args.tables.split(",") if t.strip()])
    try:  # what the sweep refuses after -- (--runs...) would be ignored here: refused alike
        check_extra(extra, [c for t in names for c in t.cells])
    except SweepError as err:
        raise UsageError(str(err)) from None
    # paths given are relative to the user's folder; left out, the project's own folders
    results = cells.folder_option("--results", args.results, "out/reproduce",
                                  "the sweep's --out_root")
    cells.load_published(args.published, strict=True)
    out = resolve(args.out, "tables")
    cli.check_output(out if args.out is None else args.out, "folder", option="--out")
    print(make_tables(results, out, names, args.runs, args.published, args.sbm_metric, extra))
    return 0


def collect(args) -> int:
    cells.folder_option("--results", args.results, None, "the sweep's --out_root", must_exist=True)
    names = [t.strip() for t in args.tables.split(",") if t.strip()]
    unknown = [t for t in names if t not in TABLES]
    if unknown or not names:
        raise UsageError(f"--tables: {', '.join(unknown) or 'none given'}; the paper's tables "
                         f"are {', '.join(TABLES)}")
    return 1 if records.collect_records(args.results, names, resolve(args.records), args.runs,
                                        args.commit, args.machine, args.replace) else 0


def render(args, check: bool) -> int:
    """Rewrite (or, ``check``, compare) the report's section and figure."""
    doc, figure = resolve(args.doc), resolve(args.figure)
    try:
        text = doc.read_text()
    except OSError as err:
        raise UsageError(f"--doc {args.doc}: cannot read it ({err.strerror or err})") from None
    section, data = reproduction.build(resolve(args.records))
    new = reproduction.replace_section(text, section, doc)
    if check:
        stale = [p for p, same in ((doc, new == text),
                                   (figure, figures.figure_text(figure) == data)) if not same]
        for path in stale:
            print(f"error: {path} differs from what the records give; run python -m "
                  "scripts.report render", file=sys.stderr)
        return 1 if stale else 0
    write_atomic(doc, new)
    figures.draw_figure(data, figure)
    print(section, end="")
    return 0


def _main(argv: Sequence[str] | None) -> int:
    argv, extra = cli.split_extra(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if extra and args.command != "tables":
        raise UsageError(f"arguments after -- are for the tables subcommand, not {args.command}")
    if args.command == "tables":
        return tables(args, extra)
    if args.command == "depth":
        print(f"wrote {figures.plot_depth(args.results, args.out, args.runs)}")
        return 0
    if args.command == "collect":
        return collect(args)
    cells.folder_option("--records", args.records, None, "the records (collect writes them)",
                        must_exist=True)
    try:
        if args.command == "check":
            found = records.read_records(resolve(args.records))
            print(f"{sum(map(len, found.values()))} records, each consistent with its runs "
                  "and its config")
        return render(args, check=args.command == "check" or args.check)
    except records.RecordError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (0, 1 failure, 2 bad input, 130/143)."""
    return run_tool(_main, argv, interrupted="every file is written whole or not at all")


if __name__ == "__main__":
    sys.exit(main())
