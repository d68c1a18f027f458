# Mailpath container image: build the TypeScript in one stage, run the compiled JavaScript with production dependencies only.
# Build: docker build -t mailpath .
# Run:   docker run -p 8443:8443 -p 8080:8080 -v mailpath-data:/data mailpath
# Node 20.19 or later is required (engines in package.json); node:20-slim tracks the newest 20.x.
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    MAILPATH_DATA_DIR=/data
WORKDIR /app
# bcrypt ships prebuilt binaries for linux x64/arm64 (glibc), so no compiler is needed; PGlite is WebAssembly.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Read at run time from the project root, which Mailpath finds by walking up from dist/ to the directory
# holding package.json and shared/: here /app.
COPY config ./config
COPY shared/db/migrations ./shared/db/migrations
# The audit PDF export's embedded fonts (DejaVu Sans, Noto Sans SC) and their licences.
COPY shared/operations/audit/fonts ./shared/operations/audit/fonts
# The data dir holds the embedded database (pgdata/), the generated TLS pair (tls/) and jwt-secret.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME /data
# 8443 HTTPS API, 8080 HTTP→HTTPS redirect, 2525 MX (forward port 25 to it), 2587 submission (STARTTLS), 2465 submission (implicit TLS).
EXPOSE 8443 8080 2525 2587 2465
# node is PID 1 and handles SIGTERM itself (graceful shutdown), so no init wrapper is needed.
CMD ["node", "dist/main/cli.js", "start"]
