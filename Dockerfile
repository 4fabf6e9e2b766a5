# One image per app:
#   docker build --build-arg APP=objects -t ontology-objects .
#   docker build --build-arg APP=object-sets -t ontology-object-sets .
#
# NODE_IMAGE: the official Node 26 image (the Active LTS line) on Debian 13 "trixie", the Debian
# release in regular security support (12 "bookworm" is in LTS since June 2026). Where no
# registry can be reached, scripts/containers/build-standins.sh builds a stand-in from Debian
# packages and the npm registry, and the build takes it with --build-arg NODE_IMAGE=....
ARG NODE_IMAGE=node:26-trixie-slim

# Compiles both apps with the dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
# libs/client is an npm workspace (the client package, docs/sdk.md): npm ci needs its package.json.
COPY package.json package-lock.json ./
COPY libs/client/package.json ./libs/client/
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
# The typed client (libs/client, which the object-sets app calls the objects app with) is typed by
# the types npm run openapi makes beside the OpenAPI documents.
COPY openapi/objects.d.ts openapi/object-sets.d.ts ./openapi/
# npm run build is scripts/build.mjs (it writes the build stamp that npm start reads); it loads
# scripts/lib/build.mjs and scripts/lib/apps.mjs (.dockerignore lets exactly these three in).
COPY scripts/build.mjs ./scripts/
COPY scripts/lib/build.mjs scripts/lib/apps.mjs ./scripts/lib/
RUN npm run build

# The production dependencies alone, installed from the same lock file.
FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /src
COPY package.json package-lock.json ./
COPY libs/client/package.json ./libs/client/
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ARG APP=objects
# The apps listen on 127.0.0.1 unless HOST says otherwise; in a container they must be reachable.
ENV NODE_ENV=production APP=${APP} HOST=0.0.0.0
WORKDIR /app
# Owned by root, run as `node`: the app cannot change its own code or dependencies.
COPY --from=production-dependencies /src/node_modules ./node_modules
COPY --from=build /src/dist/apps/${APP} ./dist/apps/${APP}
COPY docker/healthcheck.js ./
USER node
# 3001: objects (OBJECTS_PORT), 3002: object-sets (OBJECT_SETS_PORT)
EXPOSE 3001 3002
# A slow start (migrations on a large database, a busy machine) is not a failure: checks that
# fail in the first 120 s do not count; the container is healthy at the first that passes.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 CMD ["node", "healthcheck.js"]
CMD ["sh", "-c", "exec node dist/apps/$APP/apps/$APP/src/main.js"]
