# A stand-in for postgres:15: PostgreSQL 15 from Debian 12's packages, with an entrypoint that
# does what docker-compose.yml relies on (POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB on
# first start, data in /var/lib/postgresql/data, pg_isready).
ARG BASE
FROM ${BASE}
# No "main" cluster from the package: the entrypoint creates the one in PGDATA.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main-cluster.conf \
 && apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
