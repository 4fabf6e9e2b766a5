#!/usr/bin/env bash
# The product against the independent floor, in one command (from the project root):
#   npm run bench:independent                         # 100,000 objects, seed 42 (about 12 minutes here)
#   PERF_N=1000000 npm run bench:independent          # 1M (about 35 minutes)
# Generates the seeded data set (kept in bench/.data/independent/<seed>-<N> for the next run), starts
# an embedded PostgreSQL, loads the floor (COPY into schema floor of database floor), starts the
# product (`npm start`, built) on database product of the same server, ingests the data set through
# the product's API, compares through the gateway and on the objects app itself (A B A B), and prints
# each target of bench/independent/targets.mjs with its ratio, then "N passed, N failed". The floor's design is in
# bench/independent/README.md.
# Env: PERF_N, PERF_SEED (42), DURATION (8 s a slice), PERF_LOG_DIR (where the logs go; default a
# temporary folder, removed unless KEEP=1). Only the processes this script starts are stopped.
set -u
here=$(cd "$(dirname "$0")" && pwd); checkout=$(cd "$here/../.." && pwd)
N=${PERF_N:-100000}; SEED=${PERF_SEED:-42}
work=$(mktemp -d -t perf-compare.XXXX); chmod 777 "$work"
log=${PERF_LOG_DIR:-$work/log}; mkdir -p "$log"
DATA="$checkout/bench/.data/independent/$SEED-$N"; PG=postgres://postgres:password@localhost:54329
export PERF_PG_DIR="$work/pg"
cleanup() {
  [ -n "${ppid:-}" ] && kill -TERM -- -"$ppid" 2>/dev/null; [ -n "${fpid:-}" ] && kill "$fpid" 2>/dev/null
  sleep 3; node "$here/floor/pg.mjs" stop >/dev/null 2>&1
  [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
if [ -f "$DATA/manifest.json" ]; then echo "data set: $DATA"; else
  echo "generating $N objects (seed $SEED)"; node "$here/gen.mjs" --n "$N" --seed "$SEED" --out "$DATA" >"$log/gen" 2>&1 || { tail -3 "$log/gen"; rm -rf "$DATA"; exit 1; }
fi
node "$here/floor/pg.mjs" start >"$log/pg" 2>&1 || { tail -3 "$log/pg"; exit 1; }
sleep 2
psql -q "$PG/floor" -c "drop database if exists product" -c "create database product" >/dev/null 2>&1
echo "loading the floor"; node "$here/floor/load.mjs" --data "$DATA" >"$log/load" 2>&1 || { tail -3 "$log/load"; exit 1; }
FLOOR_MEMBER_LIMIT=200000 FLOOR_ONTOLOGY="$DATA/ontology.json" setsid node "$here/floor/server.mjs" >"$log/floor" 2>&1 & fpid=$!
cd "$checkout" || exit 1
DATABASE_URL="$PG/product" DEMO_DATA=false LOG_LEVEL=warn OBJECT_SET_MEMBER_LIMIT=200000 GATEWAY_PORT=28880 OBJECTS_PORT=23801 OBJECT_SETS_PORT=23802 \
  DATA_DIR="$work/data" setsid node scripts/start.mjs >"$log/product" 2>&1 & ppid=$!
for _ in $(seq 1 150); do curl -sf localhost:28880/health/ready >/dev/null && break; sleep 2; done
curl -sf localhost:28880/health/ready >/dev/null || { echo "product not ready"; tail -5 "$log/product"; exit 1; }
echo "ingesting through the product's API"; DATA="$DATA" TARGET=http://localhost:28880 node "$here/ingest.mjs" >"$log/ingest" 2>&1 || { tail -3 "$log/ingest"; exit 1; }
# The floor's COPY load ends with VACUUM (ANALYZE); the product's data gets the same, once no autovacuum
# worker holds a snapshot (a VACUUM beside one cannot mark the pages all-visible, and every index-only
# scan then visits the heap: the broad walk measured 2-3x slower on 2026-11-25 for that alone).
for _ in $(seq 1 60); do
  [ "$(psql -Atq "$PG/product" -c "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'")" = 0 ] && break; sleep 2
done
psql -q "$PG/product" -c "VACUUM (ANALYZE)" >"$log/vacuum" 2>&1 || { echo "VACUUM failed"; tail -3 "$log/vacuum"; exit 1; }
echo "product: $(psql -Atq "$PG/product" -c "select round(100.0 * sum(relallvisible) / greatest(sum(relpages), 1)) from pg_class where relnamespace = 'objects'::regnamespace and relkind = 'r'")% of its pages all-visible after VACUUM"
# At 1M a members read (~100,000 members) takes seconds: fewer at once, over longer slices, so both sides complete some.
if [ "$N" -ge 1000000 ]; then export MEMBERS_CONNECTIONS=${MEMBERS_CONNECTIONS:-4} MEMBERS_DURATION=${MEMBERS_DURATION:-40}; fi
echo "comparing through the gateway"; DATA="$DATA" PRODUCT=http://localhost:28880 FLOOR=http://localhost:8090 DURATION=${DURATION:-8} node "$here/compare.mjs" >"$log/gw" 2>&1
echo "comparing on the objects app"; DATA="$DATA" PRODUCT=http://localhost:23801 FLOOR=http://localhost:8090 DURATION=${DURATION:-8} SCENARIOS=get,bulk1000,searchSelective,readAtTimestamp node "$here/compare.mjs" >"$log/direct" 2>&1
node "$here/targets.mjs" "$log/gw" "$log/direct" "$log/ingest"
