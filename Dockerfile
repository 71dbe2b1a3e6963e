# durable-agent worker image: `docker build -t durable-agent .`
# Configured by environment: the Temporal connection as every Temporal client reads it
# (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME,
# TEMPORAL_TLS_CLIENT_CERT_PATH/_KEY_PATH, TEMPORAL_API_KEY, TEMPORAL_PROFILE…), TEMPORAL_TASK_QUEUE,
# DURABLE_AGENT_CODEC_KEYS, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, DURABLE_AGENT_MODEL and the
# worker settings of deploy/worker.env. Tools act in /workspace (a volume). The same image runs
# `codec-server` and makes the deployment's certificates (openssl) in docker-compose.yml.
# Debian-based (not Alpine): the Temporal worker's native core ships glibc builds.

ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: compile TypeScript and bundle the workflow code once ---------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
# Writes dist/ (compiled code) and dist/workflow-bundle.js, which the worker loads instead of
# bundling at start.
RUN npm run build

# --- runtime: production dependencies, compiled code, the CLI entry --------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini reaps the processes that `bash` tool calls leave behind and forwards SIGTERM to the worker;
# git and ripgrep are tools the agent's shell commands (and the grep tool) use; openssl makes the
# deployment's certificates (deploy/tls/make-certs.sh, compose's `certs` service); bubblewrap is bash's
# sandbox (docs/sandbox.md: it needs user namespaces, which Docker's default seccomp profile blocks,
# hence `security_opt` on compose's worker).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini git ripgrep ca-certificates openssl bubblewrap \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin

# The default workspace of runs that name none; mount a volume or a project directory here.
RUN mkdir -p /workspace && chown node:node /workspace
VOLUME /workspace
WORKDIR /workspace
USER node

ENV TEMPORAL_ADDRESS=temporal:7233 \
    TEMPORAL_NAMESPACE=default \
    TEMPORAL_TASK_QUEUE=durable-agent

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "/app/bin/durable-agent.js", "worker"]
