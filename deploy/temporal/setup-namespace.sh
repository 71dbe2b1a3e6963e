#!/bin/sh
# Creates the namespace and registers the custom search attributes durable-agent's workflow keeps
# current (src/shared/search-attributes.ts; test/deploy/compose.test.ts checks the two agree), with
# the Temporal CLI. Idempotent: an existing namespace is kept, and creating an attribute that exists
# with the same type succeeds. Run by docker-compose.yml's `temporal-setup` service and by the
# cluster test (scripts/cluster/). The CLI reads its connection from the environment as every
# Temporal client does: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE (default), TEMPORAL_TLS_SERVER_CA_CERT_PATH,
# TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH (mTLS)…
#   TEMPORAL_CLI      the CLI (default: temporal, as in temporalio/admin-tools)
#   NAMESPACE_RETENTION  how long closed runs are kept (default 72h)
set -eu
cli=${TEMPORAL_CLI:-temporal}
namespace=${TEMPORAL_NAMESPACE:-default}
attributes=${DURABLE_AGENT_SEARCH_ATTRIBUTES:-DurableAgentStatus=Keyword DurableAgentIterations=Int DurableAgentCostUsd=Double DurableAgentModel=Keyword DurableAgentForkedFrom=Keyword}
retry() {
  n=0
  until "$@"; do
    n=$((n + 1))
    if [ "$n" -ge 30 ]; then echo "gave up after $n attempts: $*" >&2; return 1; fi
    sleep 2
  done
}
retry "$cli" operator cluster health
ensure_namespace() {
  "$cli" operator namespace describe -n "$namespace" >/dev/null 2>&1 ||
    "$cli" operator namespace create -n "$namespace" --retention "${NAMESPACE_RETENTION:-72h}"
}
retry ensure_namespace
for pair in $attributes; do
  # A fresh namespace takes a few seconds to reach every service: retry until it has.
  retry "$cli" operator search-attribute create -n "$namespace" --name "${pair%%=*}" --type "${pair#*=}"
done
echo "Namespace '$namespace' ready with durable-agent's search attributes"
