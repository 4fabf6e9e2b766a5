#!/bin/sh
# Runs once, when the postgres service initialises its data directory (the official image runs
# /docker-entrypoint-initdb.d/*.sh): lets a standby stream WAL over the network with the same
# password as the apps, which `docker compose --profile replica` uses (postgres-replica).
set -eu
echo 'host replication all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
