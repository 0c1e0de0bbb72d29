#!/usr/bin/env bash
# A throwaway PostgreSQL server for the class store's tests (tests/test_classroom.py runs its
# store tests on SQLite and on the server at $MTL_TEST_POSTGRES_URL).
#
# Sourced (.ci/run does this):
#     source .ci/postgres.sh
#     mtl_postgres_start            # exports MTL_TEST_POSTGRES_URL=postgresql+psycopg://...
#     trap mtl_postgres_stop EXIT
# Run, to start a server, run one command with the variable set, and stop it:
#     bash .ci/postgres.sh .venv/bin/python -m pytest tests/test_classroom.py -q
#
# Debian's postgresql package is installed when missing (as tests/run.sh installs Chromium:
# with sudo when not root, quietly). A new cluster is made in a temporary folder (initdb, as
# the postgres user when root: the server refuses to run as root), listening on 127.0.0.1 at a
# free port with its socket in that folder, trust authentication, fsync off (nothing in it
# outlives the run); mtl_postgres_stop stops it and removes the folder.

mtl_postgres_bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
        echo "$dir"
    fi
}

mtl_postgres_as() {   # run a server command as the postgres user when we are root
    if [ "$(id -u)" = "0" ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

mtl_postgres_start() {
    local bindir port
    bindir=$(mtl_postgres_bindir)
    if [ -z "$bindir" ]; then
        local sudo=""
        if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
        bindir=$(mtl_postgres_bindir)
        if [ -z "$bindir" ]; then
            echo "postgres.sh: no initdb / pg_ctl under /usr/lib/postgresql after the install" >&2
            return 1
        fi
    fi
    MTL_POSTGRES_BINDIR="$bindir"
    # in /tmp: the postgres user must reach it, and a socket path must be short
    MTL_POSTGRES_DIR=$(mktemp -d /tmp/mtl-postgres.XXXXXX)
    if [ "$(id -u)" = "0" ]; then chown postgres "$MTL_POSTGRES_DIR"; fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mtl_postgres_as "$bindir/initdb" -D "$MTL_POSTGRES_DIR/data" -U mtl --auth=trust -E UTF8 \
        --locale=C.UTF-8 --no-sync >"$MTL_POSTGRES_DIR/initdb.log" 2>&1 \
        || { cat "$MTL_POSTGRES_DIR/initdb.log" >&2; return 1; }
    mtl_postgres_as "$bindir/pg_ctl" -D "$MTL_POSTGRES_DIR/data" -l "$MTL_POSTGRES_DIR/server.log" \
        -w -t 60 -o "-p $port -k $MTL_POSTGRES_DIR -c listen_addresses=127.0.0.1 -c fsync=off" \
        start >/dev/null || { cat "$MTL_POSTGRES_DIR/server.log" >&2; return 1; }
    mtl_postgres_as "$bindir/createdb" -h 127.0.0.1 -p "$port" -U mtl mtl_test
    export MTL_TEST_POSTGRES_URL="postgresql+psycopg://mtl@127.0.0.1:$port/mtl_test"
    echo "== PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (MTL_TEST_POSTGRES_URL)"
}

mtl_postgres_stop() {
    if [ -n "${MTL_POSTGRES_DIR:-}" ] && [ -d "$MTL_POSTGRES_DIR" ]; then
        mtl_postgres_as "$MTL_POSTGRES_BINDIR/pg_ctl" -D "$MTL_POSTGRES_DIR/data" -m fast -w \
            stop >/dev/null 2>&1 || true
        rm -rf "$MTL_POSTGRES_DIR"
    fi
    MTL_POSTGRES_DIR=""
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then   # run, not sourced
    set -euo pipefail
    mtl_postgres_start
    trap mtl_postgres_stop EXIT
    if [ "$#" -gt 0 ]; then
        "$@"
    fi
fi
