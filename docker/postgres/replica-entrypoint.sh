#!/bin/sh
# The streaming replica of `docker compose --profile replica`: on its first start, a base backup
# of the postgres service with pg_basebackup (-R writes primary_conninfo and standby.signal, -C -S
# makes a physical replication slot, so the primary keeps the WAL it has not streamed yet); then
# a hot standby that the apps read from (DATABASE_REPLICA_URLS).
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -h postgres -U ontology -d ontology -q; do sleep 1; done
  # A slot left by a replica whose volume was removed would make -C fail: drop it first.
  psql -h postgres -U ontology -d ontology -v ON_ERROR_STOP=1 -qc \
    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'compose_replica' AND NOT active"
  pg_basebackup -h postgres -U ontology -D "$PGDATA" -R -X stream -C -S compose_replica --checkpoint=fast
  chmod 700 "$PGDATA"
fi
exec postgres -D "$PGDATA" -c hot_standby=on -c listen_addresses='*'
