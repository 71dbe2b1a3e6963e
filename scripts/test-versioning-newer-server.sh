#!/usr/bin/env bash
# The versioning tests (test/versioning) on a Temporal server newer than the 1.29.1 the CLI embeds, where a
# session's next execution after continue-as-new starts on the deployment's current build (AUTO_UPGRADE).
#
#   npm run test:versioning-newer-server
#
# Builds `go.temporal.io/server/cmd/server` at $SERVER_VERSION once (about 4 minutes on 2 CPUs; that server
# needs Go ≥ 1.26.10, so GOTOOLCHAIN fetches go1.27.3 from the Go module proxy when the machine's Go is
# older), caches it next to the CLI, starts it in memory (SQLite, the module's own development config on
# other ports), registers the `default` namespace, runs the tests against it and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

SERVER_VERSION="${SERVER_VERSION:-v1.32.2}"
PORT="${PORT:-17233}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/durable-agent/temporal-server-$SERVER_VERSION"
SERVER="$CACHE/server"
CLI="${XDG_CACHE_HOME:-$HOME/.cache}/durable-agent/temporal-cli-v1.5.1/temporal"

node scripts/ensure-setup.mjs --quiet --for-tests
if [ ! -x "$SERVER" ]; then
  command -v go >/dev/null || { echo "Go is needed to build the Temporal server: install it (https://go.dev/dl)"; exit 1; }
  echo "== building go.temporal.io/server $SERVER_VERSION into $CACHE"
  mkdir -p "$CACHE"
  GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}" GOBIN="$CACHE" go install "go.temporal.io/server/cmd/server@$SERVER_VERSION"
fi
# `go install` left the module's source (its config files among them) in the module cache.
MODULE_DIR="$(go env GOMODCACHE)/go.temporal.io/server@$SERVER_VERSION"
if [ ! -f "$MODULE_DIR/config/development-sqlite.yaml" ]; then
  GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}" go mod download "go.temporal.io/server@$SERVER_VERSION"
fi

RUN_DIR="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT

# The module's development config (in-memory SQLite), every port moved by 10000 so it runs next to a dev server.
mkdir -p "$RUN_DIR/config/dynamicconfig"
perl -pe 's/((?:grpcPort|membershipPort|httpPort|port): )(\d+)/$1.($2+10000)/e;' \
  -e 's/((?:localhost|127\.0\.0\.1):)(\d+)/$1.($2+10000)/ge; s/level: info/level: warn/' \
  "$MODULE_DIR/config/development-sqlite.yaml" >"$RUN_DIR/config/development-sqlite.yaml"
cp "$MODULE_DIR/config/dynamicconfig/development-sql.yaml" "$RUN_DIR/config/dynamicconfig/"
chmod u+w "$RUN_DIR/config/dynamicconfig/development-sql.yaml"
printf 'system.enableActivityEagerExecution:\n  - value: true\n' >>"$RUN_DIR/config/dynamicconfig/development-sql.yaml"
grep -q "grpcPort: $PORT" "$RUN_DIR/config/development-sqlite.yaml" || { echo "the config's frontend port is not $PORT"; exit 1; }

echo "== Temporal server $SERVER_VERSION on 127.0.0.1:$PORT (log: $RUN_DIR/server.log)"
(cd "$RUN_DIR" && exec "$SERVER" --root "$RUN_DIR" --config config --env development-sqlite --allow-no-auth start) \
  >"$RUN_DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 60); do
  "$CLI" operator namespace create -n default --address "127.0.0.1:$PORT" >/dev/null 2>&1 && break
  sleep 1
done
# A new namespace reaches every service within the namespace cache's refresh (about 10 s).
for _ in $(seq 1 30); do
  "$CLI" workflow list -n default --address "127.0.0.1:$PORT" --limit 1 >/dev/null 2>&1 && break
  sleep 1
done
sleep 10

DA_TEST_EXTERNAL_TEMPORAL_ADDRESS="127.0.0.1:$PORT" npx jest test/versioning "$@"
