#!/usr/bin/env bash
# The README's test command: every test of the workspace, with a throwaway PostgreSQL server
# on localhost for the PostgreSQL storage tests (KTUNE_PG_URL) and Chromium for the report's
# browser tests (KTUNE_CHROMIUM), PoCL for the OpenCL runner's tests on the CPU,
# then the Python package:
# built as a wheel with maturin, installed into a fresh virtualenv, tested with pytest. PostgreSQL comes from the
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

# A throwaway CA, a server certificate for `localhost` and a client certificate for the role
# `ktune_cert` signed by it, and a second CA that signed nothing, for the TLS tests (the
# PostgreSQL storage's sslmode, sslrootcert, sslcert, sslkey).
tls_files() {
    local dir=$1
    if ! command -v openssl >/dev/null 2>&1; then
        export KTUNE_PG_TLS_SKIP="no openssl command to make the test certificates"
        return 1
    fi
    mkdir -p "$dir" && (
        cd "$dir"
        key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
        ca() { key "$1.key" && openssl req -x509 -new -key "$1.key" -days 3 -subj "/CN=$2" -out "$1.pem"; }
        signed() { # name, CN, extensions
            key "$1.key" && openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr" &&
                printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n%s\n' "$3" >"$1.ext" &&
                openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 3 \
                    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
        }
        ca ca "ktune test CA" && ca other-ca "ktune other CA" &&
            signed server localhost "subjectAltName=DNS:localhost
extendedKeyUsage=serverAuth" &&
            signed client ktune_cert "extendedKeyUsage=clientAuth" &&
            chmod 600 ./*.key && chmod 644 ./*.pem
    ) >"$dir.log" 2>&1 && return 0
    export KTUNE_PG_TLS_SKIP="openssl could not make the test certificates (see $dir.log)"
    return 1
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
    local ssl=""
    if tls_files "$pg_dir/tls"; then
        [ ${#as[@]} -gt 0 ] && chown postgres "$pg_dir/tls/server.key"
        ssl="-c ssl=on -c ssl_cert_file=$pg_dir/tls/server.pem -c ssl_key_file=$pg_dir/tls/server.key -c ssl_ca_file=$pg_dir/tls/ca.pem"
        # The TLS tests' role logs in with its client certificate only.
        { printf 'hostssl all ktune_cert 127.0.0.1/32 cert\nhost all ktune_cert 127.0.0.1/32 reject\n'
          cat "$pg_dir/data/pg_hba.conf"; } >"$pg_dir/hba" && cat "$pg_dir/hba" >"$pg_dir/data/pg_hba.conf"
        export KTUNE_PG_TLS="$pg_dir/tls"
    fi
    if ! "${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
        -o "-p $port -k $pg_dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off $ssl" start >/dev/null; then
        export KTUNE_PG_SKIP="the PostgreSQL server did not start (see $pg_dir/server.log)"
        return
    fi
    trap '"${as[@]}" "$bin/pg_ctl" -D "$pg_dir/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
    export KTUNE_PG_URL="postgresql://postgres@127.0.0.1:$port/postgres"
    echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $KTUNE_PG_URL (data in $pg_dir)"
}

# Chromium (Debian's package) for the report's tests in a real headless browser
# (KTUNE_CHROMIUM); where it cannot be installed they print SKIPPED with the reason.
find_chromium() {
    local c
    for c in "${KTUNE_CHROMIUM:-}" chromium chromium-browser google-chrome; do
        [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return; }
    done
}
if [ -z "$(find_chromium)" ] && command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo -n"
    echo "== installing Chromium for the report's browser tests"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; } ||
        echo "note: could not install Chromium with apt-get" >&2
fi
if [ -n "$(find_chromium)" ]; then
    export KTUNE_CHROMIUM=$(find_chromium)
else
    echo "note: the report's browser tests will be SKIPPED: no Chromium" >&2
fi

# OpenCL on the CPU (PoCL and the ICD loader, Debian's packages) for the OpenCL runner's
# tests on real kernel launches; where they cannot be installed those tests print SKIPPED.
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo -n"
    echo "== installing PoCL (OpenCL on the CPU) for the OpenCL runner's tests"
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq pocl-opencl-icd ocl-icd-libopencl1 >/dev/null; } ||
        echo "note: could not install PoCL with apt-get" >&2
fi
ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 ||
    echo "note: the OpenCL runner's tests will be SKIPPED: no OpenCL driver (ICD) installed" >&2

if [ -z "${KTUNE_PG_URL:-}" ]; then
    start_postgres
fi
[ -n "${KTUNE_PG_SKIP:-}" ] && echo "note: PostgreSQL storage tests will be SKIPPED: $KTUNE_PG_SKIP" >&2
[ -z "${KTUNE_PG_SKIP:-}" ] && [ -n "${KTUNE_PG_TLS_SKIP:-}" ] && echo "note: PostgreSQL TLS tests will be SKIPPED: $KTUNE_PG_TLS_SKIP" >&2

echo "== cargo test --workspace"
cargo test --workspace

echo "== Python: the ktune wheel in a fresh virtualenv, and pytest"
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "error: the Python tests need a Python 3.9+ interpreter ($python not found)" >&2
    exit 1
fi
venv=target/py-test-venv
rm -rf "$venv"
if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
    # Debian and Ubuntu ship venv separately.
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo -n"
        $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    fi
    rm -rf "$venv"
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python" -m pip install -q "maturin>=1.16,<2" "pytest>=7" numpy
rm -rf target/wheels-test
# A debug wheel: it reuses the workspace's debug build above (a release wheel is what
# `pip install ./crates/ktune-py` builds for users).
"$venv/bin/maturin" build -q --manifest-path crates/ktune-py/Cargo.toml -o target/wheels-test
"$venv/bin/python" -m pip install -q target/wheels-test/ktune-*.whl
(cd crates/ktune-py && "../../$venv/bin/python" -m pytest -q tests)
