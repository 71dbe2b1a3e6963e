#!/bin/sh
# Creates Temporal's two PostgreSQL databases and applies its schema with the server's schema tool.
# Idempotent: `create` ignores an existing database, `setup-schema -v 0.0` keeps a newer version,
# `update-schema` applies only what is missing. Run by docker-compose.yml's `temporal-schema` service
# and by the cluster test (scripts/cluster/), with the same environment the server's config reads:
#
#   DB_HOST, DB_PORT (5432), DB_USER (temporal), DB_PASSWORD, DB_NAME (temporal),
#   VISIBILITY_DB_NAME (temporal_visibility)
#   SQL_TOOL    the schema tool (default temporal-sql-tool, as in temporalio/admin-tools)
#   SCHEMA_DIR  the server's schema/postgresql/v12 (default: where admin-tools has it)
set -eu
tool=${SQL_TOOL:-temporal-sql-tool}
schema=${SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}
sql() {
  "$tool" --plugin postgres12 --ep "${DB_HOST:?DB_HOST is required}" -p "${DB_PORT:-5432}" \
    -u "${DB_USER:-temporal}" --pw "${DB_PASSWORD:-}" --db "$1" "$2" ${3+"$3"} ${4+"$4"}
}
for pair in "${DB_NAME:-temporal}:temporal" "${VISIBILITY_DB_NAME:-temporal_visibility}:visibility"; do
  db=${pair%%:*}
  dir=${pair#*:}
  sql "$db" create
  sql "$db" setup-schema -v 0.0
  sql "$db" update-schema -d "$schema/$dir/versioned"
done
echo 'Temporal schema ready'
