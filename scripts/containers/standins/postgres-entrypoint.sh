#!/bin/sh
# The stand-in postgres image's entrypoint, for what docker-compose.yml uses of the official
# one: on an empty data directory, a cluster whose superuser is POSTGRES_USER (password
# POSTGRES_PASSWORD, required for connections over the network) and a database POSTGRES_DB.
set -eu
# `postgres --version` and the like only print something: no cluster needed for them.
asks_only=false
for arg in "$@"; do
  case "$arg" in -V | --version | -'?' | --help | --describe-config | -C) asks_only=true ;; esac
done
if [ "${1:-}" = postgres ] && ! $asks_only && [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  # What docker/postgres/allow-replication.sh does on the official image (the replica profile).
  echo 'host replication all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  # Created on a private socket only, so that pg_isready does not report ready before it exists.
  init_socket=$(mktemp -d)
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -c unix_socket_directories=$init_socket" start
  if [ "$db" != postgres ]; then
    echo 'CREATE DATABASE :"db"' | psql -h "$init_socket" -U "$user" -d postgres -v ON_ERROR_STOP=1 -v db="$db"
  fi
  pg_ctl -D "$PGDATA" -w -m fast stop
  rm -rf "$init_socket"
fi
exec "$@"
