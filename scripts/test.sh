#!/usr/bin/env bash
# The README's test command: every test of the workspace, with a throwaway PostgreSQL server
# on localhost for the PostgreSQL storage tests (KTUNE_PG_URL). PostgreSQL comes from the
# system's packages (installed with apt-get where missing and possible); where no server can
# be started, those tests print SKIPPED with the reason and everything else still runs.
# A KTUNE_PG_URL already set (a server of your own) is used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_bin() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return; }
    done
    command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}

start_postgres() {
    # Globals: the EXIT trap stops the server with them.
    bin=$(pg_bin || true)
    if [ -z "$bin" ] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing PostgreSQL from the system's packages"
        local sudo=""
        [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo -n"
        if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null; }; then
            echo "note: could not install PostgreSQL with apt-get" >&2
        fi
        bin=$(pg_bin || true)
    fi
    if [ -z "$bin" ]; then
        export KTUNE_PG_SKIP="no PostgreSQL server binaries (initdb) found and none could be installed"
        return
    fi
    # PostgreSQL refuses to run as root: run it as the `postgres` user the package creates.
    as=()
    if [ "$(id -u)" -eq 0 ]; then
        if ! id postgres >/dev/null 2>&1; then
            export KTUNE_PG_SKIP="running as root and there is no \`postgres\` user to run the server as"
            return
        fi
        as=(runuser -u postgres --)
    fi
    pg_dir=$(mktemp -d /tmp/ktune-pg.XXXXXX)
    chmod 755 "$pg_dir"
    [ ${#as[@]} -gt 0 ] && chown postgres "$pg_dir"
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 55432)
    if ! "${as[@]}" "$bin/initdb" -D "$pg_dir/data" -U postgres --auth=trust -E UTF8 >"$pg_dir/initdb.log" 2>&1; then
        export KTUNE_PG_SKIP="initdb failed (see $pg_dir/initdb.log)"
        return
    fi
    if ! "${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
        -o "-p $port -k $pg_dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off" start >/dev/null; then
        export KTUNE_PG_SKIP="the PostgreSQL server did not start (see $pg_dir/server.log)"
        return
    fi
    trap '"${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
    export KTUNE_PG_URL="postgresql://postgres@127.0.0.1:$port/postgres"
    echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $KTUNE_PG_URL (data in $pg_dir)"
}

if [ -z "${KTUNE_PG_URL:-}" ]; then
    start_postgres
fi
[ -n "${KTUNE_PG_SKIP:-}" ] && echo "note: PostgreSQL storage tests will be SKIPPED: $KTUNE_PG_SKIP" >&2

echo "== cargo test --workspace"
cargo test --workspace
