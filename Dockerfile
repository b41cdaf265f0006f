# syntax=docker/dockerfile:1
#
# Switchboard daemon image.
#   docker build -t switchboard .
#   docker run -p 7337:7337 -v switchboard-data:/data -e SWITCHBOARD_TOKEN=… switchboard
#
# The container listens on 0.0.0.0 so the published port works. Anything that reaches the port
# could list and call every tool, so `serve` refuses a non-loopback host without a token: set
# SWITCHBOARD_TOKEN (or `token` in the config file), or knowingly add `--insecure` to CMD.
# Mount Switchboard's own config at /home/node/.config/switchboard/config.json, or point
# SWITCHBOARD_CONFIG at a mounted file; mount other clients' config directories under
# /home/node (README.md, "Docker", lists them). Node 24 is an LTS line (to April 2028) that
# better-sqlite3 12 ships prebuilt binaries for.

# ---- build: type-check and bundle, and the better-sqlite3 native addon ---------------------
FROM node:24-slim AS build
WORKDIR /app
# better-sqlite3 falls back to a node-gyp build when no prebuilt binary matches.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY ui ./ui
RUN npm run build \
 && npm prune --omit=dev

# ---- runtime: only what `node dist/cli.js` needs, no compilers --------------------------
FROM node:24-slim AS runtime
# tini as PID 1 reaps the orphans that stdio MCP servers (npx/uvx wrappers) leave behind and
# forwards SIGTERM to node, which drains in-flight calls before exiting.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    SWITCHBOARD_HOST=0.0.0.0 \
    SWITCHBOARD_PORT=7337 \
    XDG_STATE_HOME=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json openapi.yaml ./
# The tool cache (XDG_STATE_HOME → /data/switchboard/switchboard.db) must outlive the container.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7337
# No curl in slim images: node's own fetch does the probe.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SWITCHBOARD_PORT || 7337) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/cli.js", "serve"]
