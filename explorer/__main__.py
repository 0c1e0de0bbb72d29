"""Command line: ``python -m explorer serve``, ``generate`` and ``reproduce``."""

from __future__ import annotations

import argparse
import sys


def _generate(args) -> int:
    from explorer.data.catalog import CATALOG, make_dataset

    if args.list:
        from explorer.parameters import expectation, public_parameters

        for name, entry in CATALOG.items():
            print(f"{name}: {entry.label}")
            for pname in public_parameters(entry.params):
                parameter = entry.params.param[pname]
                print(f"    {pname}: {expectation(parameter)}, default {parameter.default!r}")
        return 0
    if not args.name or not args.out:
        print("error: generate needs NAME and --out FILE.csv (or --list)", file=sys.stderr)
        return 2
    params = {}
    for item in args.param:
        if "=" not in item:
            print(f"error: --param must be key=value; got {item!r}", file=sys.stderr)
            return 2
        key, value = item.split("=", 1)
        params[key.strip()] = value.strip()
    try:
        data = make_dataset(args.name, params, random_state=args.seed)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data.to_csv(args.out)
    print(f"wrote {data.n_samples} rows, {data.n_tasks} tasks to {args.out}")
    return 0


def _reproduce(args) -> int:
    from explorer.compare.reproduce import REPRODUCTIONS, reproduce

    if args.list:
        width = max(len(name) for name in REPRODUCTIONS)
        for name, entry in REPRODUCTIONS.items():
            print(f"{name:<{width}}  {entry.paper}: {entry.description}")
        return 0
    if not args.name:
        print("error: reproduce needs NAME (or --list)", file=sys.stderr)
        return 2
    if args.name not in REPRODUCTIONS:
        print(f"error: unknown reproduction {args.name!r}; valid names: "
              f"{', '.join(REPRODUCTIONS)}", file=sys.stderr)
        return 2
    try:
        result = reproduce(args.name, trials=args.trials, fast=args.fast,
                           random_state=args.seed)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.text)
    if args.out:
        result.to_csv(args.out)
        print(f"wrote {len(result.frame)} rows to {args.out}")
    return 0


#: The scenario ``serve --class`` opens a class on when none is named.
DEFAULT_CLASS_SCENARIO = "unrelated_among_related"


def _link_host(address: str) -> str:
    """The host a student's browser uses for a server listening on ``address``: the
    machine's address on the network when it listens on every interface."""
    if address not in ("", "0.0.0.0", "::"):
        return f"[{address}]" if ":" in address else address
    import socket

    try:   # the interface that routes outwards (a UDP connect sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            return probe.getsockname()[0]
    except OSError:
        return socket.gethostname()


def _open_class(args) -> int:
    """``serve --class [SCENARIO]``: open a class in the store and print the students' and
    the teacher's links (the key goes to this terminal only, never to a log)."""
    import time

    from explorer.classroom import ClassStore
    from explorer.data.catalog import load_preset, make_dataset

    scenario = args.class_scenario
    try:
        preset = load_preset(scenario)
        data = make_dataset(preset["dataset"], preset["params"],
                            random_state=preset["data_seed"])
        if data.truth.get("task_relation") is None:
            raise ValueError(f"scenario {scenario!r} has no true task relation to guess "
                             "(real data); choose a scenario of generated data.")
        with ClassStore(args.class_db, ttl_hours=args.class_ttl_hours) as store:
            code, key = store.open_class(scenario, n_tasks=data.n_tasks)
            state = store.class_state(code)
    except ValueError as exc:
        print(f"error: --class: {exc}", file=sys.stderr)
        return 2
    base = f"http://{_link_host(args.address)}:{args.port}/explorer?class={code}"
    until = time.strftime("%Y-%m-%d %H:%M", time.localtime(state.expires))
    print(f"MTL Explorer: class {code} on {preset['title']!r} ({scenario}, {data.n_tasks} "
          f"tasks), open until {until}\n"
          f"  students' link: {base}\n"
          f"  teacher's link: {base}&key={key}\n"
          "  (the teacher's link reveals and ends the class: keep it to yourself)", flush=True)
    return 0


def _serve(args) -> int:
    import os

    from explorer.classroom import CLASS_DB_ENV, CLASS_TTL_ENV

    if not 0 < args.class_ttl_hours < float("inf"):
        print(f"error: --class-ttl-hours must be a positive number of hours; got "
              f"{args.class_ttl_hours}", file=sys.stderr)
        return 2
    # the app's processes (--num-procs forks them) find the class store here
    if args.class_db:
        os.environ[CLASS_DB_ENV] = args.class_db
    os.environ[CLASS_TTL_ENV] = repr(args.class_ttl_hours)
    from explorer.app import serve
    from explorer.app.custom import ContractError, configured_models

    try:
        models = configured_models(args.model)
    except ContractError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.class_scenario is not None:
        status = _open_class(args)
        if status:
            return status
    _hide_keys_from_the_access_log()
    serve(port=args.port, address=args.address, show=args.show,
          num_procs=args.num_procs, allow_origins=tuple(args.allow_origin), models=models)
    return 0


def _hide_keys_from_the_access_log() -> None:
    """Tornado logs each request's address: a teacher's link would put the key in the log."""
    import logging

    from explorer.classroom import KeyRedactingFilter

    access = logging.getLogger("tornado.access")
    if not any(isinstance(f, KeyRedactingFilter) for f in access.filters):
        access.addFilter(KeyRedactingFilter())


def main(argv=None) -> int:
    """Entry point of ``mtl-explorer`` / ``python -m explorer``."""
    parser = argparse.ArgumentParser(prog="mtl-explorer", description="MTL Explorer")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="start the Panel app")
    s.add_argument("--port", type=int, default=5006)
    s.add_argument("--address", default="localhost",
                   help="address to listen on (default: localhost only; 0.0.0.0 for a network)")
    s.add_argument("--allow-origin", action="append", default=[], metavar="HOST:PORT",
                   help="a further websocket origin to accept, e.g. 192.168.1.10:5006 "
                        "(default: localhost only)")
    s.add_argument("--num-procs", type=int, default=1, metavar="N",
                   help="server processes (one per core for a class)")
    s.add_argument("--show", action="store_true")
    s.add_argument("--warm", action="store_true",
                   help="always on (as panel serve --warm): the kernels are compiled and the "
                        "pages warmed before the server listens, and it says so")
    s.add_argument("--model", action="append", default=[], metavar="PKG.MODULE:CLASS",
                   help="your estimator class, a page of its own (repeatable); the "
                        "mtl_explorer.models entry points are found without it")
    s.add_argument("--class", dest="class_scenario", nargs="?", const=DEFAULT_CLASS_SCENARIO,
                   metavar="SCENARIO",
                   help="open a class on SCENARIO (default: %(const)s) before serving and "
                        "print the students' link and the teacher's (with its secret key)")
    s.add_argument("--class-db", metavar="URL",
                   help="where classes and guesses are kept: a SQLite file's path or any "
                        "SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db (default: "
                        "classes.sqlite in the user's data directory)")
    s.add_argument("--class-ttl-hours", type=float, default=24.0, metavar="H",
                   help="a class and its guesses are deleted H hours after it opened "
                        "(default: 24)")
    g = sub.add_parser("generate", help="write a catalog dataset to CSV")
    g.add_argument("name", nargs="?")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out")
    g.add_argument("--list", action="store_true")
    r = sub.add_parser("reproduce", help="rerun an experiment of the papers beside its numbers")
    r.add_argument("name", nargs="?", help="a reproduction (see --list)")
    r.add_argument("--list", action="store_true", help="list the reproductions")
    r.add_argument("--trials", type=int, metavar="N",
                   help="repetitions (default: the paper's; 2 with --fast)")
    r.add_argument("--fast", action="store_true", help="small data and grids: a few seconds")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", metavar="FILE.csv", help="write the tidy results")
    args = parser.parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "reproduce":
        return _reproduce(args)
    return _generate(args)


if __name__ == "__main__":
    sys.exit(main())
