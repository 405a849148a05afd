# shellcheck shell=bash
# A throwaway PostgreSQL server for the ledger's PostgreSQL tests.
#
#   source .ci/postgres.sh     # installs PostgreSQL from Debian's packages if missing, starts a
#                              # cluster on 127.0.0.1 under /tmp as a non-root user, creates a
#                              # database and exports STACKCHECK_TEST_POSTGRES_DSN
#   stackcheck_postgres_stop   # stops it and removes its data directory (also done on EXIT
#                              # when the sourcing shell has no EXIT trap of its own)
#
# Safe to source from a `set -euo pipefail` script: every step checks itself and the script
# returns non-zero (never exits) when the server cannot be had. Running it with `bash` instead
# of `source` starts the server and prints the DSN; stop it with
# `pg_ctl -D "$STACKCHECK_TEST_POSTGRES_DATA" stop` as the user it prints.

stackcheck_postgres_start() {
  local bindir runas pgdata port db=stackcheck_test
  if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "postgres.sh: installing PostgreSQL from Debian's packages" >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || return 1
    else
      echo "postgres.sh: PostgreSQL is not installed and this user cannot apt-get install it" >&2
      return 1
    fi
  fi
  bindir=$(compgen -G "/usr/lib/postgresql/*/bin" | sort -V | tail -n 1)

  # PostgreSQL refuses to run as root: use the postgres user the package creates.
  runas=()
  if [ "$(id -u)" = 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
      useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres || return 1
    fi
    runas=(runuser -u postgres --)
  fi

  pgdata=$(mktemp -d /tmp/stackcheck-pg.XXXXXX) || return 1
  [ "$(id -u)" = 0 ] && chown postgres: "$pgdata"
  # a free loopback port, chosen by the kernel
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') || return 1

  "${runas[@]}" "$bindir/initdb" -D "$pgdata/data" -U postgres --auth=trust -E UTF8 --no-sync >"$pgdata/initdb.log" 2>&1 || {
    echo "postgres.sh: initdb failed:" >&2; tail -n 5 "$pgdata/initdb.log" >&2; return 1; }
  "${runas[@]}" "$bindir/pg_ctl" -D "$pgdata/data" -l "$pgdata/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $pgdata -c fsync=off -c max_connections=200" start >/dev/null || {
    echo "postgres.sh: the server did not start:" >&2; tail -n 5 "$pgdata/server.log" >&2; return 1; }
  "${runas[@]}" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db" || return 1

  export STACKCHECK_TEST_POSTGRES_DSN="postgresql://postgres@127.0.0.1:$port/$db"
  export STACKCHECK_TEST_POSTGRES_DATA="$pgdata/data"
  export STACKCHECK_TEST_POSTGRES_BIN="$bindir"
  echo "postgres.sh: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') at $STACKCHECK_TEST_POSTGRES_DSN (data $pgdata)" >&2
}

stackcheck_postgres_stop() {
  [ -n "${STACKCHECK_TEST_POSTGRES_DATA:-}" ] || return 0
  local runas=()
  [ "$(id -u)" = 0 ] && runas=(runuser -u postgres --)
  "${runas[@]}" "$STACKCHECK_TEST_POSTGRES_BIN/pg_ctl" -D "$STACKCHECK_TEST_POSTGRES_DATA" -m fast -w stop >/dev/null 2>&1
  rm -rf "$(dirname "$STACKCHECK_TEST_POSTGRES_DATA")"
  unset STACKCHECK_TEST_POSTGRES_DSN STACKCHECK_TEST_POSTGRES_DATA STACKCHECK_TEST_POSTGRES_BIN
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # executed, not sourced
  stackcheck_postgres_start || exit 1
  echo "STACKCHECK_TEST_POSTGRES_DSN=$STACKCHECK_TEST_POSTGRES_DSN"
else
  if stackcheck_postgres_start; then
    [ -n "$(trap -p EXIT)" ] || trap stackcheck_postgres_stop EXIT
  else
    false
  fi
fi
