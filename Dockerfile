# syntax=docker/dockerfile:1
#
# Paygate image: one image for every process. The default command runs the API; docker-compose.yml
# overrides it for the Temporal worker, the jobs worker and the one-shot migration.
#
#   docker build -t paygate .
#   docker run --rm -p 3000:3000 -e JWT_SECRET=... -e DATABASE_URL=... paygate

ARG NODE_IMAGE=node:22-bookworm-slim

# --- build: install everything, compile, then drop dev dependencies -------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app

# Dependencies first so this layer is cached until the lock file changes.
# --ignore-scripts mirrors package.json "allowScripts", which disables every install script the
# dependency tree has (the npm bundled with this image may not read that field).
# Falls back to `npm install` (loudly) if the lock file is out of sync with package.json.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
 || { echo 'WARNING: npm ci failed (package-lock.json out of sync?); falling back to npm install' >&2; \
      npm install --ignore-scripts --no-audit --no-fund; }

COPY . .
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf .tools .data tests/artifacts bench/results \
 && npm cache clean --force

# --- runtime ---------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app

# Compiled code, production node_modules and the non-TypeScript assets the build left in place
# (generated OpenAPI spec, static console files). Owned by root, read-only for the app user.
COPY --from=build /app /app

USER node
EXPOSE 3000
CMD ["node", "dist/api/server.js"]
