# syntax=docker/dockerfile:1
# One image for both processes of a deployment (see docker-compose.yml):
#   API     node src/api-main.ts      (the default command)
#   worker  node src/worker-main.ts
# Node runs our TypeScript directly (type stripping): the only build output
# is the administration screen (dist/admin, by Vite), next to a type check
# before the sources are taken into the image.
# The base is pinned to an exact release; bump it deliberately.

# --- check: every dependency, and a type check of what will be shipped ---
FROM node:24.21.0-bookworm-slim AS check
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
RUN npx tsc --noEmit -p tsconfig.json
# The administration screen (web/): type-checked, then built into dist/admin (served under /admin/).
COPY web ./web
RUN npx tsc --noEmit -p web/tsconfig.json && npm run build:admin

# --- runtime: production dependencies only, run as the unprivileged `node` user ---
FROM node:24.21.0-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# Taken from the check stage, so the image is only built from sources that type-check.
COPY --from=check /app/src ./src
COPY --from=check /app/workflows ./workflows
COPY --from=check /app/dist/admin ./dist/admin
USER node
EXPOSE 8080 8081
# V8 memory settings measured by `npm run bench` (bench/lib/processes.ts, API_NODE_FLAGS).
CMD ["node", "--disable-warning=ExperimentalWarning", "--max-semi-space-size=4", "--max-old-space-size=384", "src/api-main.ts"]
